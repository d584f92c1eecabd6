/**
 * weir reads only committed input, under both guarantees: records of an aborted upstream
 * transaction (as an aborted `weir dlq replay` chunk, or any transactional producer's) are
 * never processed, while the committed records around them are — also when two upstream
 * transactions interleave in one partition and the one that began first is aborted last (the
 * broker lists aborted transactions in abort order, which kafkajs 2.2.4's own filter took for
 * first-offset order: see src/kafkajs/aborted-transactions.ts).
 */
import { describe, expect, it } from 'vitest';
import { readToEnd } from '../../scripts/lib/topic-io.js';
import { readTopicNow } from '../../scripts/lib/read-topic-now.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-read-committed');
const scenarios = new ScriptedScenarios(fx);

describe(onClient('weir run reads read_committed'), () => {
  for (const guarantee of ['at_least_once', 'exactly_once'] as const) {
    it(`${guarantee}: records of an aborted upstream transaction are never processed`, async () => {
      const s = await scenarios.create(`rc-${guarantee}`, { partitions: 2, env: { WEIR_TEST_GUARANTEE: guarantee } });
      const producer = fx.kafka.producer({ transactionalId: `${s.id}-upstream`, idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      fx.onTeardown(() => producer.disconnect());
      const write = async (scripts: readonly Script[], outcome: 'commit' | 'abort'): Promise<void> => {
        const txn = await producer.transaction();
        await txn.send({
          topic: s.topics.source,
          acks: -1,
          messages: scripts.map((sc) => ({ key: `k${sc.seq % 4}`, value: JSON.stringify(sc), headers: { trace: sc.id } })),
        });
        await (outcome === 'commit' ? txn.commit() : txn.abort());
      };
      const batch = (prefix: string, from: number): Script[] =>
        Array.from({ length: 10 }, (_, i) => ({ id: `${prefix}${from + i}`, seq: from + i }));
      await write(batch('c', 0), 'commit');
      await write(batch('aborted', 10), 'abort');
      await write(batch('c', 20), 'commit');

      const worker = s.start();
      const { complete } = await s.outcomes((rs) => rs.length >= 20);
      expect(complete).toBe(true);
      // Every source offset, aborted ones and markers included, is behind the group's position.
      expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 30_000)).toBe(true);
      expect(await worker.stop('SIGTERM')).toBe(0);

      const outputs = await readTopicNow(fx.kafka, fx.admin, s.topics.sink, { timeoutMs: 20_000, isolation: 'read_uncommitted' });
      const ids = outputs.map((r) => scriptOf(r).id);
      expect(ids.filter((id) => id.startsWith('aborted'))).toEqual([]);
      expect(new Set(ids)).toEqual(new Set([...batch('c', 0), ...batch('c', 20)].map((sc) => sc.id)));
    });
  }

  it('records of interleaved upstream transactions aborted out of order are never processed', async () => {
    const s = await scenarios.create('rc-order', { partitions: 1, env: { WEIR_TEST_GUARANTEE: 'exactly_once' } });
    const upstream = async (name: string) => {
      const producer = fx.kafka.producer({ transactionalId: `${s.id}-${name}`, idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      fx.onTeardown(() => producer.disconnect());
      return producer.transaction();
    };
    const send = (txn: Awaited<ReturnType<typeof upstream>>, prefix: string, from: number) =>
      txn.send({
        topic: s.topics.source,
        acks: -1,
        messages: Array.from({ length: 5 }, (_, i) => ({ key: 'k', value: JSON.stringify({ id: `${prefix}${from + i}`, seq: from + i }) })),
      });
    // A begins first and is aborted last; B begins later and is aborted first; C commits around them.
    const [a, b, c1, c2] = await Promise.all([upstream('a'), upstream('b'), upstream('c1'), upstream('c2')]);
    await send(a, 'aborted-a', 0);
    await send(b, 'aborted-b', 5);
    await send(c1, 'c', 10);
    await c1.commit();
    await b.abort();
    await a.abort();
    await send(c2, 'c', 15);
    await c2.commit();
    const committed = Array.from({ length: 10 }, (_, i) => `c${10 + i}`);

    // The test tools' read_committed reads (kafkajs, with weir's filter) agree.
    const source = await readTopicNow(fx.kafka, fx.admin, s.topics.source, { timeoutMs: 20_000 });
    expect(source.map((r) => scriptOf(r).id)).toEqual(committed);

    const worker = s.start();
    expect((await s.outcomes((rs) => rs.length >= committed.length)).complete).toBe(true);
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 30_000)).toBe(true);
    expect(await worker.stop('SIGTERM')).toBe(0);
    const outputs = await readToEnd(fx.kafka, [s.topics.sink, s.topics.dlq], { timeoutMs: 20_000, isolation: 'read_uncommitted' });
    expect(outputs.map((r) => scriptOf(r).id).sort()).toEqual([...committed].sort());
  });
});
