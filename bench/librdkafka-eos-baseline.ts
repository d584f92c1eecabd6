/**
 * The exactly_once baseline on librdkafka: a hand-written consume → produce → transaction loop on
 * @confluentinc/kafka-javascript's own API, as a team would write it without weir, and the
 * ceiling of any Node.js program on that binding. One transactional producer, one consumer
 * (read_committed); `consume` up to 5 000 records at a time, `produce` each to the sink under
 * its key (`murmur2_random`, as the Java client), and every 100 ms (the commit interval of the
 * exactly_once rows) `sendOffsetsToTransaction` with the consumer's group metadata (KIP-447),
 * `commitTransaction` and `beginTransaction` before it consumes again. No retry, no DLQ, no
 * metrics, no backpressure, no rebalance handling beyond assigning what it is given: what weir
 * adds to this loop is what the benchmark's ratio to it measures.
 *
 * Run as its own process by bench/run.ts (bench/contestants.ts). Env: KAFKA_BROKERS,
 * BENCH_SOURCE, BENCH_SINK, BENCH_GROUP. Prints `{"msg":"started"}` once it has its assignment
 * and its producer's transactions are initialized (as Kafka Streams is RUNNING).
 */
import { createRequire } from 'node:module';

interface Message {
  readonly value: Buffer | null;
  readonly key: Buffer | null;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp?: number;
}
type Callback<T = void> = (error: Error | null, value: T) => void;
interface Consumer {
  connect(options: object, cb: Callback<unknown>): void;
  subscribe(topics: string[]): void;
  assign(assignment: unknown[]): void;
  unassign(): void;
  consume(n: number, cb: Callback<Message[]>): void;
  setDefaultConsumeTimeout(ms: number): void;
  setDefaultIsTimeoutOnlyForFirstMessage(only: boolean): void;
  disconnect(cb: Callback<unknown>): void;
}
interface Producer {
  connect(options: object, cb: Callback<unknown>): void;
  produce(topic: string, partition: number | null, value: Buffer | null, key: Buffer | null, timestamp: number | null): void;
  setPollInterval(ms: number): void;
  initTransactions(timeout: number, cb: (error: Error | null) => void): void;
  beginTransaction(cb: (error: Error | null) => void): void;
  commitTransaction(timeout: number, cb: (error: Error | null) => void): void;
  sendOffsetsToTransaction(offsets: object[], consumer: Consumer, timeout: number, cb: (error: Error | null) => void): void;
  disconnect(cb: Callback<unknown>): void;
}
const binding = createRequire(import.meta.url)('@confluentinc/kafka-javascript') as {
  KafkaConsumer: new (config: object, topicConfig: object) => Consumer;
  Producer: new (config: object) => Producer;
  CODES: { ERRORS: Record<string, number> };
};

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};
const brokers = process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092';
const [source, sink, group] = [env('BENCH_SOURCE'), env('BENCH_SINK'), env('BENCH_GROUP')];
const COMMIT_INTERVAL_MS = 100;
const TIMEOUT_MS = 30_000;

const call = <T>(fn: (cb: Callback<T>) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value))));
const done = (fn: (cb: (error: Error | null) => void) => void): Promise<void> =>
  new Promise((resolve, reject) => fn((error) => (error ? reject(error) : resolve())));

let assigned: () => void = () => undefined;
const firstAssignment = new Promise<void>((resolve) => (assigned = resolve));
const consumer = new binding.KafkaConsumer(
  {
    'bootstrap.servers': brokers,
    'group.id': group,
    'enable.auto.commit': false,
    'isolation.level': 'read_committed',
    rebalance_cb(this: Consumer, error: { code: number }, assignment: unknown[]) {
      if (error.code === binding.CODES.ERRORS['ERR__ASSIGN_PARTITIONS']) {
        this.assign(assignment);
        if (assignment.length > 0) assigned();
      } else this.unassign();
    },
  },
  { 'auto.offset.reset': 'earliest' },
);
const producer = new binding.Producer({
  'bootstrap.servers': brokers,
  'transactional.id': `${group}-loop`,
  partitioner: 'murmur2_random',
  dr_cb: false,
});

await call((cb) => consumer.connect({}, cb));
await call((cb) => producer.connect({}, cb));
producer.setPollInterval(100);
await done((cb) => producer.initTransactions(TIMEOUT_MS, cb));
consumer.setDefaultConsumeTimeout(100);
consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
consumer.subscribe([source]);

let running = true;
const loop = (async () => {
  // The first consume calls join the group (librdkafka serves the rebalance on them).
  void firstAssignment.then(() => console.log(JSON.stringify({ msg: 'started' })));
  await done((cb) => producer.beginTransaction(cb));
  const next = new Map<number, number>();
  let since = Date.now();
  while (running) {
    const messages = await call<Message[]>((cb) => consumer.consume(5_000, cb));
    for (const m of messages) {
      producer.produce(sink, null, m.value, m.key, m.timestamp ?? null);
      next.set(m.partition, m.offset + 1);
    }
    if (Date.now() - since < COMMIT_INTERVAL_MS || next.size === 0) continue;
    const offsets = [...next].map(([partition, offset]) => ({ topic: source, partition, offset }));
    await done((cb) => producer.sendOffsetsToTransaction(offsets, consumer, TIMEOUT_MS, cb));
    await done((cb) => producer.commitTransaction(TIMEOUT_MS, cb));
    await done((cb) => producer.beginTransaction(cb));
    next.clear();
    since = Date.now();
  }
})();

const stop = async (): Promise<void> => {
  running = false;
  await loop.catch(() => undefined);
  await call((cb) => consumer.disconnect(cb)).catch(() => undefined);
  await call((cb) => producer.disconnect(cb)).catch(() => undefined);
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
loop.catch((error: unknown) => {
  console.error(`librdkafka loop: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
