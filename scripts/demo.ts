/**
 * `npm run demo [orders|fulfilment]`: runs an example topology on real input, end to end.
 *
 * - `orders` (default): topologies/orders.ts, one processor, at_least_once, blocking retries.
 * - `fulfilment` (`npm run demo:fulfilment`): topologies/fulfilment.ts, a chain of two
 *   processors (per-key ordered retries at the second) with a fan-out to two sinks,
 *   exactly_once; its orders are keyed by customer (200 customers), and each customer's must
 *   reach the sinks in the order they were produced.
 *
 * 1. Starts the local Kafka broker (and Redis, if it does not answer).
 * 2. Creates the `orders` topic (6 partitions) and runs `weir run <topology>`. Both demos read
 *    `orders` in their own consumer groups, so a worker first catches up with the orders that
 *    runs of the other demo left (until its group's committed offsets reach the topic's end).
 * 3. Produces N orders (default 10 000, fixed seed, about 2 % malformed), each with its id
 *    (`<run id>-<n>`) in an `order-id` header, and waits until every one has an outcome (in every success sink, or in a DLQ); then
 *    stops the worker with SIGTERM.
 * 4. Prints a reconciliation of this run's orders: input, succeeded, dead-lettered by error
 *    class, retries (the worker's, since it caught up), duplicates, lost, and the time and
 *    records/s from the first order produced to the last outcome. Exits 1 if an order has no
 *    outcome, if one reached only some of its sinks, if (keyed by customer) one reached a sink
 *    before an earlier order of its customer, or (exactly_once) if anything was written twice.
 *
 * Env: DEMO_ORDERS (count), DEMO_SEED, ORDERS_FAILURE_RATE (the flaky dependency's, default
 * 0.1), DEMO_TIMEOUT_MS (default 300 000).
 */
import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { DEFAULT_BROKERS } from './lib/broker-instance.js';
import { freePort, sumMetric } from './lib/free-port.js';
import { demoLeftRunning } from './lib/demo-left-running.js';
import { startBroker } from './lib/kafka-broker.js';
import { generateOrders } from './lib/orders-generator.js';
import { ensureRedis } from './lib/redis-server.js';
import { createTopics, endOffsets, produce, quietKafka, readTopics, type ReadRecord } from './lib/topic-io.js';
import { waitFor } from './lib/wait-for.js';
import { startWorker } from './lib/worker-process.js';

const SOURCE = 'orders';
/** The header every produced order carries: its id (`<run id>-<n>`), kept on its outputs and dead letters. */
const ORDER_ID = 'order-id';

/** An example topology and where its outcomes go. */
interface DemoSpec {
  readonly topologyFile: string;
  /** Its consumer group. */
  readonly applicationId: string;
  /** An order that succeeds is written once to every one of these. */
  readonly sinks: readonly string[];
  /** An order that fails is written once to one of these. */
  readonly dlqs: readonly string[];
  readonly exactlyOnce: boolean;
  /**
   * Key the orders by customer, from this many customers (each has many orders), and check that
   * each customer's orders reach the sinks in the order they were produced; default: keyed by order.
   */
  readonly customers?: number;
}

const DEMOS: Readonly<Record<string, DemoSpec>> = {
  orders: {
    topologyFile: 'topologies/orders.ts',
    applicationId: 'orders-enricher',
    sinks: ['orders.enriched'],
    dlqs: ['orders.dlq'],
    exactlyOnce: false,
  },
  fulfilment: {
    topologyFile: 'topologies/fulfilment.ts',
    applicationId: 'orders-fulfilment',
    sinks: ['orders.invoices', 'orders.shipments'],
    dlqs: ['orders-fulfilment.validate.dlq', 'orders-fulfilment.price.dlq'],
    exactlyOnce: true,
    customers: 200,
  },
};

/** The demo named by the first argument (default `orders`); an unknown name exits 2. */
function chosenDemo(): DemoSpec {
  const name = process.argv[2] ?? 'orders';
  const chosen = DEMOS[name];
  if (chosen !== undefined) return chosen;
  console.error(`demo: unknown demo '${name}': use one of ${Object.keys(DEMOS).join(', ')}`);
  process.exit(2);
}
const spec = chosenDemo();
const OUTCOME_TOPICS = [...spec.sinks, ...spec.dlqs];

function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    const what = min === 1 ? 'a positive integer' : `an integer of at least ${min}`;
    console.error(`demo: ${name} must be ${what} (got ${JSON.stringify(raw)})`);
    process.exit(2);
  }
  return n;
}

