/**
 * `npm run bench`: weir against a hand-written kafkajs loop, on the same broker and input.
 *
 * For each record size (100 B and 1 KiB) it produces BENCH_RECORDS records (default 200 000)
 * to a 6-partition topic, then runs, one after the other and each in its own process:
 * - weir: `weir run bench/passthrough.ts` (at_least_once, buffer serdes, copy to a sink);
 * - kafkajs: bench/kafkajs-baseline.ts (eachBatch → sendBatch acks=-1 → commit).
 * Each run is timed from the moment its consumer joined the group until the output topic
 * holds every record; CPU time is the process's user+system time over the same window
 * (/proc/<pid>/stat). It prints records/s, the weir/kafkajs ratio and CPU µs per record, and
 * writes the table into bench/README.md with the date and the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import { DEFAULT_BROKERS } from '../scripts/lib/broker-instance.js';
import { startBroker } from '../scripts/lib/kafka-broker.js';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { createTopics, produce, quietKafka } from '../scripts/lib/topic-io.js';
import { startWorker } from '../scripts/lib/worker-process.js';
import { machineDescription, timeRun, writeBenchSection, type Measurement } from './bench-tools.js';

const records = Number(process.env['BENCH_RECORDS'] ?? 200_000);
const sizes = [100, 1024];
const partitions = 6;
const brokers = process.env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;

async function outputCount(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/** Waits for `started`, then times the run until `sink` holds every record. */
async function measure(kafka: Kafka, child: ChildProcess, started: Promise<unknown>, sink: string): Promise<Measurement> {
  await started;
  return timeRun(child, records, async () => (await outputCount(kafka, sink)) >= records, sink);
}

async function runWeir(kafka: Kafka, source: string, id: string): Promise<Measurement> {
  const sink = `${id}.out`;
  const worker = startWorker('bench/passthrough.ts', { args: ['--application-id', id, '--log-level', 'info'], env: { BENCH_SOURCE: source, BENCH_SINK: sink } });
  try {
    return await measure(kafka, worker.child, worker.waitForLog((l) => l.msg === 'worker started', 60_000), sink);
  } finally {
    await worker.stop('SIGTERM');
  }
}

async function runKafkajs(kafka: Kafka, source: string, id: string): Promise<Measurement> {
  const sink = `${id}.out`;
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: sink, partitions }]);
  await admin.disconnect();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'bench', 'kafkajs-baseline.ts')], {
    cwd: repoRoot,
    env: { ...process.env, KAFKA_BROKERS: brokers, BENCH_SOURCE: source, BENCH_SINK: sink, BENCH_GROUP: id },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('"started"') && resolve());
    child.once('exit', (code) => reject(new Error(`kafkajs baseline exited with ${code}`)));
  });
  try {
    return await measure(kafka, child, started, sink);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function main(): Promise<void> {
  if (brokers === DEFAULT_BROKERS) await startBroker();
  const kafka = quietKafka(brokers, 'weir-bench');
  const run = randomUUID().slice(0, 8);
  const rows: string[] = [];
  console.log(`bench: ${records} records per size, ${partitions} partitions, broker ${brokers}`);
  for (const [i, size] of sizes.entries()) {
    const source = `bench-${run}-${size}.in`;
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic: source, partitions }]);
    await admin.disconnect();
    const value = Buffer.alloc(size, 'x');
    console.log(`bench: producing ${records} × ${size} B to ${source}`);
    await produce(kafka, source, Array.from({ length: records }, (_, n) => ({ key: `key-${n}`, value })), 5_000);
    // Alternate who goes first, so neither always gets the warmer broker.
    const order = i % 2 === 0 ? (['weir', 'kafkajs'] as const) : (['kafkajs', 'weir'] as const);
    const results = new Map<string, Measurement>();
    for (const who of order) {
      const id = `bench-${run}-${size}-${who}`;
      const m = who === 'weir' ? await runWeir(kafka, source, id) : await runKafkajs(kafka, source, id);
      console.log(`bench: ${size} B ${who}: ${Math.round(m.recordsPerSecond)} records/s, ${m.cpuMicrosPerRecord.toFixed(1)} µs CPU/record (${m.seconds.toFixed(1)} s)`);
      results.set(who, m);
    }
    const weir = results.get('weir')!;
    const base = results.get('kafkajs')!;
    rows.push(
      `| ${size} B | ${records} | ${Math.round(base.recordsPerSecond)} | ${Math.round(weir.recordsPerSecond)} | ${(weir.recordsPerSecond / base.recordsPerSecond).toFixed(2)} | ${base.cpuMicrosPerRecord.toFixed(1)} | ${weir.cpuMicrosPerRecord.toFixed(1)} | ${(weir.cpuMicrosPerRecord / base.cpuMicrosPerRecord).toFixed(2)} |`,
    );
  }
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; Kafka broker on the same machine.`,
    '',
    '| record size | records | kafkajs loop records/s | weir records/s | weir / kafkajs | kafkajs CPU µs/record | weir CPU µs/record | weir / kafkajs CPU |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  console.log(`\n${table}\n`);
  writeBenchSection('baseline', table);
  const cleanup = kafka.admin();
  await cleanup.connect();
  const ids = sizes.flatMap((size) => (['weir', 'kafkajs'] as const).map((who) => `bench-${run}-${size}-${who}`));
  await cleanup.deleteGroups(ids).catch(() => undefined);
  await cleanup.deleteTopics({ topics: [...sizes.map((size) => `bench-${run}-${size}.in`), ...ids.map((id) => `${id}.out`)] }).catch(() => undefined);
  await cleanup.disconnect();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
