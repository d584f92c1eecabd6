/**
 * A librdkafka transaction learns of its records' delivery from failures alone
 * (`delivery.report.only.error` and `flush`, src/librdkafka/transaction-deliveries.ts): a record
 * the broker refuses must still keep the transaction from committing, on the real broker.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { readToEnd } from '../../scripts/lib/topic-io.js';
import { LibrdkafkaClient } from '../../src/librdkafka/librdkafka-client.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-txn-deliveries');

describe('a librdkafka transaction with a record the broker refuses [librdkafka]', () => {
  it('does not commit (neither its records nor its offsets), and the next transaction of the producer commits', async () => {
    const id = `weir-it-txd-${randomUUID().slice(0, 8)}`;
    const [accepted, small, input] = [`${id}.accepted`, `${id}.small`, `${id}.in`];
    // The broker refuses a record over 1 KiB on `small` (MESSAGE_TOO_LARGE, a permanent error);
    // the producer's own limit (message.max.bytes, 1 MB) lets librdkafka queue it.
    await fx.createTopics([
      { topic: accepted, partitions: 1 },
      { topic: small, partitions: 1, config: { 'max.message.bytes': '1024' } },
      { topic: input, partitions: 1 },
    ]);
    const rdk = new LibrdkafkaClient({ brokers: fx.brokers.split(','), clientId: id, logger: pino({ level: 'silent' }) });
    const groupId = `${id}-group`;
    const producer = rdk.transactionalProducer({ transactionalId: `${id}-tx`, transactionTimeoutMs: 10_000 });
    fx.onTeardown(() => producer.disconnect());
    await producer.init();

    await producer.begin();
    await producer.send([{ topic: accepted, key: null, value: Buffer.from('in the failed transaction'), headers: {} }]);
    await producer.send([{ topic: small, key: null, value: Buffer.alloc(4_096, 1), headers: {} }]);
    const failed = await (async () => {
      await producer.sendOffsets(groupId, [{ topic: input, partition: 0, offset: 7 }]);
      await producer.commit();
    })().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(Error);
    expect(String((failed as Error).message)).toMatch(/too large|failed delivery/i);
    await producer.abort();

    await producer.begin();
    await producer.send([{ topic: accepted, key: null, value: Buffer.from('committed'), headers: {} }]);
    await producer.sendOffsets(groupId, [{ topic: input, partition: 0, offset: 3 }]);
    await producer.commit();

    const read = await readToEnd(fx.kafka, [accepted], { timeoutMs: 30_000 });
    expect(read.map((r) => r.value?.toString())).toEqual(['committed']);
    const admin = rdk.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    expect(await admin.committedOffsets(groupId, input)).toEqual(new Map([[0, 3]]));
  });
});
