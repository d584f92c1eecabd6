/**
 * The librdkafka binding's own contracts on the real broker, beyond what the shared suite
 * covers through `weir run`: a range read that never joins its group but commits its progress
 * to it (past trailing transaction markers); a revocation that waits for `onRevoked` — which
 * commits through the same consumer — before another member gets the partitions; a static
 * member's `group.instance.id` in the group description, and the older of two members with the
 * same id crashing (fenced); KIP-447 offsets sent with a live member's group metadata; a fenced
 * transactional producer; and a new task's offsets read once stable (require_stable). Runs in
 * the `integration-librdkafka` project only.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { produce } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { MemberFencedError, ProducerFencedError } from '../../src/errors.js';
import type { GroupConsumer, GroupConsumerHandlers, RevocationEvent } from '../../src/kafka/group-consumer.js';
import { LibrdkafkaClient } from '../../src/librdkafka/librdkafka-client.js';
import type { TopicPartition } from '../../src/record/record-types.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-librdkafka');

const client = (clientId = `weir-it-rdk-${randomUUID().slice(0, 6)}`) =>
  new LibrdkafkaClient({ brokers: fx.brokers.split(','), clientId, logger: pino({ level: 'silent' }) });

async function topicWith(partitions: number, records: number): Promise<string> {
  const topic = `weir-it-rdk-${randomUUID().slice(0, 8)}`;
  await fx.createTopics([{ topic, partitions }]);
  await produce(
    fx.kafka,
    topic,
    Array.from({ length: records }, (_, i) => ({ key: `k${i}`, value: `v${i}`, partition: i % partitions })),
  );
  return topic;
}

/** A group member that takes every batch, from offset 0 of each partition it gets. */
function member(
  rdk: LibrdkafkaClient,
  groupId: string,
  topic: string,
  overrides: Partial<GroupConsumerHandlers> & { groupInstanceId?: string } = {},
) {
  const seen: Array<{ partition: number; offset: number }> = [];
  const assigned: Array<{ memberId: string; added: TopicPartition[]; at: number }> = [];
  const crashes: unknown[] = [];
  const { groupInstanceId, ...handlers } = overrides;
  const consumer: GroupConsumer = rdk.groupConsumer(
    {
      groupId,
      topics: [topic],
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      readCommitted: true,
      ...(groupInstanceId ? { groupInstanceId } : {}),
    },
    {
      onBatch: (_t, partition, records) => {
        for (const r of records) seen.push({ partition, offset: r.offset });
        return true;
      },
      onRevoked: () => undefined,
      onAssigned: (e) => {
        assigned.push({ memberId: e.memberId, added: [...e.added], at: Date.now() });
        for (const tp of e.added) consumer.seek(tp, 0);
      },
      onCrash: (error) => crashes.push(error),
      onSkipped: () => undefined,
      ...handlers,
    },
  );
  fx.onTeardown(() => consumer.stop().catch(() => undefined));
  return { consumer, seen, assigned, crashes };
}

