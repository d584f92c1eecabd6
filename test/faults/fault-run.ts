/**
 * One run of the fault campaign: a fresh application on the round's broker (and, with dedup, a
 * Redis of its own), workers `a` and `b` of the scripted topology, input topped up so that work
 * is always left, the plan's faults one after another — each on live work: the committed offset
 * moved since the previous fault (it recovered) and input is left — then everything consumed,
 * the workers stopped, and sink, DLQ and retry tiers read to the end (read_committed) and checked.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../scripts/lib/free-port.js';
import { ensureRedis, redisDataDir, stopRedis } from '../../scripts/lib/redis-server.js';
import { produce, readTopics, readToEnd, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { readTopicNow } from '../../scripts/lib/read-topic-now.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { WorkerLogLine, WorkerProcess } from '../../scripts/lib/worker-process.js';
import { seededRandom } from '../../src/testing/seeded-random.js';
import type { Script } from '../integration/fixtures/scripted-topology.js';
import { CommitProgress } from '../integration/support/commit-progress.js';
import type { IntegrationFixture } from '../integration/support/integration-fixture.js';
import { createTopicsOnRestartedBroker } from '../integration/support/own-broker.js';
import { ScriptedInput, scriptMessages } from '../integration/support/scripted-input.js';
import { configName, describeCampaignFault, MAX_ATTEMPTS, PARTITIONS, type CampaignFault, type RunPlan } from './fault-plan.js';
import { checkRun, logTime, type RunResult } from './fault-report.js';
import { RunWorkers } from './run-workers.js';

/** Input produced up front, and topped up by a chunk whenever the lag falls below the low-water mark. */
const INITIAL_INPUT = 1_500;
const TOP_UP = 1_000;
const LOW_WATER = 1_000;
/** Every this many records a `crash` record, in runs whose schedule has a thread crash. */
const CRASH_EVERY = 50;

/** What a run shares with the other runs of its round. */
export interface RoundContext {
  readonly fx: IntegrationFixture;
  /** The profile's name, for the replay command. */
  readonly profile: string;
  /** The round's broker restart: waits for the round's other runs, then SIGKILLs and restarts the broker; resolves with the lag `probe` returned just before the kill. */
  brokerRestart(probe: () => Promise<number | undefined>): Promise<number | undefined>;
  /** This run will not come to the broker restart (it failed before). */
  leaveBrokerRestart(): void;
  /** True while the broker is down (the input top-up pauses). */
  brokerDown(): boolean;
  /** Registers how to describe the run while it is under way (for a round that overruns); returns the unregister. */
  watch(describe: () => string): () => void;
}

/** A fault as it was injected: when (epoch ms), and the committed input and lag at that moment. */
export interface InjectedFault {
  readonly fault: CampaignFault;
  readonly atMs: number;
  readonly committed: number;
  readonly lag: number | undefined;
}

