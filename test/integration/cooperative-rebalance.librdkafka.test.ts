/**
 * Cooperative rebalancing on librdkafka (cooperative-sticky, KIP-429), on the real broker: a
 * third worker joins two running workers under at_least_once while input keeps coming, then
 * leaves with SIGTERM. Revoked tasks finish the record in hand and commit inside the revocation
 * callback, so nothing is processed twice; tasks of partitions that stay never stop.
 */
import { describe, expect, it } from 'vitest';
import { readToEnd } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { WorkerLogLine, WorkerProcess } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf } from './support/scripted-scenario.js';
import { steadyInput } from './support/steady-input.js';
import { duplicateReport } from './support/duplicate-report.js';

const fx = useIntegrationFixture('weir-it-coop');
const scenarios = new ScriptedScenarios(fx);

const PARTITIONS = 6;
const FLAGS = ['--client', 'librdkafka', '--session-timeout-ms', '10000'];

/** The partitions of a worker's latest assignment, once it holds `count` of them. */
async function holding(worker: WorkerProcess, count: number, after = 0): Promise<string[]> {
  const line = await worker.waitForLog(
    (l) => l.msg === 'partitions assigned' && (l['partitions'] as string[]).length === count && logIndex(worker, l) >= after,
    60_000,
  );
  return line['partitions'] as string[];
}

/** Waits until the worker has started `count` tasks. */
async function running(worker: WorkerProcess, count: number): Promise<void> {
  await waitFor(
    () => lifecycle(worker).started.length >= count,
    60_000,
    () => `fewer than ${count} tasks started`,
  );
}

function logIndex(worker: WorkerProcess, line: WorkerLogLine): number {
  return worker.logs.indexOf(line);
}

/** Each task's lifecycle in a worker's log: the task ids it started and the ones it closed. */
function lifecycle(worker: WorkerProcess): { started: string[]; closed: string[] } {
  return {
    started: worker.logs.filter((l) => l.msg === 'task started').map((l) => l['task'] as string),
    closed: worker.logs.filter((l) => /^partition (revoked|lost)/.test(l.msg)).map((l) => l['task'] as string),
  };
}

describe('cooperative rebalancing (librdkafka)', () => {
  it('a third worker joins two running workers and leaves with SIGTERM: 0 duplicates, 0 lost, kept partitions never stop', async () => {
    const began = Date.now();
    const s = await scenarios.create('coop', { partitions: PARTITIONS, env: { WEIR_TEST_RECORD_DELAY_MS: '1' } });
    const a = s.start(FLAGS);
    const b = s.start(FLAGS);
    await Promise.all([holding(a, 3), holding(b, 3)]);
    await Promise.all([running(a, 3), running(b, 3)]);
    const input = steadyInput(fx.kafka, s.topics.source, { perSecond: 1_500 });

    const beforeJoin = { a: lifecycle(a).started, b: lifecycle(b).started };
    const aMark = a.logs.length;
    const bMark = b.logs.length;
    const c = s.start(FLAGS);
    const cHeld = await holding(c, 2);
    const aKept = await holding(a, 2, aMark);
    const bKept = await holding(b, 2, bMark);
    expect(new Set([...cHeld, ...aKept, ...bKept]).size).toBe(PARTITIONS);
    // C works on what it took before it leaves.
    await running(c, 2);
    expect((await s.outcomes((rs) => rs.some((r) => (scriptOf(r) as { pid?: number }).pid === c.child.pid), 60_000)).complete).toBe(true);

    expect(await c.stop('SIGTERM')).toBe(0);
    await Promise.all([holding(a, 3, aMark), holding(b, 3, bMark)]);
    const sent = await input.stop();
    // Once the group has committed every input, every output is durable (at_least_once commits
    // only after the outputs are acknowledged): read sink and DLQ completely.
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 90_000)).toBe(true);
    expect(await a.stop('SIGTERM')).toBe(0);
    expect(await b.stop('SIGTERM')).toBe(0);
    const outputs = await readToEnd(fx.kafka, [s.topics.sink, s.topics.dlq], { timeoutMs: 60_000 });
    const ids = outputs.map((r) => scriptOf(r).id);
    const counts = new Map<string, number>();
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    const duplicated = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    if (duplicated.length > 0) console.log(duplicateReport('coop', outputs, [a, b, c], duplicated, began).join('\n'));
    expect(sent).toBeGreaterThan(1_000);
    expect(new Set(ids).size).toBe(sent);
    expect(ids.length - new Set(ids).size).toBe(0);

    // No task was ever suspended, and a kept partition's task was started once and never closed.
    for (const [worker, kept, before] of [
      [a, aKept, beforeJoin.a],
      [b, bKept, beforeJoin.b],
    ] as const) {
      expect(worker.logs.filter((l) => l.msg.startsWith('group rebalancing'))).toEqual([]);
      const { started, closed } = lifecycle(worker);
      for (const task of kept) {
        expect(before).toContain(task);
        expect(started.filter((t) => t === task)).toHaveLength(1);
        expect(closed.filter((t) => t === task)).toEqual([]);
      }
    }
  });
});
