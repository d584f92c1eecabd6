/**
 * The baseline: a hand-written kafkajs consume → produce → commit loop, as a team would write
 * it without weir — eachBatch, one idempotent sendBatch (acks=-1) per batch, then resolve and
 * commit the batch's offsets. Run as its own process by bench/run.ts (bench/contestants.ts).
 * Env: KAFKA_BROKERS, BENCH_SOURCE, BENCH_SINK, BENCH_GROUP. Prints one JSON line when it
 * has joined the group: {"msg":"started"}.
 */
import { Kafka, Partitioners, logLevel } from '../src/kafkajs/kafkajs-library.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};
const kafka = new Kafka({
  clientId: 'bench-baseline',
  brokers: (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(','),
  logLevel: logLevel.NOTHING,
});
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
const consumer = kafka.consumer({ groupId: env('BENCH_GROUP'), maxWaitTimeInMs: 250 });
const target = env('BENCH_SINK');

await producer.connect();
await consumer.connect();
await consumer.subscribe({ topics: [env('BENCH_SOURCE')], fromBeginning: true });
consumer.on(consumer.events.GROUP_JOIN, () => console.log(JSON.stringify({ msg: 'started' })));
await consumer.run({
  autoCommit: false,
  eachBatchAutoResolve: false,
  partitionsConsumedConcurrently: 6,
  eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary }) => {
    if (batch.messages.length === 0) return;
    await producer.sendBatch({
      acks: -1,
      topicMessages: [
        {
          topic: target,
          messages: batch.messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp })),
        },
      ],
    });
    const last = batch.messages[batch.messages.length - 1]!.offset;
    resolveOffset(last);
    await commitOffsetsIfNecessary({
      topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(Number(last) + 1) }] }],
    });
  },
});
const stop = async (): Promise<void> => {
  await consumer.disconnect();
  await producer.disconnect();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