const count = intEnv('DEMO_ORDERS', 10_000);
const seed = intEnv('DEMO_SEED', 42, 0);
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
  const metricsPort = await freePort();
  const worker = startWorker(spec.topologyFile, { args: ['--metrics-port', String(metricsPort)] });
  stopWorker = () => worker.stop('SIGKILL');
  log(`started 'weir run ${spec.topologyFile}' (pid ${worker.child.pid})`);
  await worker.waitForLog((line) => line.msg === 'worker started', 60_000);
  // Orders that earlier runs (of the other demo, which reads the same topic in another group)
  // left behind go first: this run's counts and time start once they are done.
  const leftBehind = await lagOf(admin, spec.applicationId);
  if (leftBehind > 0) {
    log(`the worker first catches up with ${leftBehind} orders of earlier runs`);
    await waitFor(
      async () => {
        if (worker.child.exitCode !== null)
          throw new Error(`the worker exited (${worker.child.exitCode}) while it caught up:\n${worker.otherOutput.slice(-20).join('\n')}`);
        return (await lagOf(admin, spec.applicationId)) === 0;
      },
      timeoutMs,
      () => `the worker did not catch up with the orders of earlier runs within ${timeoutMs} ms`,
      500,
    );
  }
  const retriesBefore = await retriesSoFar(metricsPort);
  const startOffsets = await endOffsets(admin, OUTCOME_TOPICS);
  await admin.disconnect();

  const runId = `demo-${randomUUID().slice(0, 8)}`;
  const orders = generateOrders(count, runId, seed, spec.customers === undefined ? {} : { customers: spec.customers });
  const expectedMalformed = orders.filter((o) => o.malformed !== null).length;
  log(`producing ${count} orders (seed ${seed}, ${expectedMalformed} malformed) to '${SOURCE}', run id ${runId}`);
  const began = Date.now();
  await produce(
    kafka,
    SOURCE,
    orders.map((o) => ({ key: o.key, value: o.value, headers: { [ORDER_ID]: o.id } })),
  );

  // The outputs of each order of this run: how many copies in each outcome topic.
  const copies = new Map<string, Map<string, number>>();
  const hasOutcome = (topics: ReadonlyMap<string, number>): boolean =>
    spec.dlqs.some((t) => topics.has(t)) || spec.sinks.every((t) => topics.has(t));
  let withOutcome = 0;
  let scanned = 0;
  // Outputs and dead letters keep their input's headers: the order id tells this run's apart.
  const idOf = (r: ReadRecord): string | undefined => r.headers[ORDER_ID];
  const mine = (r: ReadRecord): boolean => idOf(r)?.startsWith(`${runId}-`) === true;
  let lastReport = 0;
  const { records, complete } = await readTopics(kafka, OUTCOME_TOPICS, {
    from: startOffsets,
    timeoutMs,
    until: (rs) => {
      for (; scanned < rs.length; scanned++) {
        const r = rs[scanned]!;
        if (!mine(r)) continue;
        const topics = copies.get(idOf(r)!) ?? new Map<string, number>();
        const before = hasOutcome(topics);
        topics.set(r.topic, (topics.get(r.topic) ?? 0) + 1);
        copies.set(idOf(r)!, topics);
        if (!before && hasOutcome(topics)) withOutcome++;
      }
      return withOutcome >= count;
    },
    onProgress: () => {
      if (Date.now() - lastReport > 2_000) {
        lastReport = Date.now();
        log(`${withOutcome}/${count} orders have an outcome`);
      }
    },
  });
  const elapsedMs = Date.now() - began;
  const retriesAfter = await retriesSoFar(metricsPort);
  const exitCode = await worker.stop('SIGTERM');
  log(`worker stopped with SIGTERM (exit code ${exitCode})`);

  const tally = reconcile(
    orders.map((o) => o.id),
    copies,
  );
  const outOfOrder = spec.customers === undefined ? 0 : outOfKeyOrder(records.filter(mine), idOf);
  const dlq = records.filter((r) => mine(r) && spec.dlqs.includes(r.topic));
  const byClass = new Map<string, number>();
  for (const r of dlq) byClass.set(r.headers['weir.error.class'] ?? '?', (byClass.get(r.headers['weir.error.class'] ?? '?') ?? 0) + 1);
  const retries = retriesAfter === undefined || retriesBefore === undefined ? 'unknown' : retriesAfter - retriesBefore;

  const row = (label: string, value: string | number): string => `  ${label.padEnd(30)}${String(value).padStart(10)}`;
  console.log('\nreconciliation');
  console.log(row('input', count));
  console.log(row('succeeded', tally.succeeded));
  if (spec.sinks.length > 1) for (const t of spec.sinks) console.log(row(`  in ${t}`, countIn(copies, t)));
  console.log(row('dead-lettered', tally.deadLettered));
  for (const [cls, n] of [...byClass].sort()) console.log(`${row(`  ${cls}`, n)}`);
  if (spec.sinks.length > 1) console.log(row('in some sinks only', tally.partial));
  if (spec.customers !== undefined) console.log(row('out of customer order', outOfOrder));
  console.log(row('retries', retries));
  console.log(row('duplicates', tally.duplicates));
  console.log(row(complete ? 'lost' : 'no outcome in time', tally.lost));
  console.log(row('elapsed', `${(elapsedMs / 1000).toFixed(1)} s`));
  console.log(row('throughput', `${Math.round((count / elapsedMs) * 1000)} records/s`));

  const outcomeText = `${spec.sinks.join(' and ')} or ${spec.dlqs.length > 1 ? `in a DLQ (${spec.dlqs.join(', ')})` : spec.dlqs[0]}`;
  if (!complete || tally.lost > 0 || tally.partial > 0) {
    const missing = tally.lost + tally.partial;
    console.error(
      `\ndemo: FAILED: ${missing} of ${count} orders have no outcome in ${outcomeText}${complete ? '' : ` after ${timeoutMs} ms`}`,
    );
    if (worker.otherOutput.length > 0) console.error(worker.otherOutput.slice(-20).join('\n'));
    return 1;
  }
  if (exitCode !== 0) {
    console.error(`\ndemo: FAILED: the worker exited with ${exitCode} after SIGTERM`);
    return 1;
  }
  if (outOfOrder > 0) {
    console.error(`\ndemo: FAILED: ${outOfOrder} orders reached a sink before an earlier order of their customer`);
    return 1;
  }
  if (spec.exactlyOnce && tally.duplicates > 0) {
    console.error(`\ndemo: FAILED: ${tally.duplicates} outputs written twice under exactly_once`);
    return 1;
  }
  console.log(
    `\ndemo: ok: every order has an outcome in ${outcomeText}${tally.duplicates > 0 ? ` (${tally.duplicates} duplicates, allowed under at_least_once)` : spec.exactlyOnce ? ', exactly once' : ', no duplicates'}${spec.customers === undefined ? '' : ", each customer's orders in order"}`,
  );
  return 0;
}

