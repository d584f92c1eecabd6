/**
 * `npx tsx bench/profile.ts`: where a weir worker spends its CPU, from V8's sampling profiler.
 *
 * Produces PROFILE_RECORDS records (default 200 000) of PROFILE_BYTES bytes (default 100) to a
 * fresh topic of PROFILE_PARTITIONS partitions (default 6), runs `node --cpu-prof bin/weir.js run bench/passthrough.ts` on it
 * (PROFILE_GUARANTEE at_least_once or exactly_once, PROFILE_THREADS, PROFILE_CLIENT, each passed
 * on as the flag, PROFILE_ARGS: more `weir run` flags, and PROFILE_NODE_ARGS: flags of node itself,
 * such as `--max-semi-space-size=64`), waits until the run is done (bench/sink-progress.ts), stops the worker with
 * SIGTERM and summarises each profile it wrote (one per thread) as self time by area: the
 * Kafka client, weir's own folders, prom-client, pino, Node's core, garbage collection and idle
 * time. Only samples of the timed window count (from the moment every task has started, as
 * bench/run.ts times it, to the end of the run), so start-up (tsx, loading the topology, the
 * group join) is left out. With PROFILE_LOG_LEVEL=debug it
 * also counts, from the worker's debug log, the requests kafkajs retried after the broker
 * answered `CONCURRENT_TRANSACTIONS` (exactly_once), and the time those retries waited.
 *
 * PROFILE_MEMORY=1 also samples the worker's resident set and V8 heap every 250 ms (through its
 * `/metrics` on PROFILE_METRICS_PORT, default 9479) and prints the timeline and the peak;
 * PROFILE_ALLOCATIONS=1 also records where the worker's main thread allocates over the window
 * (bench/allocation-sampler.mjs: V8's sampling heap profiler, collected objects included) and
 * prints the bytes by area and function, per record.
 *
 * Build first (`npm run build`). The profiles stay in PROFILE_DIR (default a temporary folder)
 * to open in Chrome DevTools. PROFILE_REPO profiles another built checkout instead (e.g. a
 * worktree of an older commit, for a before/after).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BROKERS } from '../scripts/lib/broker-instance.js';
import { brokerPid, startBroker } from '../scripts/lib/kafka-broker.js';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { createTopics, produce, quietKafka } from '../scripts/lib/topic-io.js';
import { waitFor } from '../scripts/lib/wait-for.js';
import { cpuSeconds, threadCpuSeconds } from './bench-tools.js';
import { jsonLine, weirTaskIds, weirTasksStarted } from './contestant-process.js';
import { committedOffsetSum, doneCondition, highWatermarkSum } from './sink-progress.js';
import { MemorySampler, summariseAllocations } from './memory-profile.js';

const env = process.env;
const records = Number(env['PROFILE_RECORDS'] ?? 200_000);
const bytes = Number(env['PROFILE_BYTES'] ?? 100);
const guarantee = env['PROFILE_GUARANTEE'] === 'exactly_once' ? 'exactly_once' : 'at_least_once';
const partitions = Number(env['PROFILE_PARTITIONS'] ?? 6);
/** `debug` counts kafkajs' retries after CONCURRENT_TRANSACTIONS (its log lines cost CPU of their own, so not by default). */
const logLevel = env['PROFILE_LOG_LEVEL'] ?? 'info';
// The timed window starts at the workers' `task started` lines, logged at info.
if (!['info', 'debug', 'trace'].includes(logLevel))
  throw new Error(`PROFILE_LOG_LEVEL=${logLevel}: must be info, debug or trace (the run is timed from the info lines 'task started')`);
/** Another checkout of weir to profile (built), e.g. an older commit's worktree for a before/after. */
const weirRoot = env['PROFILE_REPO'] ?? repoRoot;
const brokers = env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
const memory = env['PROFILE_MEMORY'] === '1';
const allocations = env['PROFILE_ALLOCATIONS'] === '1';
const metricsPort = env['PROFILE_METRICS_PORT'] ?? '9479';

/** The space-separated words of an environment variable (none when it is unset). */
function words(value: string | undefined): string[] {
  return (value ?? '').split(' ').filter((w) => w !== '');
}

/** A node of a `.cpuprofile`. */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The area a frame belongs to, by its script URL. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8 and native (program)';
    return `native: ${functionName}`;
  }
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  const weir = /\/dist\/([^/]+)\//.exec(url);
  if (weir) return `weir ${weir[1]}/`;
  if (url.startsWith('node:')) return 'Node core';
  return url.includes('/bench/') ? 'bench topology' : 'other';
}

