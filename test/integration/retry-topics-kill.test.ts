/**
 * No loss under at_least_once with retry topics: SIGKILL the worker while records wait in
 * the retry tiers, restart it, and every input still ends in the sink or the DLQ. The source
 * and tier offsets are committed only after the tier / DLQ copies are acknowledged, so a kill
 * can duplicate (counted here) but never lose.
 */
import { describe, expect, it } from 'vitest';
import { endOffsets, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-retry-kill');
const scenarios = new ScriptedScenarios(fx);

const idOf = (r: ReadRecord): string => scriptOf(r).id;

describe(onClient('weir run (retry topics, at_least_once)'), () => {
  it('loses nothing when the worker is SIGKILLed twice in the middle of retry traffic', async () => {
    const sc = await scenarios.create('rt-kill', {
      env: { WEIR_TEST_RETRY_MODE: 'topics', WEIR_TEST_MAX_ATTEMPTS: '3', WEIR_TEST_BACKOFF_MS: '1000', WEIR_TEST_BACKOFF_MAX_MS: '2000' },
      args: ['--commit-interval-ms', '200', '--session-timeout-ms', '6000'],
    });
    const topics = { ...sc.topics, tier0: `${sc.id}.scripted.retry.0`, tier1: `${sc.id}.scripted.retry.1` };
    const start = () => sc.start();
    const admin = fx.admin;
    const scripts: Script[] = Array.from({ length: 600 }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq % 4 === 1 ? { failAttempts: 1 } : seq % 4 === 2 ? { failAttempts: 2 } : {}),
      ...(seq % 29 === 3 ? { kind: 'poison' as const } : seq % 31 === 5 ? { kind: 'fatal' as const } : {}),
    }));
    const expectedDlq = new Set(scripts.filter((s) => s.kind !== undefined).map((s) => s.id));
    const tierRecords = async (): Promise<number> => {
      const ends = await endOffsets(admin, [topics.tier0, topics.tier1]);
      let n = 0;
      for (const partitions of ends.values()) for (const end of partitions.values()) n += end;
      return n;
    };

    const first = start();
    await first.waitForLog((l) => l.msg === 'worker started', 60_000);
    await sc.send(scripts, Number.MAX_SAFE_INTEGER);
    // Kill while many records wait in the tiers (due in 1–2 s) and others are still arriving.
    await waitFor(
      async () => (await tierRecords()) >= 100,
      30_000,
      () => 'no retry traffic',
    );
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const tierAtFirstKill = await tierRecords();
    // The kill really hit the middle of the work: not every input had its outcome yet.
    const finalsAtKill = [...(await endOffsets(admin, [topics.sink, topics.dlq])).values()]
      .flatMap((p) => [...p.values()])
      .reduce((a, b) => a + b, 0);
    expect(finalsAtKill).toBeLessThan(scripts.length);

    const second = start();
    await second.waitForLog((l) => l.msg === 'worker started', 60_000);
    // Kill again once the restarted worker has written more retry traffic.
    await waitFor(
      async () => (await tierRecords()) > tierAtFirstKill + 20,
      30_000,
      () => 'no retry traffic after the restart',
    );
    expect(await second.stop('SIGKILL')).toBe('SIGKILL');

    const third = start();
    const { records, complete } = await sc.outcomes((rs) => new Set(rs.map(idOf)).size >= scripts.length, 90_000);
    const seen = new Set(records.map(idOf));
    const missing = scripts.filter((s) => !seen.has(s.id)).map((s) => s.id);
    expect(missing, 'inputs in neither the sink nor the DLQ').toEqual([]);
    expect(complete).toBe(true);

    const sinkIds = new Set(records.filter((r) => r.topic === topics.sink).map(idOf));
    const dlqIds = new Set(records.filter((r) => r.topic === topics.dlq).map(idOf));
    expect([...dlqIds].sort()).toEqual([...expectedDlq].sort());
    expect([...sinkIds].filter((x) => dlqIds.has(x))).toEqual([]);
    expect(sinkIds.size + dlqIds.size).toBe(scripts.length);
    const duplicates = records.length - scripts.length;
    console.log(
      `[retry-topics-kill] ${scripts.length} inputs: ${sinkIds.size} in the sink, ${dlqIds.size} in the DLQ, ${duplicates} duplicate(s) from the two kills`,
    );

    expect(await third.stop('SIGTERM')).toBe(0);
  });
});
