/**
 * The cost of the delivery guarantees: one pass-through workload (bench/passthrough.ts, buffer
 * serdes) run in one go under four settings, each by its own `weir run` process on the same
 * input topic (its own consumer group and sink):
 * - exactly_once, commit interval 100 ms (Kafka Streams' default);
 * - exactly_once, commit interval 1000 ms;
 * - at_least_once with Redis dedup (keyed by the record key);
 * - at_least_once: the baseline.
 *
 * Each run is timed from the moment every task of the worker has started (its "task started"
 * lines, see {@link weirTasksStarted}) until its group has committed every input record (under
 * exactly_once the commit is the transaction's). Prints records/s, the ratio to the baseline and
 * CPU µs per record, and writes the table into bench/README.md between the
 * `bench:guarantees` markers when they are there.
 *
 * Run: `npm run build && npx tsx bench/guarantees.ts`. Environment: BENCH_RECORDS (default
 * 100 000), BENCH_PARTITIONS (6), BENCH_RECORD_BYTES (100), KAFKA_BROKERS, REDIS_URL.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { DEFAULT_BROKERS } from '../scripts/lib/broker-instance.js';
import { deleteDedupKeys } from '../scripts/lib/dedup-keys.js';
import { startBroker } from '../scripts/lib/kafka-broker.js';
import { DEFAULT_REDIS_URL, ensureRedis } from '../scripts/lib/redis-server.js';
import { createTopics, produce, quietKafka } from '../scripts/lib/topic-io.js';
import { startWorker } from '../scripts/lib/worker-process.js';
import { machineDescription, timeRun, writeBenchSection, type Measurement } from './bench-tools.js';
import { weirTaskIds, weirTasksStarted } from './contestant-process.js';

const records = Number(process.env['BENCH_RECORDS'] ?? 100_000);
const partitions = Number(process.env['BENCH_PARTITIONS'] ?? 6);
const recordBytes = Number(process.env['BENCH_RECORD_BYTES'] ?? 100);
const brokers = process.env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
const redisUrl = process.env['REDIS_URL'] ?? DEFAULT_REDIS_URL;

/** One setting of the benchmark. */
interface Setting {
  readonly name: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly baseline?: boolean;
}

const SETTINGS: readonly Setting[] = [
  { name: 'exactly_once, commit 100 ms', args: ['--guarantee', 'exactly_once', '--commit-interval-ms', '100'], env: {} },
  { name: 'exactly_once, commit 1000 ms', args: ['--guarantee', 'exactly_once', '--commit-interval-ms', '1000'], env: {} },
  { name: 'at_least_once + Redis dedup', args: ['--guarantee', 'at_least_once'], env: { BENCH_DEDUP: '1' } },
  { name: 'at_least_once (baseline)', args: ['--guarantee', 'at_least_once'], env: {}, baseline: true },
];

/** Input records the group `groupId` has committed on `topic`. */
async function committedRecords(kafka: Kafka, groupId: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

async function measure(kafka: Kafka, source: string, setting: Setting, id: string): Promise<Measurement> {
  const worker = startWorker('bench/passthrough.ts', {
    args: ['--application-id', id, '--brokers', brokers, '--redis-url', redisUrl, '--log-level', 'info', ...setting.args],
    env: { BENCH_SOURCE: source, BENCH_SINK: `${id}.out`, ...setting.env },
  });
  try {
    await worker.waitForLog(weirTasksStarted(weirTaskIds(source, partitions)), 60_000);
    return await timeRun(worker.child, records, async () => (await committedRecords(kafka, id, source)) >= records, setting.name);
  } finally {
    await worker.stop('SIGTERM');
  }
}

async function main(): Promise<void> {
  if (brokers === DEFAULT_BROKERS) await startBroker();
  await ensureRedis(redisUrl);
  const kafka = quietKafka(brokers, 'weir-bench-guarantees');
  const run = randomUUID().slice(0, 8);
  const source = `bench-guarantees-${run}.in`;
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: source, partitions }]);
  await admin.disconnect();
  console.log(`bench guarantees: producing ${records} × ${recordBytes} B to ${source} (${partitions} partitions, broker ${brokers})`);
  const value = Buffer.alloc(recordBytes, 'x');
  await produce(
    kafka,
    source,
    Array.from({ length: records }, (_, n) => ({ key: `key-${n}`, value })),
    5_000,
  );

  const results: Array<{ setting: Setting; m: Measurement }> = [];
  for (const [i, setting] of SETTINGS.entries()) {
    const m = await measure(kafka, source, setting, `bench-guarantees-${run}-${i}`);
    console.log(
      `bench guarantees: ${setting.name}: ${Math.round(m.recordsPerSecond)} records/s, ${m.cpuMicrosPerRecord.toFixed(1)} µs CPU/record (${m.seconds.toFixed(1)} s)`,
    );
    results.push({ setting, m });
  }
  const base = results.find((r) => r.setting.baseline)!.m;
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; Kafka broker and Redis on the same machine; ${records} records of ${recordBytes} B, ${partitions} partitions.`,
    '',
    '| setting | records/s | vs at_least_once | CPU µs/record | vs at_least_once |',
    '|---|---|---|---|---|',
    ...results.map(
      ({ setting, m }) =>
        `| ${setting.name} | ${Math.round(m.recordsPerSecond)} | ${(m.recordsPerSecond / base.recordsPerSecond).toFixed(2)} | ${m.cpuMicrosPerRecord.toFixed(1)} | ${(m.cpuMicrosPerRecord / base.cpuMicrosPerRecord).toFixed(2)} |`,
    ),
  ].join('\n');
  console.log(`\n${table}\n`);
  writeBenchSection('guarantees', table);
  for (const [i, { setting }] of results.entries())
    if (setting.env['BENCH_DEDUP'] === '1') await deleteDedupKeys(redisUrl, `bench-guarantees-${run}-${i}`);
  const cleanup = kafka.admin();
  await cleanup.connect();
  await cleanup.deleteGroups(results.map((_, i) => `bench-guarantees-${run}-${i}`)).catch(() => undefined);
  await cleanup.deleteTopics({ topics: [source, ...results.map((_, i) => `bench-guarantees-${run}-${i}.out`)] }).catch(() => undefined);
  await cleanup.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
