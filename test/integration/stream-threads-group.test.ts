/**
 * `weir run --threads 2` on the real broker: two consumer-group members in one process, every
 * record with one outcome, one /metrics, one log stream naming each thread, a SIGTERM that
 * drains and commits both threads; a start with the input already there that duplicates nothing;
 * more threads than partitions (capped at the partitions; an idle thread says so), and the
 * guarantees per thread: exactly_once with retry topics and Redis dedup, stopped by SIGTERM with
 * input in flight and started again. A thread that crashes: stream-threads-crash.test.ts.
 */
import { hostname } from 'node:os';
import { describe, expect, inject, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import { endOffsets, produce, readToEnd } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';
import { assigned, distinct, outputOf } from './support/thread-output.js';

const fx = useIntegrationFixture('weir-it-threads');
const scenarios = new ScriptedScenarios(fx);

const PARTITIONS = 6;

describe(onClient('weir run --threads 2'), () => {
  it('runs two group members in one process: every record has one outcome, one /metrics, each log line names its thread, SIGTERM commits both', async () => {
    const s = await scenarios.create('threads', { partitions: PARTITIONS, env: { WEIR_TEST_BACKOFF_MS: '5' } });
    const port = await freePort();
    const worker = s.start(['--threads', '2', '--metrics-port', String(port), '--session-timeout-ms', '6000']);
    await worker.waitForLog((l) => l.msg === 'stream threads started');
    // Both threads joined and the group settled on three partitions each before any input.
    await worker.waitForLog((l) => assigned(1)(l) && (l['partitions'] as string[]).length === 3);
    await worker.waitForLog((l) => assigned(2)(l) && (l['partitions'] as string[]).length === 3);

    const group = await fx.admin.describeGroups([s.id]);
    const members = group.groups[0]!.members;
    expect(members).toHaveLength(2);
    const prefix = `weir-${s.id}-${hostname()}-${worker.child.pid}-thread-`;
    expect(members.map((m) => m.clientId).sort()).toEqual([`${prefix}1`, `${prefix}2`]);

    const total = 3_000;
    await s.send(
      Array.from({ length: total }, (_, seq) => ({ id: `r${seq}`, seq, ...(seq % 50 === 0 ? { failAttempts: 1 } : {}) })),
      100,
    );
    const { records, complete } = await s.outcomes((rs) => distinct(rs) >= total);
    expect(complete).toBe(true);
    // One outcome each, and no duplicates: nothing moved between the two members.
    expect(records).toHaveLength(total);
    expect(distinct(records)).toBe(total);
    const byThread = new Map<number, number>();
    for (const r of records) byThread.set(outputOf(r).threadId, (byThread.get(outputOf(r).threadId) ?? 0) + 1);
    expect(byThread.size).toBe(2);
    expect(new Set(records.map((r) => outputOf(r).pid))).toEqual(new Set([worker.child.pid]));

    // One /metrics for the process: the threads' counts summed, their own state per thread.
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(sumMetric(text, 'weir_records_total', { outcome: 'success' })).toBe(total);
    expect(sumMetric(text, 'weir_records_total', { outcome: 'retry' })).toBe(total / 50);
    expect(sumMetric(text, 'weir_tasks', { thread: '1' })).toBe(3);
    expect(sumMetric(text, 'weir_tasks', { thread: '2' })).toBe(3);
    expect(text).toMatch(/^weir_process_process_cpu_seconds_total\{application_id="[^"]+"\} /m);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { threads: Array<{ thread: number; memberId: string }> };
    expect(body.threads.map((t) => t.thread)).toEqual([1, 2]);
    expect(new Set(body.threads.map((t) => t.memberId)).size).toBe(2);

    // SIGTERM: both threads finish, commit and leave; the process exits 0.
    expect(await worker.stop('SIGTERM')).toBe(0);
    const stopped = worker.logs.filter((l) => l.msg === 'worker stopped').map((l) => l['thread']);
    expect(stopped.sort()).toEqual([1, 2]);
    const [committed] = await fx.admin.fetchOffsets({ groupId: s.id, topics: [s.topics.source] });
    const ends = (await endOffsets(fx.admin, [s.topics.source])).get(s.topics.source)!;
    expect(committed!.partitions).toHaveLength(PARTITIONS);
    for (const p of committed!.partitions) expect(Number(p.offset), `partition ${p.partition}`).toBe(ends.get(p.partition));
    // Every line of the run names its thread, or comes from the process itself.
    const lines = worker.logs.filter((l) => l['thread'] !== undefined);
    expect(new Set(lines.map((l) => l['thread']))).toEqual(new Set([1, 2]));
  });

  it('starts n threads without duplicates: with the input already there, 200 000 records pass through at_least_once exactly once', async () => {
    const s = await scenarios.create('threads-start', { partitions: PARTITIONS });
    const total = 200_000;
    await produce(
      fx.kafka,
      s.topics.source,
      Array.from({ length: total }, (_, seq) => ({ key: `k${seq % 600}`, value: `{"id":"r${seq}","seq":${seq}}` })),
      10_000,
    );
    const startedAt = Date.now();
    const worker = s.start(['--threads', '2', '--session-timeout-ms', '6000']);
    const started = await worker.waitForLog((l) => l.msg === 'stream threads started', 60_000);
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 120_000)).toBe(true);
    const drainedAt = Date.now();
    const records = await readToEnd(fx.kafka, [s.topics.sink], { timeoutMs: 120_000 });
    expect(await worker.stop('SIGTERM')).toBe(0);

    console.info(
      `[stream-threads] start: gate opened ${String(started['settledInMs'])} ms after both threads joined; ` +
        `${total} records drained in ${drainedAt - startedAt} ms; sink ${records.length} records (${records.length - total} extra)`,
    );
    expect(distinct(records)).toBe(total);
    expect(records.length).toBe(total);
    // Both threads worked, and no task started before both had joined the group.
    const tasks = worker.logs.filter((l) => l.msg === 'task started');
    expect(new Set(tasks.map((l) => l['thread']))).toEqual(new Set([1, 2]));
    expect(tasks).toHaveLength(PARTITIONS);
    // About 35 s on a quiet 2-core machine; more on a busy one.
  }, 240_000);

  it('caps --threads at the partitions the application has, with one info line; a thread left without partitions says so', async () => {
    // 2 source partitions, blocking retries: no process can ever have more than 2 tasks.
    const s = await scenarios.create('threads-cap', { partitions: 2 });
    const worker = s.start(['--threads', '5', '--session-timeout-ms', '6000']);
    const started = await worker.waitForLog((l) => l.msg === 'stream threads started');
    expect(started['threads']).toBe(2);
    const capped = worker.logs.filter((l) => l.msg.startsWith('--threads'));
    expect(capped.map((l) => [l.level, l.msg])).toEqual([
      [
        30,
        '--threads 5 capped at 2: the application has 2 partition(s) to consume (sources and retry tiers), so more threads would take none',
      ],
    ]);
    expect((await fx.admin.describeGroups([s.id])).groups[0]!.members).toHaveLength(2);
    await s.send(Array.from({ length: 200 }, (_, seq) => ({ id: `r${seq}`, seq })));
    const { records, complete } = await s.outcomes((rs) => distinct(rs) >= 200);
    expect(complete).toBe(true);
    expect(records).toHaveLength(200);

    // A second process with 2 threads: 4 members for 2 partitions, so threads go idle and say so.
    const second = s.start(['--threads', '2', '--session-timeout-ms', '6000']);
    await second.waitForLog((l) => l.msg === 'stream threads started');
    const idle = await Promise.any(
      [worker, second].map((w) => w.waitForLog((l) => l.msg.startsWith('no partitions assigned: this stream thread is idle'), 60_000)),
    );
    expect([1, 2]).toContain(idle['thread']);
    expect(await second.stop('SIGTERM')).toBe(0);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('keeps exactly_once, retry topics and dedup per thread: a SIGTERM with input in flight drains both threads, and a restart loses and repeats nothing', async () => {
    const s = await scenarios.create('threads-eos', {
      partitions: PARTITIONS,
      env: {
        WEIR_TEST_GUARANTEE: 'exactly_once',
        WEIR_TEST_RETRY_MODE: 'topics',
        WEIR_TEST_DEDUP: 'redis',
        WEIR_TEST_MAX_ATTEMPTS: '3',
        WEIR_TEST_BACKOFF_MS: '20',
        WEIR_TEST_RECORD_DELAY_MS: '5',
      },
    });
    fx.trackDedupKeys(s.id);
    const args = ['--threads', '2', '--session-timeout-ms', '6000', '--redis-url', inject('redisUrl'), '--shutdown-timeout-ms', '20000'];
    // Every 40th a poison record (DLQ after 3 attempts through the tiers), every 25th failing once
    // (one hop through tier 0), every 100th a re-send of the record before it (dropped by dedup).
    const total = 2_000;
    const scripts: Script[] = Array.from({ length: total }, (_, seq) =>
      seq % 100 === 99
        ? { id: `r${seq - 1}`, seq }
        : { id: `r${seq}`, seq, ...(seq % 40 === 7 ? { kind: 'poison' as const } : seq % 25 === 3 ? { failAttempts: 1 } : {}) },
    );
    const ids = [...new Set(scripts.map((x) => x.id))];
    const first = s.start(args);
    await first.waitForLog((l) => assigned(1)(l) && (l['partitions'] as string[]).length > 0);
    await first.waitForLog((l) => assigned(2)(l) && (l['partitions'] as string[]).length > 0);
    await s.send(scripts, 60);
    // SIGTERM while input is left: both threads finish what they hold and commit.
    await first.waitForLog((l) => l.msg === 'record dead-lettered', 60_000);
    const lagAtStop = await sourceLag(s.id, s.topics.source);
    expect(lagAtStop).toBeGreaterThan(0);
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.logs.filter((l) => l.msg === 'worker stopped').map((l) => l['thread'])).toEqual(expect.arrayContaining([1, 2]));
    const second = s.start(args);
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 120_000)).toBe(true);
    // The retry tiers drain too: every id has its outcome.
    const seen = await s.outcomes((rs) => new Set(rs.map((r) => scriptOf(r).id)).size >= ids.length, 90_000);
    expect(seen.complete).toBe(true);
    expect(await second.stop('SIGTERM')).toBe(0);

    const records = await readToEnd(fx.kafka, [s.topics.sink, s.topics.dlq], { timeoutMs: 60_000 });
    const counts = new Map<string, number>();
    for (const r of records) counts.set(scriptOf(r).id, (counts.get(scriptOf(r).id) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    const poison = ids.filter((id) => scripts.find((x) => x.id === id)?.kind === 'poison');
    expect(
      records
        .filter((r) => r.topic === s.topics.dlq)
        .map((r) => scriptOf(r).id)
        .sort(),
    ).toEqual(poison.sort());
    // Both runs used both threads.
    for (const w of [first, second])
      expect(new Set(w.logs.filter((l) => l.msg === 'task started').map((l) => l['thread']))).toEqual(new Set([1, 2]));
  });
});

/** Input records not yet committed by the group, summed over the partitions. */
async function sourceLag(groupId: string, topic: string): Promise<number> {
  const ends = (await endOffsets(fx.admin, [topic])).get(topic) ?? new Map<number, number>();
  const [committed] = await fx.admin.fetchOffsets({ groupId, topics: [topic] });
  let lag = 0;
  for (const [partition, end] of ends) {
    const offset = Number(committed?.partitions.find((p) => p.partition === partition)?.offset ?? -1);
    lag += end - Math.max(0, offset);
  }
  return lag;
}
