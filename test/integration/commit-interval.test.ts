/**
 * Commits on time with a slow processor, on the real broker: a task commits when its commit
 * interval is due, even in the middle of a poll of up to 500 records. With a processor that
 * takes 25 ms per record, under at_least_once and exactly_once, the group's committed offset
 * advances at least once every 3 × commit interval while records are processed — not in steps
 * of 500 records (12.5 s) as before.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-commit-interval');
const scenarios = new ScriptedScenarios(fx);

const COMMIT_INTERVAL_MS = 200;
const RECORD_MS = 25;
/** 6 s of processing: about 30 commit intervals. */
const RECORDS = 240;

describe(onClient('weir run commits on time with a slow processor'), () => {
  for (const guarantee of ['at_least_once', 'exactly_once'] as const) {
    it(`${guarantee}: the committed offset advances at least once every 3 × commit interval (25 ms per record)`, async () => {
      const s = await scenarios.create(`commit-${guarantee}`, {
        partitions: 1,
        env: { WEIR_TEST_GUARANTEE: guarantee, WEIR_TEST_RECORD_DELAY_MS: String(RECORD_MS) },
        args: ['--commit-interval-ms', String(COMMIT_INTERVAL_MS)],
      });
      const scripts: Script[] = Array.from({ length: RECORDS }, (_, seq) => ({ id: `r${seq}`, seq }));
      await s.send(scripts);
      const committed = async (): Promise<number> => {
        const [offsets] = await fx.admin.fetchOffsets({ groupId: s.id, topics: [s.topics.source] });
        return Math.max(0, Number(offsets!.partitions[0]!.offset));
      };

      const worker = s.start();
      // Each time the committed offset is seen to change: when, and to what.
      const advances: Array<{ readonly atMs: number; readonly offset: number }> = [];
      await waitFor(
        async () => {
          const offset = await committed();
          if (offset !== (advances.at(-1)?.offset ?? 0)) advances.push({ atMs: Date.now(), offset });
          return offset >= RECORDS;
        },
        60_000,
        () => `committed offset ${advances.at(-1)?.offset ?? 0} of ${RECORDS}`,
        10,
      );
      expect(await worker.stop('SIGTERM')).toBe(0);

      // From the first commit to the last record's: no gap above 3 × commit interval.
      const gaps = advances.slice(1).map((a, i) => ({ ms: a.atMs - advances[i]!.atMs, to: a.offset }));
      const late = gaps.filter((g) => g.ms > 3 * COMMIT_INTERVAL_MS);
      expect(late, `gaps between commits: ${gaps.map((g) => `${g.ms}ms→${g.to}`).join(' ')}`).toEqual([]);
      // Steps of about one interval's records (8 at 25 ms per record), far from one step per poll.
      const biggestStep = Math.max(...advances.map((a, i) => a.offset - (advances[i - 1]?.offset ?? 0)));
      expect(biggestStep).toBeLessThanOrEqual((3 * COMMIT_INTERVAL_MS) / RECORD_MS);
      expect(advances.length).toBeGreaterThanOrEqual((RECORDS * RECORD_MS) / (3 * COMMIT_INTERVAL_MS));
    });
  }
});