/** Self time by area of the samples in the last `windowMs` of the profile. */
function summarise(
  profile: CpuProfile,
  windowMs: number,
): { byArea: Map<string, number>; byFunction: Map<string, number>; totalMs: number } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const total = profile.timeDeltas.reduce((sum, d) => sum + d, 0);
  const from = total - windowMs * 1_000;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let at = 0;
  let inWindow = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    // A sample stands for the time until the next one.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    if (at < from) continue;
    const node = nodes.get(profile.samples[i]!);
    if (node === undefined) continue;
    const area = areaOf(node.callFrame);
    byArea.set(area, (byArea.get(area) ?? 0) + delta);
    if (area !== 'idle') {
      const name = `${node.callFrame.functionName || '(anonymous)'} ${path.basename(node.callFrame.url)}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    }
    inWindow += delta;
  }
  return { byArea, byFunction, totalMs: inWindow / 1_000 };
}

function table(entries: Map<string, number>, busyUs: number, limit: number): string {
  return [...entries]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, us]) => `| ${name} | ${(us / 1_000).toFixed(0)} | ${((100 * us) / busyUs).toFixed(1)} % |`)
    .join('\n');
}

async function main(): Promise<void> {
  if (brokers === DEFAULT_BROKERS) await startBroker();
  const localBroker = brokers === DEFAULT_BROKERS ? await brokerPid() : undefined;
  const kafka = quietKafka(brokers, 'weir-profile');
  const admin = kafka.admin();
  await admin.connect();
  const name = `profile-${randomUUID().slice(0, 8)}`;
  const source = `${name}.in`;
  const sink = `${name}.out`;
  await createTopics(admin, [
    { topic: source, partitions },
    { topic: sink, partitions },
  ]);
  console.log(`profile: producing ${records} × ${bytes} B to ${source}`);
  const value = Buffer.alloc(bytes, 'x');
  await produce(
    kafka,
    source,
    Array.from({ length: records }, (_, n) => ({ key: `key-${n}`, value })),
    5_000,
  );
  const inputs = await highWatermarkSum(admin, source);
  const given = env['PROFILE_DIR'];
  const dir = given ?? (await mkdtemp(path.join(os.tmpdir(), 'weir-profile-')));
  if (given !== undefined) await mkdir(given, { recursive: true });
  const flags = [
    ...['--application-id', name, '--brokers', brokers, '--guarantee', guarantee],
    ...['--commit-interval-ms', guarantee === 'exactly_once' ? '100' : '1000'],
    ...(env['PROFILE_THREADS'] ? ['--threads', env['PROFILE_THREADS']] : []),
    ...(env['PROFILE_CLIENT'] ? ['--client', env['PROFILE_CLIENT']] : []),
    ...words(env['PROFILE_ARGS']),
    ...(memory ? ['--metrics-port', metricsPort] : []),
  ];
  // A reused PROFILE_DIR: only the CPU profiles this run writes are summarised.
  const earlierProfiles = new Set(await readdir(dir));
  const allocationFile = path.join(dir, 'allocations.heapprofile');
  await rm(allocationFile, { force: true });
  const child = spawn(
    process.execPath,
    [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      ...words(env['PROFILE_NODE_ARGS']),
      ...(allocations ? ['--import', path.join(repoRoot, 'bench', 'allocation-sampler.mjs')] : []),
      path.join(weirRoot, 'bin', 'weir.js'),
      'run',
      'bench/passthrough.ts',
      ...flags,
    ],
    {
      cwd: weirRoot,
      // PROFILE_LOG_LEVEL=debug: kafkajs' retry lines are counted below.
      env: {
        ...env,
        BENCH_SOURCE: source,
        BENCH_SINK: sink,
        WEIR_LOG_LEVEL: logLevel,
        ...(allocations ? { ALLOCATION_PROFILE_PATH: allocationFile } : {}),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // kafkajs retries a produce or transaction request that failed with CONCURRENT_TRANSACTIONS
  // (the previous transaction of the same id is still completing) after `retryTime` ms.
  const concurrent = { retries: 0, waitMs: 0 };
  let isStarted = false;
  const tasksStarted = weirTasksStarted(weirTaskIds(source, partitions));
  const started = new Promise<void>((resolve) => {
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        // The worker's warnings and errors (pino levels 40–60): a run that fails or stalls says why.
        if (/"level":[456]0,/.test(line)) console.error(`profile: worker: ${line}`);
        if (!isStarted && tasksStarted(jsonLine(line))) {
          isStarted = true;
          resolve();
        }
        if (isStarted && line.includes('concurrent operation on the same transaction')) {
          concurrent.retries++;
          concurrent.waitMs += Number((JSON.parse(line) as { retryTime?: number }).retryTime ?? 0);
        }
      }
    });
  });
  // The worker never outlives this script: not on a failed or timed-out run, nor when it is stopped.
  const stopWorker = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.once('exit', stopWorker);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      stopWorker();
      process.exit(1);
    });
  const exitedEarly = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`profile: the worker exited (${signal ?? code}) before the run was done`))),
  );
  exitedEarly.catch(() => undefined);
  await Promise.race([started, exitedEarly]);
  const t0 = performance.now();
  const cpu0 = cpuSeconds(child.pid!);
  const brokerCpu0 = localBroker === undefined ? 0 : cpuSeconds(localBroker);
  const threads0 = threadCpuSeconds(child.pid!);
  // The sampler's first SIGUSR2 starts it, the second writes what it sampled.
  if (allocations) child.kill('SIGUSR2');
  const sampler = memory ? new MemorySampler(child.pid!, `http://127.0.0.1:${metricsPort}/metrics`) : undefined;
  const done = doneCondition(admin, guarantee, { source, sink, group: name }, inputs);
  const progress = async (): Promise<string> =>
    `profile: the run did not finish in 600 s (${await committedOffsetSum(admin, name, source).catch(() => '?')} of ${inputs} input offsets committed)`;
  // Polled every 50 ms (the window's end is when the run is seen done); the progress a timeout
  // names is read every 5 s.
  let lastProgress = 'profile: the run did not finish';
  let progressAt = performance.now();
  await Promise.race([
    waitFor(
      async () => {
        const finished = await done();
        if (!finished && performance.now() - progressAt >= 5_000) {
          progressAt = performance.now();
          lastProgress = await progress();
        }
        return finished;
      },
      600_000,
      () => lastProgress,
      50,
    ),
    exitedEarly,
  ]);
  const seconds = (performance.now() - t0) / 1_000;
  const cpu = cpuSeconds(child.pid!) - cpu0;
  const brokerCpu = localBroker === undefined ? undefined : cpuSeconds(localBroker) - brokerCpu0;
  const threads1 = threadCpuSeconds(child.pid!);
  const perRecord = (kind: keyof typeof threads1): string => (((threads1[kind] - threads0[kind]) * 1e6) / inputs).toFixed(1);
  const memoryTimeline = sampler?.stop();
  if (allocations) {
    child.kill('SIGUSR2');
    await waitFor(
      async () => (await readFile(allocationFile).catch(() => undefined)) !== undefined,
      30_000,
      () => 'no allocation profile',
    );
  }
  const stoppedAt = performance.now();
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  const windowMs = seconds * 1_000 + (performance.now() - stoppedAt);
  console.log(
    `profile: ${guarantee} ${flags.join(' ')}, ${partitions} partitions: ${Math.round(inputs / seconds)} records/s, ${((cpu * 1e6) / inputs).toFixed(1)} µs CPU/record (process)${brokerCpu === undefined ? '' : `, broker ${((brokerCpu * 1e6) / inputs).toFixed(1)} µs/record`}, window ${seconds.toFixed(1)} s; profiles in ${dir}`,
  );
  console.log(
    `profile: CPU µs/record by thread: main ${perRecord('main')}, other Node.js threads (V8's GC and compiler workers, libuv's pool) ${perRecord('other')}, librdkafka ${perRecord('librdkafka')}`,
  );
  if (logLevel === 'debug')
    console.log(
      `profile: kafkajs retried ${concurrent.retries} request(s) after CONCURRENT_TRANSACTIONS, waiting ${(concurrent.waitMs / 1_000).toFixed(1)} s in all`,
    );
  if (memoryTimeline !== undefined) console.log(`\nmemory over the window:\n${memoryTimeline}`);
  if (allocations) {
    const threads = env['PROFILE_THREADS'] ? ' (the main thread only: not the stream threads of --threads)' : '';
    console.log(`\n${await summariseAllocations(allocationFile, inputs, areaOf)}${threads}`);
  }
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile') && !earlierProfiles.has(f)).sort()) {
    const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as CpuProfile;
    const { byArea, byFunction, totalMs } = summarise(profile, windowMs);
    const busy = totalMs * 1_000 - (byArea.get('idle') ?? 0);
    console.log(
      `\n${file}: ${totalMs.toFixed(0)} ms sampled, ${(busy / 1_000).toFixed(0)} ms busy (${((busy * 1_000) / inputs / 1_000).toFixed(1)} µs/record)\n`,
    );
    console.log(`| area | self ms | of busy |\n|---|---|---|\n${table(new Map([...byArea].filter(([a]) => a !== 'idle')), busy, 20)}`);
    console.log(`\n| function | self ms | of busy |\n|---|---|---|\n${table(byFunction, busy, 25)}`);
  }
  await admin.deleteGroups([name]).catch(() => undefined);
  await admin.deleteTopics({ topics: (await admin.listTopics()).filter((t) => t.startsWith(`${name}.`)) }).catch(() => undefined);
  await admin.disconnect();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`profile: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
