/**
 * `npm run bench`: weir against Kafka Streams 4.4 and a hand-written kafkajs loop, on the same
 * broker and the same input topics, in one run.
 *
 * For each workload (bench/workloads.ts: 100 B and 1 KiB records over 6 partitions,
 * exactly_once at 24 and 96 partitions, and two chained steps against two steps joined by a
 * topic on each client) it produces
 * BENCH_RECORDS records (default 200 000) to one input topic, then runs every contestant
 * (bench/contestants.ts) BENCH_REPS times (default 3), interleaved: each repetition runs every
 * workload's contestants once, in an order rotated per repetition. Every run is its own process
 * with its own consumer group and sink topic, timed from its "started" line (it has joined its
 * group) until the run is done (bench/sink-progress.ts). It prints, per workload, records/s,
 * CPU µs per record (user + system time of the process over the timed window) and peak RSS
 * (VmHWM) as median (min–max), and their per-repetition ratios to the workload's baseline
 * (Kafka Streams at_least_once with 1 thread; for the scaling tables Kafka Streams
 * exactly_once_v2), and under the 6-partition tables the exactly_once rows' ratios to Kafka
 * Streams exactly_once_v2; contestants this machine or this weir build cannot run are "skipped: <reason>".
 * The tables go into bench/README.md with the date and the machine.
 *
 * Environment: BENCH_RECORDS, BENCH_REPS, BENCH_ONLY (comma-separated words; runs the
 * contestants whose id contains one, e.g. `kstreams-alos-1t,weir-alos`; README not written),
 * BENCH_WORKLOADS (workload ids, e.g. `passthrough-100b`), BENCH_VERIFY=0 (skip the
 * read_committed count of exactly_once sinks), BENCH_WRITE=0 (do not touch the README),
 * BENCH_RUN_TIMEOUT_MS, KAFKA_BROKERS.
 *
 * BENCH_BASELINE=<git rev> (e.g. `HEAD~1`) also runs weir as built at that commit: bench/baseline.ts
 * puts its tree in the git-ignored `.bench-baseline/<short id>/`, links this checkout's
 * node_modules into it when its package-lock.json is the same, and builds it. Every weir row then
 * gets a twin right after it, `weir@<short id> …` (id `<row id>-<short id>`, e.g.
 * `weir-alos-1t-e047b3a`), rotated with the others in every repetition, and each table is
 * followed by one of the per-repetition ratios now / baseline. When it cannot be installed or
 * built its rows say `skipped: <reason>`. With BENCH_ONLY=weir only weir rows run, both builds'.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Kafka } from 'kafkajs';
import { DEFAULT_BROKERS } from '../scripts/lib/broker-instance.js';
import { brokerPid, startBroker } from '../scripts/lib/kafka-broker.js';
import { createTopics, produce, quietKafka } from '../scripts/lib/topic-io.js';
import { prepareBaseline } from './baseline.js';
import { machineDescription, writeBenchSection } from './bench-tools.js';
import { WEIR_HEAP_LIMIT_MIB, type Contestant, type Prerequisites } from './contestants.js';
import { buildKafkaStreams, KAFKA_STREAMS_HEAP } from './kafka-streams.js';
import { renderBaselineTable, renderTable, renderVersusTable, type RowResult, type RunOutcome } from './report.js';
import { runOnce } from './run-once.js';
import { highWatermarkSum } from './sink-progress.js';
import { weirFeatures } from './weir-features.js';
import { WORKLOADS, type Workload } from './workloads.js';

const env = process.env;
const records = Number(env['BENCH_RECORDS'] ?? 200_000);
const reps = Number(env['BENCH_REPS'] ?? 3);
const only = env['BENCH_ONLY']
  ?.split(',')
  .map((w) => w.trim())
  .filter((w) => w !== '');
const workloadIds = env['BENCH_WORKLOADS']?.split(',').map((w) => w.trim());
const verify = env['BENCH_VERIFY'] !== '0';
const write = env['BENCH_WRITE'] !== '0' && only === undefined;
const runTimeoutMs = Number(env['BENCH_RUN_TIMEOUT_MS'] ?? 60_000 + records);
const brokers = env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
const baselineRev = env['BENCH_BASELINE']?.trim() || undefined;

const selected = (c: Contestant): boolean => only === undefined || only.some((word) => c.id.includes(word));

/** `items` rotated left by `by`. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function prepareInput(kafka: Kafka, workload: Workload, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopics(admin, [{ topic, partitions: workload.partitions }]);
    console.log(`bench: producing ${records} × ${workload.recordBytes} B to ${topic}`);
    const value = Buffer.alloc(workload.recordBytes, 'x');
    await produce(
      kafka,
      topic,
      Array.from({ length: records }, (_, n) => ({ key: `key-${n}`, value })),
      5_000,
    );
    return await highWatermarkSum(admin, topic);
  } finally {
    await admin.disconnect();
  }
}

function describe(outcome: RunOutcome): string {
  if (!outcome.ok) return `failed: ${outcome.error.split('\n')[0]}`;
  const { m } = outcome;
  const sink = outcome.sinkRecords === undefined ? '' : `, sink ${outcome.sinkRecords}`;
  const broker = m.brokerCpuMicrosPerRecord === undefined ? '' : ` + broker ${m.brokerCpuMicrosPerRecord.toFixed(1)}`;
  const t = m.threadCpuMicrosPerRecord;
  const threads = `main thread ${t.main.toFixed(1)}, other threads ${t.other.toFixed(1)}, librdkafka ${t.librdkafka.toFixed(1)}`;
  return `${Math.round(m.recordsPerSecond)} records/s, ${m.cpuMicrosPerRecord.toFixed(1)}${broker} µs CPU/record (${threads}), ${Math.round(m.peakRssBytes / 2 ** 20)} MB peak RSS (${m.seconds.toFixed(1)} s${sink})`;
}

async function main(): Promise<void> {
  const began = Date.now();
  const loadAtStart = os.loadavg()[0]!;
  if (brokers === DEFAULT_BROKERS) await startBroker();
  const localBroker = brokers === DEFAULT_BROKERS ? await brokerPid() : undefined;
  const kafka = quietKafka(brokers, 'weir-bench');
  const run = randomUUID().slice(0, 8);
  const workloads = WORKLOADS.filter((w) => workloadIds === undefined || workloadIds.includes(w.id));

  console.log('bench: checking weir run --help and building bench/kafka-streams (mvn) if needed');
  const baseline = baselineRev === undefined ? undefined : await prepareBaseline(baselineRev);
  const prerequisites: Prerequisites = { weir: await weirFeatures(), baseline: baseline?.weir, kafkaStreams: await buildKafkaStreams() };
  const ks = prerequisites.kafkaStreams;
  console.log(
    ks.ok ? `bench: Kafka Streams pass-through ${ks.built ? 'built' : 'up to date'}` : `bench: Kafka Streams unavailable: ${ks.reason}`,
  );
  // Each workload's contestants, every weir row followed by its twin at the baseline commit.
  const lineups = new Map(
    workloads.map((w) => [
      w.id,
      w.contestants.flatMap((c) => (baseline !== undefined && c.atBaseline ? [c, c.atBaseline(baseline.rev)] : [c])).filter(selected),
    ]),
  );

  const rows = new Map<string, Map<string, RowResult>>();
  const outcomes = new Map<string, RunOutcome[]>();
  const inputs = new Map<string, { topic: string; records: number }>();
  for (const workload of workloads) {
    const row = new Map<string, RowResult>();
    for (const contestant of lineups.get(workload.id)!) {
      const reason = contestant.skipReason(prerequisites);
      if (reason !== undefined) {
        row.set(contestant.id, { contestant, skipped: reason });
        console.log(`bench: ${workload.id}: ${contestant.name}: skipped: ${reason}`);
      } else {
        const runs: RunOutcome[] = [];
        outcomes.set(`${workload.id}/${contestant.id}`, runs);
        row.set(contestant.id, { contestant, runs });
      }
    }
    rows.set(workload.id, row);
    const topic = `bench-${run}-${workload.id}.in`;
    inputs.set(workload.id, { topic, records: await prepareInput(kafka, workload, topic) });
  }

  for (let rep = 0; rep < reps; rep++) {
    for (const workload of workloads) {
      const input = inputs.get(workload.id)!;
      const runnable = lineups.get(workload.id)!.filter((c) => outcomes.has(`${workload.id}/${c.id}`));
      for (const contestant of rotate(runnable, Math.floor((rep * runnable.length) / reps))) {
        const outcome = await runOnce(kafka, contestant, prerequisites, {
          brokers,
          source: input.topic,
          partitions: workload.partitions,
          records: input.records,
          name: `bench-${run}-${workload.id}-${contestant.id}-r${rep + 1}`,
          rep,
          verify,
          timeoutMs: runTimeoutMs,
          ...(localBroker === undefined ? {} : { brokerPid: localBroker }),
        });
        outcomes.get(`${workload.id}/${contestant.id}`)!.push(outcome);
        console.log(`bench: [${rep + 1}/${reps}] ${workload.title}: ${contestant.name}: ${describe(outcome)}`);
      }
    }
  }

  const load = `1-minute load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end`;
  for (const workload of workloads) {
    const input = inputs.get(workload.id)!;
    const results = [...rows.get(workload.id)!.values()];
    const versus = baseline === undefined ? '' : renderBaselineTable(results, baseline.rev);
    const second = workload.versus === undefined ? '' : renderVersusTable(results, workload.versus);
    const table = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; Kafka broker on the same machine, shared with other work (${load}).`,
      `${input.records} records of ${workload.recordBytes} B over ${workload.partitions} partitions; ${reps} repetition(s), interleaved, order rotated per repetition; median (min–max). Kafka Streams 4.4.0 JVM with -Xmx${KAFKA_STREAMS_HEAP}; weir with node --max-old-space-size=${WEIR_HEAP_LIMIT_MIB}.`,
      ...(baseline === undefined ? [] : [`weir@${baseline.rev}: weir as built at commit ${baseline.rev} (${baseline.subject}).`]),
      '',
      renderTable(results, input.records, workload.baseline),
      ...(second === ''
        ? []
        : ['', `The same run's rows of that guarantee against ${workload.versus!.label}, per repetition:`, '', second]),
      ...(versus === '' ? [] : ['', `weir now against weir@${baseline!.rev}, per repetition:`, '', versus]),
    ].join('\n');
    console.log(`\n### ${workload.title}\n\n${table}\n`);
    if (write) writeBenchSection(workload.id, table);
  }

  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [...inputs.values()].map((i) => i.topic) }).catch(() => undefined);
  await admin.disconnect();
  console.log(`bench: done in ${((Date.now() - began) / 60_000).toFixed(1)} min`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