describe('the librdkafka binding on the real broker [librdkafka]', () => {
  it('reads a range without joining the group, commits its progress to it, and moves past trailing transaction markers', async () => {
    const rdk = client();
    const admin = rdk.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    const topic = await topicWith(2, 10);
    // A committed transaction on partition 0: 2 records and a marker at its end.
    const txn = rdk.transactionalProducer({ transactionalId: `${topic}-txn`, transactionTimeoutMs: 10_000 });
    await txn.init();
    await txn.begin();
    await txn.send([0, 1].map((i) => ({ topic, key: null, value: Buffer.from(`t${i}`), headers: {}, partition: 0 })));
    await txn.commit();
    await txn.disconnect();
    const marked = async () => ((await admin.latestOffsets(topic)).get(0) === 8 ? true : undefined);
    await waitFor(marked, 10_000, () => 'the commit marker (written after commit() returns) never reached partition 0');
    const ends = await admin.latestOffsets(topic);
    expect(ends).toEqual(
      new Map([
        [0, 8],
        [1, 5],
      ]),
    );

    const groupId = `${topic}-reader`;
    const handled: number[] = [];
    let membersWhileReading = -1;
    const ranges = new Map([...ends].map(([p, to]) => [p, { from: 0, to }]));
    const positions = await rdk.readTopicRange({
      topic,
      groupId,
      ranges,
      commit: true,
      onRecords: async (records) => {
        handled.push(...records.map((r) => r.offset));
        membersWhileReading = Math.max(membersWhileReading, (await admin.describeGroup(groupId)).members.length);
      },
    });
    expect(handled.length).toBe(12);
    // No member ever joined: the read was assign()ed, not subscribed.
    expect(membersWhileReading).toBe(0);
    // Partition 0 ends past the marker (offset 7), and that is committed too.
    expect(positions).toEqual(
      new Map([
        [0, 8],
        [1, 5],
      ]),
    );
    expect(await admin.committedOffsets(groupId, topic)).toEqual(
      new Map([
        [0, 8],
        [1, 5],
      ]),
    );

    // commit: false commits nothing.
    const dryGroup = `${topic}-dry`;
    await rdk.readTopicRange({ topic, groupId: dryGroup, ranges, commit: false, onRecords: async () => undefined });
    expect(await admin.committedOffsets(dryGroup, topic)).toEqual(new Map());
  });

  it('gives revoked partitions up only when onRevoked settles, after it committed through the same consumer', async () => {
    const topic = await topicWith(4, 40);
    const groupId = `${topic}-g`;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const revocations: Array<RevocationEvent & { committedAt: number }> = [];
    const a = member(client(), groupId, topic, {
      onRevoked: async (event) => {
        // Commit inside the callback, through the same consumer, then hold the partitions a while.
        await a.consumer.commit(event.partitions.map((tp) => ({ ...tp, offset: 10 })));
        revocations.push({ ...event, committedAt: Date.now() });
        await held;
      },
    });
    await a.consumer.start();
    await waitFor(
      () => a.seen.length >= 40,
      30_000,
      () => `first member read ${a.seen.length} of 40`,
    );

    const b = member(client(), groupId, topic);
    await b.consumer.start();
    await waitFor(
      () => revocations.length > 0,
      30_000,
      () => 'no revocation',
    );
    const revoked = revocations[0]!;
    expect(revoked).toMatchObject({ protocol: 'cooperative', lost: false });
    expect(revoked.partitions.length).toBe(2);
    // While onRevoked holds them, nobody else gets or reads the revoked partitions.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(b.assigned.flatMap((x) => x.added)).toEqual([]);
    expect(b.seen).toEqual([]);
    const releasedAt = Date.now();
    release();
    const given = await waitFor(
      () => b.assigned.find((x) => x.added.length > 0),
      30_000,
      () => 'second member got nothing',
    );
    expect(given.at).toBeGreaterThanOrEqual(releasedAt);
    expect(given.added.map((tp) => tp.partition).sort()).toEqual(revoked.partitions.map((tp) => tp.partition).sort());
    // The commit made inside onRevoked is the group's.
    const admin = client().admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    const committed = await admin.committedOffsets(groupId, topic);
    for (const tp of revoked.partitions) expect(committed.get(tp.partition)).toBe(10);
    // a kept its other partitions all along: no assignment after its first added any of them again.
    expect(a.assigned[0]!.added.length).toBe(4);
    expect(a.assigned.slice(1).flatMap((x) => x.added)).toEqual([]);
    expect(a.crashes).toEqual([]);
  });

  it("shows a static member's group.instance.id, and crashes the older of two members with the same id", async () => {
    const topic = await topicWith(2, 4);
    const groupId = `${topic}-static`;
    const rdk = client();
    const instance = `pod-${randomUUID().slice(0, 6)}`;
    const first = member(rdk, groupId, topic, { groupInstanceId: instance });
    await first.consumer.start();
    await waitFor(
      () => first.assigned.length > 0,
      30_000,
      () => 'no assignment',
    );
    const admin = rdk.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    const described = await admin.describeGroup(groupId);
    expect(described).toMatchObject({ state: 'Stable', protocol: 'cooperative-sticky' });
    expect(described.members).toHaveLength(1);
    expect(described.members[0]).toMatchObject({ memberId: first.assigned[0]!.memberId, groupInstanceId: instance, host: '/127.0.0.1' });
    expect(described.members[0]!.assignment.map((a) => a.partition).sort()).toEqual([0, 1]);

    // A newer member with the same group.instance.id takes the older one's place: the older one is fenced (fatal).
    const second = member(client(), groupId, topic, { groupInstanceId: instance });
    await second.consumer.start();
    await waitFor(
      () => first.crashes.length > 0,
      30_000,
      () => 'the older static member did not crash',
    );
    expect(first.crashes[0]).toBeInstanceOf(MemberFencedError);
    expect(first.crashes[0]).toMatchObject({ groupInstanceId: instance });
    expect(String(((first.crashes[0] as Error).cause as Error).message)).toMatch(/Static consumer fenced/);
    expect(second.crashes).toEqual([]);
  });

  it("sends a transaction's offsets with a live member's group metadata (KIP-447), and fences an older producer", async () => {
    const topic = await topicWith(1, 3);
    const groupId = `${topic}-eos`;
    const rdk = client();
    const m = member(rdk, groupId, topic);
    await m.consumer.start();
    await waitFor(
      () => m.seen.length >= 3,
      30_000,
      () => 'nothing read',
    );
    const transactionalId = `${topic}-tx`;
    const older = rdk.transactionalProducer({ transactionalId, transactionTimeoutMs: 10_000, groupConsumer: m.consumer });
    await older.init();
    await older.begin();
    await older.send([{ topic, key: null, value: Buffer.from('out'), headers: {} }]);
    await older.sendOffsets(groupId, [{ topic, partition: 0, offset: 3 }]);
    await older.commit();
    const admin = rdk.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    expect(await admin.committedOffsets(groupId, topic)).toEqual(new Map([[0, 3]]));

    // A newer instance of the transactional id fences the older one.
    const newer = rdk.transactionalProducer({ transactionalId, transactionTimeoutMs: 10_000 });
    await newer.init();
    fx.onTeardown(() => newer.disconnect());
    fx.onTeardown(() => older.disconnect());
    const fenced = await (async () => {
      await older.begin();
      await older.send([{ topic, key: null, value: Buffer.from('zombie'), headers: {} }]);
      await older.commit();
    })().catch((error: unknown) => error);
    expect(fenced).toBeInstanceOf(ProducerFencedError);
  });

  it("reads a new task's offsets once stable (require_stable): a transaction holding them is waited for, other reads never wait", async () => {
    const topic = await topicWith(2, 4);
    const groupId = `${topic}-stable`;
    const rdk = client();
    const m = member(rdk, groupId, topic);
    await m.consumer.start();
    await waitFor(
      () => m.seen.length >= 4,
      30_000,
      () => 'nothing read',
    );
    const admin = rdk.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    // A zombie-to-be: its transaction holds partition 0's offset, its commit still to come.
    const zombie = rdk.transactionalProducer({ transactionalId: `${topic}-tx`, transactionTimeoutMs: 10_000, groupConsumer: m.consumer });
    fx.onTeardown(() => zombie.disconnect());
    await zombie.init();
    await zombie.begin();
    await zombie.send([{ topic, key: null, value: Buffer.from('out'), headers: {} }]);
    await zombie.sendOffsets(groupId, [{ topic, partition: 0, offset: 2 }]);
    // The last committed offsets: nothing yet, at once.
    const began = Date.now();
    expect(await admin.committedOffsets(groupId, topic)).toEqual(new Map());
    // Partition 1 is not in the transaction: a stable read of it does not wait either.
    expect(await admin.committedOffsets(groupId, topic, [1], { requireStable: true })).toEqual(new Map());
    expect(Date.now() - began).toBeLessThan(5_000);
    // Partition 0: the read waits for the transaction, and sees the offset it committed.
    let settled = false;
    const stable = admin.committedOffsets(groupId, topic, [0], { requireStable: true }).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled).toBe(false);
    await zombie.commit();
    expect(await stable).toEqual(new Map([[0, 2]]));
  });
});
