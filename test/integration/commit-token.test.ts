/**
 * The exactly_once writer's commit token on the real broker, with the client under test: each
 * transaction commits `weir:<writer>:<n>` as its offset's metadata (TxnOffsetCommit), and the
 * admin reads it back. A unit of an `order: 'key'` task may hold only parked records' outcomes
 * and so not move the offset; the token is then what tells whether an in-doubt commit landed
 * (the writer's unit tests cover that resolution; this checks the token makes the round trip).
 *
 * Right after a commit the coordinator may not yet have written its markers: librdkafka reads with
 * `require_stable` and so sees the new position at once (asserted so); kafkajs has no stable read
 * and may see the one before, so there the test waits, bounded, for the new token.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { readToEnd } from '../../scripts/lib/topic-io.js';
import { createKafkaClient } from '../../src/config/kafka-clients.js';
import { CLIENT_FEATURES } from '../../src/kafka/kafka-client.js';
import { ExactlyOnceWriter } from '../../src/runtime/exactly-once-writer.js';
import type { CommittedPosition } from '../../src/runtime/ports.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { UnitOfWork } from '../../src/runtime/unit-of-work.js';
import { CLIENT, onClient } from './support/client-under-test.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-commit-token');

function unitOf(topic: string, values: readonly string[]): UnitOfWork {
  const unit = new UnitOfWork();
  for (const v of values) unit.add([{ topic, partition: 0, key: null, value: Buffer.from(v), headers: {} }], null);
  return unit;
}

describe(onClient('exactly_once commit token (offset metadata)'), () => {
  it('commits a token unique to each transaction with the offset, also when the offset does not move, and reads it back', async () => {
    const id = `weir-it-token-${randomUUID().slice(0, 8)}`;
    const topics = { source: `${id}.in`, sink: `${id}.out` };
    await fx.createTopics([topics.source, topics.sink].map((topic) => ({ topic, partitions: 1 })));
    const client = await createKafkaClient(CLIENT, { brokers: fx.brokers.split(','), clientId: id, logger: pino({ level: 'silent' }) });
    const producer = client.transactionalProducer({ transactionalId: `${id}-0`, transactionTimeoutMs: 10_000 });
    const admin = client.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect().catch(() => undefined));
    fx.onTeardown(() => producer.disconnect().catch(() => undefined));
    await producer.init();
    const writer = new ExactlyOnceWriter(topics.source, 0, id, producer, admin, 0);
    /** The position after the transaction that followed the one that left `before`. */
    const positionAfter = async (before: CommittedPosition | undefined): Promise<CommittedPosition | undefined> => {
      if (CLIENT_FEATURES[CLIENT].groupMetadataInTransactions) return admin.committedPosition(id, topics.source, 0);
      return waitFor(
        async () => {
          const read = await admin.committedPosition(id, topics.source, 0);
          return read !== undefined && read.metadata !== before?.metadata ? read : undefined;
        },
        10_000,
        () => `the committed position of ${topics.source}-0 still shows the token ${before?.metadata ?? '(none)'}`,
        20,
      );
    };

    expect(await writer.write(unitOf(topics.sink, ['a']), 1, true)).toEqual({ kind: 'durable', committed: true });
    const first = await positionAfter(undefined);
    expect(first?.offset).toBe(1);
    expect(first?.metadata).toMatch(/^weir:[0-9a-f]{8}:1$/);

    // A unit with outputs but no new input: the offset stays, the token changes.
    expect(await writer.write(unitOf(topics.sink, ['b']), 1, true)).toEqual({ kind: 'durable', committed: true });
    const second = await positionAfter(first);
    expect(second).toEqual({ offset: 1, metadata: first!.metadata!.replace(/:1$/, ':2') });
    const values = (await readToEnd(fx.kafka, [topics.sink], { timeoutMs: 30_000, isolation: 'read_committed' })).map((r) =>
      r.value!.toString(),
    );
    expect(values).toEqual(['a', 'b']);
  });
});
