/**
 * Proves that kafkajs 2.2.4 works against the broker the project runs (Apache Kafka 4.x, KRaft):
 * topic admin, idempotent produce, consumer groups with eachBatch and explicit commits,
 * transactions (commit with sendOffsets, abort) and read_committed isolation.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Kafka, logLevel } from '../../src/kafkajs/kafkajs-library.js';
import type { Admin, Consumer, EachBatchPayload, Producer, logCreator } from 'kafkajs';
import { waitFor } from '../../scripts/lib/wait-for.js';

const brokers = inject('kafkaBrokers').split(',');
const suffix = `${Date.now()}-${randomBytes(4).toString('hex')}`;
const PARTITIONS = 3;
const RECORDS = 300;

/**
 * kafkajs logs errors only, to stderr, leaving out errors kafkajs retries: per-response error
 * logs of the connection (a failure that is not retried surfaces as a rejected call anyway) and
 * logs of a retry in progress. Right after a broker start, InitProducerId answers
 * COORDINATOR_LOAD_IN_PROGRESS; right after a commit or abort, AddPartitionsToTxn answers
 * CONCURRENT_TRANSACTIONS while the broker writes the previous transaction's markers.
 */
const errorsOnly: logCreator =
  () =>
  ({ namespace, log }) => {
    if (namespace === 'Connection' && log.message.startsWith('Response ')) return;
    if (typeof log['retryCount'] === 'number') return;
    console.error(`[kafkajs ${namespace}] ${log.message}`, log);
  };

const kafka = new Kafka({
  clientId: `weir-compat-${suffix}`,
  brokers,
  logLevel: logLevel.ERROR,
  logCreator: errorsOnly,
  retry: { retries: 8, initialRetryTime: 100 },
});

interface Received {
  partition: number;
  offset: bigint;
  value: string;
}

/** Runs a consumer from the beginning of `topic`, collecting every record it delivers. */
async function collect(consumer: Consumer, topic: string, commit: boolean): Promise<Received[]> {
  const received: Received[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload) => {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) return;
        received.push({ partition: batch.partition, offset: BigInt(message.offset), value: message.value?.toString() ?? '' });
        resolveOffset(message.offset);
      }
      if (commit && batch.messages.length > 0) {
        const next = (BigInt(batch.lastOffset()) + 1n).toString();
        await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
      }
      await heartbeat();
    },
  });
  return received;
}