/** Runs `plan`; never throws for what the run finds (it is in the result's violations). */
export async function runPlan(plan: RunPlan, ctx: RoundContext): Promise<RunResult> {
  const { fx } = ctx;
  const { client, guarantee, dedup } = plan.config;
  const id = `wf-${client === 'kafkajs' ? 'kjs' : 'rdk'}-${guarantee === 'exactly_once' ? 'eos' : 'alos'}-${dedup ? 'dd' : 'nd'}-${randomBytes(3).toString('hex')}`;
  const tiers = plan.retryMode === 'topics' ? Array.from({ length: MAX_ATTEMPTS - 1 }, (_, n) => `${id}.scripted.retry.${n}`) : [];
  const topics = { source: `${id}.in`, sink: `${id}.out`, dlq: `${id}.dlq`, tiers };
  const began = Date.now();
  const violations: string[] = [];
  const redisUrl = dedup ? `redis://127.0.0.1:${await freePort()}` : undefined;
  if (redisUrl) await ensureRedis(redisUrl, { persistent: true });
  const marker = path.join(fx.tempDir(), 'crashed');
  await writeFile(marker, ''); // present: crash records succeed; removed: the next one crashes its thread
  await createTopicsOnRestartedBroker(fx.kafka, [{ topic: topics.source, partitions: PARTITIONS }]);
  const input = new ScriptedInput(seededRandom(plan.seed + 7_919), plan.threads > 1 ? { crashEvery: CRASH_EVERY } : {});
  await produce(fx.kafka, topics.source, scriptMessages(input.next(INITIAL_INPUT)));

  const progress = new CommitProgress(fx.admin, id, topics.source, began);
  const workers = new RunWorkers({
    fx,
    plan,
    applicationId: id,
    topics,
    redisUrl,
    crashMarker: marker,
    violations,
    since: () => progress.since(),
    brokerDown: () => ctx.brokerDown(),
    note: (what) => void progress.note(what),
  });
  const runName = `${plan.seed}-${configName(plan.config).replaceAll('/', '-')}`;
  // A run still under way when the round overran is described, and its workers' logs kept.
  const unwatch = ctx.watch(
    () => `${describeRunNow(configName(plan.config), id, progress, workers)}; worker logs: ${keepWorkerLogs(runName, workers.every)}`,
  );
  let feeding = true;
  const feeder = (async () => {
    while (feeding) {
      await sleep(500);
      if (ctx.brokerDown()) continue;
      const lag = await progress.lag();
      // A failed produce (the broker restarting) may have written its records or not: the
      // checker reads the input back from the source topic.
      if (lag !== undefined && lag < LOW_WATER)
        await produce(fx.kafka, topics.source, scriptMessages(input.next(TOP_UP))).catch(() => undefined);
    }
  })();

  const injected: InjectedFault[] = [];
  let arrivedAtBroker = false;
  const inject = async (fault: CampaignFault): Promise<number | undefined> => {
    switch (fault.kind) {
      case 'sigkill':
      case 'sigterm':
        await workers.taskStarted(fault.worker); // live: a worker just restarted may still be loading
        await workers.stop(fault.worker, fault.kind === 'sigkill' ? 'SIGKILL' : 'SIGTERM');
        workers.start(fault.worker);
        return undefined;
      case 'zombie': {
        await workers.taskStarted(fault.worker);
        const worker = workers.get(fault.worker);
        worker.child.kill('SIGSTOP');
        await sleep(fault.stopMs);
        worker.child.kill('SIGCONT');
        return undefined;
      }
      case 'broker-restart':
        arrivedAtBroker = true;
        return ctx.brokerRestart(() => progress.lag());
      case 'redis-restart':
        if (redisUrl === undefined) throw new Error('a Redis restart in a run without dedup (no Redis of its own)');
        await stopRedis(redisUrl, { hard: true });
        await sleep(fault.downMs);
        await ensureRedis(redisUrl, { persistent: true });
        return undefined;
      case 'thread-crash': {
        const armedAt = Date.now();
        await rm(marker);
        const crashed = (l: WorkerLogLine) => l.msg === 'stream thread ended; replacing it' && logTime(l) >= armedAt;
        await Promise.any(workers.running().map((w) => w.waitForLog(crashed, 120_000)));
        return undefined;
      }
      case 'rebalance':
        workers.start('c');
        await workers.taskStarted('c');
        await sleep(fault.stayMs);
        await workers.stop('c', 'SIGTERM');
        return undefined;
    }
  };

  try {
    workers.start('a');
    workers.start('b');
    await Promise.all([workers.taskStarted('a'), workers.taskStarted('b')]);
    await progress.note('workers a and b running');
    let previous = 0;
    for (const [i, step] of plan.faults.entries()) {
      await sleep(step.gapMs);
      const what = `#${i + 1} ${describeCampaignFault(step.fault)}`;
      // Live work: the committed offset moved since the previous fault, and input is left.
      const live = await waitFor(
        async () => {
          const committed = await progress.committed();
          const lag = await progress.lag();
          return committed !== undefined && lag !== undefined && lag > 0 && committed > previous ? { lag, committed } : undefined;
        },
        180_000,
        () => `${what}: the committed offset did not move past ${previous} within 180 s (no recovery from the previous fault)`,
      );
      const atMs = Date.now();
      const lagAtBrokerKill = await inject(step.fault);
      const lag = step.fault.kind === 'broker-restart' ? lagAtBrokerKill : live.lag;
      injected.push({ fault: step.fault, atMs, committed: live.committed, lag });
      if (lag === undefined || lag <= 0) violations.push(`${what}: not on live work (lag ${lag})`);
      await progress.note(`${what} (lag ${lag ?? '?'} at ${progress.since(atMs)})`);
      previous = live.committed;
    }
  } catch (error) {
    violations.push(`fault phase failed at ${progress.since()}: ${(error as Error).message.split('\n')[0]}`);
  } finally {
    if (!arrivedAtBroker && plan.faults.some((f) => f.fault.kind === 'broker-restart')) ctx.leaveBrokerRestart();
    feeding = false;
    await feeder;
  }

  const scripts: Script[] = [];
  const sourceRecords: ReadRecord[] = [];
  let records: ReadRecord[] = [];
  try {
    // Everything consumed: the source by its committed offsets, the retry tiers by their outcomes.
    const caughtUp = await afterBrokerRestart(ctx, () => waitForGroupCaughtUp(fx.kafka, id, [topics.source], 300_000));
    if (!caughtUp) violations.push('input not consumed within 300 s');
    await progress.note('input consumed');
    sourceRecords.push(...(await afterBrokerRestart(ctx, () => readTopicNow(fx.kafka, fx.admin, topics.source, { timeoutMs: 120_000 }))));
    scripts.push(...sourceRecords.map((r) => JSON.parse(r.value!.toString()) as Script));
    await waitForOutcomes(fx, [topics.sink, topics.dlq], scripts, dedup);
    workers.finish();
    await Promise.all(workers.names().map((name) => workers.stop(name, 'SIGTERM')));
    await progress.note('workers stopped');
    records = await afterBrokerRestart(ctx, () => readToEnd(fx.kafka, [topics.sink, topics.dlq, ...topics.tiers], { timeoutMs: 120_000 }));
  } catch (error) {
    violations.push(`final read failed: ${(error as Error).name}: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`);
  } finally {
    unwatch();
    workers.finish();
    if (redisUrl) {
      await stopRedis(redisUrl, { hard: true });
      await rm(redisDataDir(redisUrl), { recursive: true, force: true });
      await rm(`${redisDataDir(redisUrl)}.log`, { force: true });
    }
  }
  const result = checkRun(
    { plan, id, tiers: tiers.length, injected, violations, scripts, sourceRecords, records, progress, workers: workers.every },
    ctx.profile,
  );
  if (result.violations.length === 0) return result;
  const kept = keepWorkerLogs(runName, workers.every);
  return { ...result, lines: [...result.lines, `[faults] seed ${plan.seed} ${configName(plan.config)} worker logs: ${kept}`] };
}

