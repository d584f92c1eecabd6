/**
 * `npm run demo`: runs topologies/orders.ts on real input, end to end.
 *
 * 1. Starts the local Kafka broker (and Redis, if it does not answer).
 * 2. Creates the `orders` topic (6 partitions) and produces N orders (default 10 000, fixed
 *    seed, about 2 % malformed), keyed with this run's id.
 * 3. Runs `weir run topologies/orders.ts` until every input has an outcome in
 *    `orders.enriched` or `orders.dlq`, then stops it with SIGTERM.
 * 4. Prints a reconciliation: input, succeeded, dead-lettered by error class, retries,
 *    duplicates, lost, elapsed time and records/s. Exits 1 if anything is lost.
 *
 * Env: DEMO_ORDERS (count), DEMO_SEED, ORDERS_FAILURE_RATE (the flaky dependency's, default
 * 0.1), DEMO_TIMEOUT_MS (default 300 000).
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_BROKERS } from './lib/broker-instance.js';
import { freePort, sumMetric } from './lib/free-port.js';
import { demoLeftRunning } from './lib/demo-left-running.js';
import { startBroker } from './lib/kafka-broker.js';
import { generateOrders } from './lib/orders-generator.js';
import { ensureRedis } from './lib/redis-server.js';
import { createTopics, endOffsets, produce, quietKafka, readTopics, type ReadRecord } from './lib/topic-io.js';
import { startWorker } from './lib/worker-process.js';

const SOURCE = 'orders';
const SINK = 'orders.enriched';
const DLQ = 'orders.dlq';

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`demo: ${name} must be a positive integer (got '${raw}')`);
    process.exit(2);
  }
  return n;
}

const count = intEnv('DEMO_ORDERS', 10_000);
const seed = intEnv('DEMO_SEED', 42);
const timeoutMs = intEnv('DEMO_TIMEOUT_MS', 300_000);
const brokers = process.env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
const log = (line: string): void => console.log(`demo: ${line}`);

async function main(): Promise<number> {
  if (brokers === DEFAULT_BROKERS) {
    const broker = await startBroker();
    startedKafka = broker.startedByUs;
    log(broker.startedByUs ? `started Kafka (pid ${broker.pid})` : 'Kafka is running');
  }
  const redis = await ensureRedis(process.env['REDIS_URL']);
  log(redis.startedByUs ? 'started Redis' : 'Redis is running');
  startedRedis = redis.startedByUs;

  const kafka = quietKafka(brokers, 'weir-demo');
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: SOURCE, partitions: 6 }]);
  const startOffsets = await endOffsets(admin, [SINK, DLQ]);
  await admin.disconnect();

  const runId = `demo-${randomUUID().slice(0, 8)}`;
  const orders = generateOrders(count, runId, seed);
  const expectedMalformed = orders.filter((o) => o.malformed !== null).length;
  log(`producing ${count} orders (seed ${seed}, ${expectedMalformed} malformed) to '${SOURCE}', run id ${runId}`);
  await produce(
    kafka,
    SOURCE,
    orders.map((o) => ({ key: o.key, value: o.value })),
  );

  const metricsPort = await freePort();
  const began = Date.now();
  const worker = startWorker('topologies/orders.ts', { args: ['--metrics-port', String(metricsPort)] });
  stopWorker = () => worker.stop('SIGKILL');
  log(`started 'weir run topologies/orders.ts' (pid ${worker.child.pid})`);
  await worker.waitForLog((line) => line.msg === 'worker started', 60_000);

  const outcomeKeys = new Set<string>();
  let scanned = 0;
  const mine = (r: ReadRecord): boolean => r.key?.startsWith(`${runId}-`) === true;
  let lastReport = 0;
  const { records, complete } = await readTopics(kafka, [SINK, DLQ], {
    from: startOffsets,
    timeoutMs,
    until: (rs) => {
      for (; scanned < rs.length; scanned++) if (mine(rs[scanned]!)) outcomeKeys.add(rs[scanned]!.key!);
      return outcomeKeys.size >= count;
    },
    onProgress: () => {
      if (Date.now() - lastReport > 2_000) {
        lastReport = Date.now();
        log(`${outcomeKeys.size}/${count} orders have an outcome`);
      }
    },
  });
  const elapsedMs = Date.now() - began;
  const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    .then((r) => r.text())
    .catch(() => '');
  const exitCode = await worker.stop('SIGTERM');
  log(`worker stopped with SIGTERM (exit code ${exitCode})`);

  const ours = records.filter(mine);
  const sink = ours.filter((r) => r.topic === SINK);
  const dlq = ours.filter((r) => r.topic === DLQ);
  const seen = new Map<string, number>();
  for (const r of ours) seen.set(r.key!, (seen.get(r.key!) ?? 0) + 1);
  const duplicates = [...seen.values()].reduce((n, times) => n + times - 1, 0);
  const lost = orders.filter((o) => !seen.has(o.key)).length;
  const byClass = new Map<string, number>();
  for (const r of dlq) byClass.set(r.headers['weir.error.class'] ?? '?', (byClass.get(r.headers['weir.error.class'] ?? '?') ?? 0) + 1);
  const retries = sumMetric(metrics, 'weir_records_total', { outcome: 'retry' });

  const row = (label: string, value: string | number): string => `  ${label.padEnd(24)}${String(value).padStart(10)}`;
  console.log('\nreconciliation');
  console.log(row('input', count));
  console.log(row('succeeded', sink.length));
  console.log(row('dead-lettered', dlq.length));
  for (const [cls, n] of [...byClass].sort()) console.log(`${row(`  ${cls}`, n)}`);
  console.log(row('retries', metrics === '' ? 'unknown' : retries));
  console.log(row('duplicates', duplicates));
  console.log(row('lost', lost));
  console.log(row('elapsed', `${(elapsedMs / 1000).toFixed(1)} s`));
  console.log(row('throughput', `${Math.round((count / elapsedMs) * 1000)} records/s`));

  if (!complete || lost > 0) {
    console.error(`\ndemo: FAILED: ${lost} of ${count} orders have no outcome${complete ? '' : ` after ${timeoutMs} ms`}`);
    if (worker.otherOutput.length > 0) console.error(worker.otherOutput.slice(-20).join('\n'));
    return 1;
  }
  if (exitCode !== 0) {
    console.error(`\ndemo: FAILED: the worker exited with ${exitCode} after SIGTERM`);
    return 1;
  }
  console.log(
    `\ndemo: ok: every order has an outcome in ${SINK} or ${DLQ}${duplicates > 0 ? ` (${duplicates} duplicates, allowed under at_least_once)` : ', exactly once'}`,
  );
  return 0;
}

/** Kills the worker if the demo fails half-way, so no worker outlives it. */
let stopWorker: () => Promise<unknown> = async () => undefined;

/** What the demo left running, and how to stop it (the broker and Redis stay up for the next run). */
function leftRunning(): void {
  const hint = demoLeftRunning({ kafka: startedKafka, redis: startedRedis }, DEFAULT_BROKERS);
  if (hint !== undefined) log(hint);
}
let startedKafka = false;
let startedRedis = false;

main().then(
  (code) => {
    leftRunning();
    process.exit(code);
  },
  async (error: unknown) => {
    console.error(`demo: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await stopWorker();
    leftRunning();
    process.exit(1);
  },
);