/**
 * Orders that reached a sink after a later order of the same customer (in the same sink
 * partition): with `order: 'key'`, none. `records` are in offset order per partition.
 */
function outOfKeyOrder(records: readonly ReadRecord[], idOf: (r: ReadRecord) => string | undefined): number {
  const last = new Map<string, number>();
  let out = 0;
  for (const r of records) {
    if (!spec.sinks.includes(r.topic)) continue;
    const n = Number(idOf(r)!.slice(idOf(r)!.lastIndexOf('-') + 1));
    const k = `${r.topic}/${r.partition}/${r.key}`;
    if (n < (last.get(k) ?? -1)) out++;
    else last.set(k, n);
  }
  return out;
}

/** The orders' outcomes from their output copies per topic; see {@link DemoSpec}. */
function reconcile(keys: readonly string[], copies: ReadonlyMap<string, ReadonlyMap<string, number>>) {
  let succeeded = 0;
  let deadLettered = 0;
  let partial = 0;
  let lost = 0;
  let duplicates = 0;
  for (const key of keys) {
    const topics = copies.get(key) ?? new Map<string, number>();
    const total = [...topics.values()].reduce((a, b) => a + b, 0);
    const inEverySink = spec.sinks.every((t) => topics.has(t));
    if (inEverySink) succeeded++;
    else if (spec.dlqs.some((t) => topics.has(t))) deadLettered++;
    else if (total > 0) partial++;
    else lost++;
    // One copy in every sink, or one dead letter; anything more was written twice.
    const expected = inEverySink ? spec.sinks.length : Math.min(total, 1);
    duplicates += total - expected;
  }
  return { succeeded, deadLettered, partial, lost, duplicates };
}

/** Records of `orders` the consumer group `groupId` has not committed yet (every record when it has committed none). */
async function lagOf(admin: Admin, groupId: string): Promise<number> {
  const ends = (await endOffsets(admin, [SOURCE])).get(SOURCE) ?? new Map<number, number>();
  const [committed] = await admin.fetchOffsets({ groupId, topics: [SOURCE] });
  const at = new Map((committed?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]));
  return [...ends].reduce((lag, [partition, end]) => lag + Math.max(0, end - (at.get(partition) ?? 0)), 0);
}

/** The worker's retries so far (`weir_records_total{outcome="retry"}`); undefined when `/metrics` does not answer. */
async function retriesSoFar(port: number): Promise<number | undefined> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`)
    .then((r) => r.text())
    .catch(() => undefined);
  return text === undefined ? undefined : sumMetric(text, 'weir_records_total', { outcome: 'retry' });
}

/** How many orders have an output in `topic`. */
const countIn = (copies: ReadonlyMap<string, ReadonlyMap<string, number>>, topic: string): number =>
  [...copies.values()].filter((topics) => topics.has(topic)).length;

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