/**
 * Writes each worker's whole output (JSON log lines, then other output) to
 * `<tmpdir>/weir-faults/<run>/worker-<pid>.log`, for a failing or overrunning run to be read in full.
 *
 * @returns the directory
 */
function keepWorkerLogs(run: string, all: readonly WorkerProcess[]): string {
  const dir = path.join(os.tmpdir(), 'weir-faults', run);
  mkdirSync(dir, { recursive: true });
  for (const w of all) {
    const text = [...w.logs.map((l) => JSON.stringify(l)), ...w.otherOutput].join('\n');
    writeFileSync(path.join(dir, `worker-${w.child.pid}.log`), `${text}\n`);
  }
  return dir;
}

/**
 * `<config> <application.id>: last event "<event>"; worker <name> pid <pid> <alive|exited>, last
 * lines: …` — where a run is, for a round that overran its time.
 */
function describeRunNow(config: string, id: string, progress: CommitProgress, workers: RunWorkers): string {
  const each = workers.names().map((name) => {
    const w = workers.get(name);
    const alive = w.child.exitCode === null && w.child.signalCode === null;
    const last = w.logs.slice(-3).map((l) => `${l['time'] ?? ''} ${l.msg}`);
    return `worker ${name} pid ${w.child.pid} ${alive ? 'alive' : 'exited'}, last lines ${JSON.stringify(last)}`;
  });
  return `${config} ${id}: last event "${progress.events.at(-1) ?? 'none'}"; ${each.join('; ')}`;
}

/** Waits (up to 120 s) until sink + DLQ hold every input id as often as expected (retry tiers drained). */
async function waitForOutcomes(
  fx: IntegrationFixture,
  topics: readonly string[],
  scripts: readonly Script[],
  dedup: boolean,
): Promise<void> {
  const wanted = new Map<string, number>();
  for (const s of scripts) wanted.set(s.id, dedup ? 1 : (wanted.get(s.id) ?? 0) + 1);
  let seen = 0;
  await readTopics(fx.kafka, topics, {
    timeoutMs: 120_000,
    until: (records) => {
      for (; seen < records.length; seen++) {
        const { id } = JSON.parse(records[seen]!.value!.toString()) as Script;
        const left = wanted.get(id);
        if (left === undefined) continue;
        if (left <= 1) wanted.delete(id);
        else wanted.set(id, left - 1);
      }
      return wanted.size === 0;
    },
  });
}

/**
 * Runs `fn` (a read of the campaign's broker) once the broker is up, trying again up to 6 times,
 * 10 s apart: a run that ended early reads while the round's broker restarts, and a broker that
 * was SIGKILLed may still be recovering partitions (NOT_LEADER_OR_FOLLOWER). readToEnd tried
 * again is harmless: the seals of a failed attempt follow every record the stopped workers wrote.
 */
async function afterBrokerRestart<T>(ctx: RoundContext, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      await waitFor(
        () => !ctx.brokerDown(),
        600_000,
        () => 'the broker is down',
      );
      return await fn();
    } catch (error) {
      if (attempt >= 6) throw error;
      await sleep(10_000);
    }
  }
}
