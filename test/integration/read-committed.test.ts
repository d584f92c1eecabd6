/**
 * weir reads only committed input, under both guarantees: records of an aborted upstream
 * transaction (as an aborted `weir dlq replay` chunk, or any transactional producer's) are
 * never processed, while the committed records around them are.
 */
import { describe, expect, it } from 'vitest';
import { readTopicNow, waitForGroupCaughtUp } from '../../scripts/lib/topic-io.js';
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
});