describe('kafkajs 2.2.4 against the project broker', () => {
  const topic = `weir-compat-${suffix}`;
  const txTopic = `weir-compat-tx-${suffix}`;
  const group = `weir-compat-${suffix}`;
  const txOffsetsGroup = `weir-compat-txoffsets-${suffix}`;
  const clients: Array<Admin | Producer | Consumer> = [];
  let admin: Admin;

  beforeAll(async () => {
    admin = kafka.admin();
    clients.push(admin);
    await admin.connect();
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: PARTITIONS, replicationFactor: 1 },
        { topic: txTopic, numPartitions: PARTITIONS, replicationFactor: 1 },
      ],
    });
    expect(created).toBe(true);
  });

  afterAll(async () => {
    for (const client of clients.reverse()) await client.disconnect().catch(() => undefined);
    const cleanup = kafka.admin();
    await cleanup.connect();
    await cleanup.deleteGroups([group, txOffsetsGroup]).catch(() => undefined);
    await cleanup.deleteTopics({ topics: [topic, txTopic] }).catch(() => undefined);
    await cleanup.disconnect();
  });

  it('creates a topic with 3 partitions', async () => {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(metadata.topics[0]?.partitions).toHaveLength(PARTITIONS);
  });

  it('produces idempotently and consumes in a group with eachBatch, explicit commits and per-partition order', async () => {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    clients.push(producer);
    await producer.connect();
    for (let start = 0; start < RECORDS; start += 50) {
      const messages = Array.from({ length: 50 }, (_, i) => {
        const seq = start + i;
        return { partition: seq % PARTITIONS, key: `k${seq % 7}`, value: String(seq) };
      });
      const metadata = await producer.send({ topic, acks: -1, messages });
      expect(metadata.every((m) => m.errorCode === 0)).toBe(true);
    }

    const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 500 });
    clients.push(consumer);
    const received = await collect(consumer, topic, true);
    await waitFor(
      () => received.length >= RECORDS,
      60_000,
      () => `received ${received.length}/${RECORDS}`,
    );

    expect(received).toHaveLength(RECORDS);
    expect(new Set(received.map((r) => Number(r.value)))).toEqual(new Set(Array.from({ length: RECORDS }, (_, i) => i)));
    for (let p = 0; p < PARTITIONS; p++) {
      const inPartition = received.filter((r) => r.partition === p);
      expect(inPartition.map((r) => Number(r.value) % PARTITIONS).every((v) => v === p)).toBe(true);
      // Offsets 0..n-1 in order, and the values in the order they were produced.
      expect(inPartition.map((r) => r.offset)).toEqual(inPartition.map((_, i) => BigInt(i)));
      const values = inPartition.map((r) => Number(r.value));
      expect(values).toEqual([...values].sort((a, b) => a - b));
    }

    // The explicit commits reached the group coordinator: committed = end of every partition.
    const ends = await admin.fetchTopicOffsets(topic);
    await waitFor(
      async () => {
        const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
        return ends.every((end) => committed?.partitions.find((c) => c.partition === end.partition)?.offset === end.high);
      },
      30_000,
      () => 'committed offsets did not reach the end of the partitions',
    );
    await consumer.disconnect();
  });

  it('commits and aborts transactions; read_committed sees committed records only', async () => {
    const producer = kafka.producer({ transactionalId: `weir-compat-tx-${suffix}`, idempotent: true, maxInFlightRequests: 1 });
    clients.push(producer);
    await producer.connect();

    const batch = (tag: string) =>
      Array.from({ length: 30 }, (_, i) => ({ partition: i % PARTITIONS, key: `${tag}-${i}`, value: `${tag}-${i}` }));

    const committed = await producer.transaction();
    await committed.send({ topic: txTopic, acks: -1, messages: batch('committed') });
    await committed.sendOffsets({
      consumerGroupId: txOffsetsGroup,
      topics: [{ topic, partitions: [{ partition: 0, offset: '42' }] }],
    });
    await committed.commit();

    const aborted = await producer.transaction();
    await aborted.send({ topic: txTopic, acks: -1, messages: batch('aborted') });
    await aborted.abort();

    // A committed transaction after the aborted one, so read_committed must skip records in the middle.
    const after = await producer.transaction();
    await after.send({ topic: txTopic, acks: -1, messages: batch('after') });
    await after.commit();

    const expected = [...batch('committed'), ...batch('after')].map((m) => m.value).sort();

    const readCommitted = kafka.consumer({ groupId: `weir-compat-rc-${suffix}`, readUncommitted: false, maxWaitTimeInMs: 500 });
    clients.push(readCommitted);
    const seen = await collect(readCommitted, txTopic, false);
    await waitFor(
      () => seen.length >= expected.length,
      60_000,
      () => `read_committed received ${seen.length}/${expected.length}`,
    );

    // The aborted records were written (a read_uncommitted consumer sees them) ...
    const readUncommitted = kafka.consumer({ groupId: `weir-compat-ru-${suffix}`, readUncommitted: true, maxWaitTimeInMs: 500 });
    clients.push(readUncommitted);
    const all = await collect(readUncommitted, txTopic, false);
    await waitFor(
      () => all.length >= 90,
      60_000,
      () => `read_uncommitted received ${all.length}/90`,
    );
    expect(all.filter((r) => r.value.startsWith('aborted-'))).toHaveLength(30);

    // ... but read_committed never delivers them, even after it caught up with the end.
    const ends = await admin.fetchTopicOffsets(txTopic);
    const lastSeen = (p: number) => Math.max(-1, ...seen.filter((r) => r.partition === p).map((r) => Number(r.offset)));
    await waitFor(
      () => ends.every((end) => lastSeen(end.partition) >= Number(end.high) - 2),
      30_000,
      () => 'read_committed consumer did not reach the last committed record',
    );
    expect(seen.map((r) => r.value).sort()).toEqual(expected);
    expect(seen.some((r) => r.value.startsWith('aborted-'))).toBe(false);

    // sendOffsets committed the group offset inside the transaction.
    const [offsets] = await admin.fetchOffsets({ groupId: txOffsetsGroup, topics: [topic] });
    expect(offsets?.partitions.find((p) => p.partition === 0)?.offset).toBe('42');

    await readCommitted.disconnect();
    await readUncommitted.disconnect();
  });
});
