/**
 * `weir run --threads 2` on the real broker, when a thread crashes: the thread is taken out of the
 * group at once and replaced (measured: how long each partition went without output), and the
 * process's counters keep the crashed thread's counts. The rest of stream threads:
 * stream-threads-group.test.ts.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import { readToEnd } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';
import { longestGap, outputTimes, taskPartition } from './support/output-gaps.js';
import { assigned, distinct, outputOf } from './support/thread-output.js';

const fx = useIntegrationFixture('weir-it-threads-crash');
const scenarios = new ScriptedScenarios(fx);

const PARTITIONS = 6;

describe(onClient('weir run --threads 2'), () => {
  it("takes a thread that crashes out of the group at once: the other thread stalls for one rebalance at most, the dead one's partitions run again within 5 s, nothing is lost", async () => {
    const marker = path.join(fx.tempDir(), 'crashed');
    const s = await scenarios.create('threads-crash', {
      partitions: PARTITIONS,
      env: { WEIR_TEST_CRASH_MARKER: marker, WEIR_TEST_RECORD_DELAY_MS: '10' },
    });
    // A 30 s session: a stall shorter than that is not the session timeout at work.
    const worker = s.start(['--threads', '2', '--session-timeout-ms', '30000', '--commit-interval-ms', '200']);
    await worker.waitForLog((l) => l.msg === 'stream threads started', 60_000);

    // A backlog on every partition that lasts well past the crash and the replacement (each record
    // takes 10 ms, so each partition writes steadily), with one record that ends the thread that reads it.
    const total = 9_000;
    const crashSeq = 1_500;
    const scripts: Script[] = Array.from({ length: total }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq === crashSeq ? { kind: 'crash' } : {}),
    }));
    await s.send(scripts, 60);
    const crash = await worker.waitForLog((l) => l.msg === 'stream thread ended; replacing it', 60_000);
    const crashedAt = Date.parse(String(crash['time']));
    const crashed = crash['thread'] as number;
    const survivor = crashed === 1 ? 2 : 1;
    const left = await worker.waitForLog((l) => l.msg === "the ended stream thread's member left the group", 10_000);
    expect(left['thread']).toBe(crashed);
    const replacement = await worker.waitForLog(
      (l) => l.msg === 'worker started' && l['thread'] === crashed && Date.parse(String(l['time'])) > crashedAt,
      60_000,
    );
    const replacedAt = Date.parse(String(replacement['time']));

    const { records, complete } = await s.outcomes((rs) => distinct(rs) >= total, 120_000);
    expect(complete).toBe(true);
    expect(distinct(records)).toBe(total);
    expect(await worker.stop('SIGTERM')).toBe(0);

    // Who held which partitions when the crash came.
    const holding = (thread: number): number[] => {
      const lines = worker.logs.filter((l) => assigned(thread)(l) && Date.parse(String(l['time'])) <= crashedAt);
      return (lines.at(-1)!['partitions'] as string[]).map(taskPartition);
    };
    const dead = holding(crashed);
    const kept = holding(survivor);
    expect(dead.length + kept.length).toBe(PARTITIONS);
    const times = outputTimes(records.map(outputOf));
    const window = { from: crashedAt - 1_000, to: replacedAt + 3_000 };
    // Every partition still had a backlog after the replacement joined: the window is measured.
    for (const p of [...dead, ...kept]) expect(times.get(p)!.at(-1)!, `partition ${p}`).toBeGreaterThan(window.to);

    // The surviving thread went through the rebalances (the member leaving, the replacement
    // joining), and its partitions never stopped longer than one rebalance.
    const rebalanced = worker.logs.filter(
      (l) => l.msg === 'group rebalancing: suspending tasks' && l['thread'] === survivor && Date.parse(String(l['time'])) > crashedAt,
    );
    expect(rebalanced.length).toBeGreaterThan(0);
    const gaps = kept.map((p) => ({ partition: p, ...longestGap(times.get(p)!, window.from, window.to) }));
    // The dead thread's partitions were processed again soon after the crash.
    const resumed = dead.map((p) => ({ partition: p, afterMs: times.get(p)!.find((t) => t > crashedAt)! - crashedAt }));
    console.info(
      `[stream-threads] crash: member left in ${String(left['tookMs'])} ms, replacement joined after ${replacedAt - crashedAt} ms, ` +
        `${rebalanced.length} rebalance(s) of the surviving thread; ` +
        `surviving thread's longest gap per partition ${JSON.stringify(gaps.map((g) => g.gapMs))} ms; ` +
        `dead thread's partitions resumed after ${JSON.stringify(resumed.map((r) => r.afterMs))} ms`,
    );
    for (const g of gaps) expect(g.gapMs, `surviving partition ${g.partition}`).toBeLessThanOrEqual(5_000);
    for (const r of resumed) expect(r.afterMs, `dead partition ${r.partition}`).toBeLessThanOrEqual(5_000);

    // The crashed record's own outcome came after the crash, from another thread.
    const redone = records.map(outputOf).filter((o) => o.id === `r${crashSeq}`);
    expect(redone.length).toBeGreaterThanOrEqual(1);
    expect(redone.every((o) => o.writtenAtMs > crashedAt)).toBe(true);
    expect(worker.logs.filter((l) => l.msg === 'stream thread ended; replacing it')).toHaveLength(1);
  });

  it('keeps every count of a thread that crashed: after a drain, one scrape counts the successes in the sink and every rebalance', async () => {
    const marker = path.join(fx.tempDir(), 'crashed');
    const s = await scenarios.create('threads-counts', { partitions: PARTITIONS, env: { WEIR_TEST_CRASH_MARKER: marker } });
    const port = await freePort();
    const worker = s.start(['--threads', '2', '--metrics-port', String(port), '--session-timeout-ms', '6000']);
    await worker.waitForLog((l) => l.msg === 'stream threads started', 60_000);
    // No scrape until the end: a thread's counts must reach the process without one.
    const wave = (from: number, n: number): Script[] => Array.from({ length: n }, (_, i) => ({ id: `r${from + i}`, seq: from + i }));
    await s.send(wave(0, 3_000), 60);
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 60_000)).toBe(true);
    // The crash comes while the threads are idle: no write of the dying thread is in flight
    // (one would be in the sink, uncounted, see weir_records_total).
    await s.send([{ id: 'crash', seq: 3_000, kind: 'crash' }]);
    await worker.waitForLog((l) => l.msg === 'stream thread ended; replacing it', 60_000);
    await s.send(wave(3_001, 3_000), 60);
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 60_000)).toBe(true);

    const sink = await readToEnd(fx.kafka, [s.topics.sink], { timeoutMs: 60_000 });
    expect(distinct(sink)).toBe(6_001);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const successes = sumMetric(text, 'weir_records_total', { outcome: 'success' });
    const rebalances = sumMetric(text, 'weir_rebalances_total');
    const rebalancesLogged = worker.logs.filter((l) => l.msg === 'group rebalancing: suspending tasks').length;
    console.info(
      `[stream-threads] counts: sink ${sink.length} successes, weir_records_total{outcome="success"} ${successes}; ` +
        `weir_rebalances_total ${rebalances}, rebalances logged ${rebalancesLogged}`,
    );
    expect(successes).toBe(sink.length);
    expect(rebalancesLogged).toBeGreaterThan(0);
    expect(rebalances).toBeGreaterThanOrEqual(rebalancesLogged);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });
});
