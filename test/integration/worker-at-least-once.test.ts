/**
 * `weir run` on the real broker under at_least_once with blocking retries: outcomes, order,
 * DLQ headers, poison records, SIGKILL recovery, long backoffs and shutdown.
 */
import { describe, expect, it } from 'vitest';
import { endOffsets, produce, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { pollUntil } from '../../scripts/lib/wait-for.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-alos');
const scenarios = new ScriptedScenarios(fx);

/** Source partitions of every scenario here (the scenarios' default). */
const PARTITIONS = 3;
/** `commit.interval.ms` under at_least_once when `--commit-interval-ms` is not given. */
const AT_LEAST_ONCE_COMMIT_INTERVAL_MS = 1_000;

/** A scenario with 3 source partitions. */
const scenario = (name: string, env: Record<string, string> = {}) => scenarios.create(name, { env });

const ids = (records: readonly ReadRecord[]): string[] => records.map((r) => scriptOf(r).id);
const distinct = (records: readonly ReadRecord[]): number => new Set(ids(records)).size;

describe(onClient('weir run (at_least_once, blocking retries)'), () => {
  it('puts every input in exactly one of sink or DLQ, keeps per-partition order, and writes full DLQ headers', async () => {
    const s = await scenario('alos', { WEIR_TEST_MAX_ATTEMPTS: '3', WEIR_TEST_BACKOFF_MS: '20' });
    const scripts: Script[] = Array.from({ length: 300 }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq % 11 === 0 ? { failAttempts: 1 + (seq % 2) } : {}),
      ...(seq === 40 || seq === 41 || seq === 200 ? { kind: 'fatal' as const } : {}),
      ...(seq === 77 || seq === 150 ? { kind: 'poison' as const } : {}),
    }));
    await s.send(scripts);
    await produce(fx.kafka, s.topics.source, [{ key: 'k-bad', value: '{"id": "bad-json"', headers: { trace: 'bad-json' } }]);
    const worker = s.start();
    const { records, complete } = await s.outcomes((rs) => rs.length >= 301);
    expect(complete).toBe(true);
    expect(await worker.stop('SIGTERM')).toBe(0);

    const sink = records.filter((r) => r.topic === s.topics.sink);
    const dlq = records.filter((r) => r.topic === s.topics.dlq);
    expect(records).toHaveLength(301);
    const dlqIds = dlq.map((r) => r.headers['trace']).sort();
    expect(dlqIds).toEqual(['bad-json', 'r150', 'r200', 'r40', 'r41', 'r77']);
    expect(new Set([...ids(sink), ...dlqIds]).size).toBe(301);

    // Per key (= per source partition), successes arrive in the order they were produced.
    const byKey = new Map<string, number[]>();
    for (const r of sink) byKey.set(r.key!, [...(byKey.get(r.key!) ?? []), scriptOf(r).seq]);
    for (const [key, seqs] of byKey) expect(seqs, `order of key ${key}`).toEqual([...seqs].sort((a, b) => a - b));
    // Retried records succeeded on the attempt after their scripted failures.
    for (const r of sink) {
      const v = scriptOf(r);
      expect(v.attempt).toBe((v.failAttempts ?? 0) + 1);
    }

    // DLQ copies: key, value and headers of the original, plus weir's headers.
    const source = await readTopics(fx.kafka, [s.topics.source], { until: (rs) => rs.length >= 301, timeoutMs: 30_000 });
    const original = new Map(source.records.map((r) => [r.headers['trace'], r]));
    for (const dead of dlq) {
      const trace = dead.headers['trace']!;
      const from = original.get(trace)!;
      expect(dead.key).toBe(from.key);
      expect(dead.value!.equals(from.value!)).toBe(true);
      expect(dead.headers['weir.original.topic']).toBe(s.topics.source);
      expect(dead.headers['weir.original.partition']).toBe(String(from.partition));
      expect(dead.headers['weir.original.offset']).toBe(String(from.offset));
      expect(dead.headers['weir.original.timestamp']).toBe(String(from.timestamp));
      expect(dead.headers['weir.application.id']).toBe(s.id);
      expect(dead.headers['weir.processor']).toBe('scripted');
      expect(Number(dead.headers['weir.first.failure.ms'])).toBeLessThanOrEqual(Number(dead.headers['weir.last.failure.ms']));
      expect(Number(dead.headers['weir.first.failure.ms'])).toBeGreaterThanOrEqual(from.timestamp);
      expect(Buffer.byteLength(dead.headers['weir.error.stack'] ?? '')).toBeLessThanOrEqual(8 * 1024);
      const expected =
        trace === 'bad-json'
          ? { cls: 'DeserializationError', attempts: '0' }
          : ['r77', 'r150'].includes(trace)
            ? { cls: 'ScriptedFailure', attempts: '3' }
            : { cls: 'NonRetriableError', attempts: '1' };
      expect(dead.headers['weir.error.class'], trace).toBe(expected.cls);
      expect(dead.headers['weir.attempts'], trace).toBe(expected.attempts);
      expect(dead.headers['weir.error.message']).toBeTruthy();
      expect(dead.headers['weir.error.stack']).toContain(dead.headers['weir.error.message']);
    }

    // The record after a poison record in its partition was processed too.
    const poison = original.get('r77')!;
    const next = source.records.find((r) => r.partition === poison.partition && r.offset === poison.offset + 1)!;
    expect(records.some((r) => r.headers['trace'] === next.headers['trace'])).toBe(true);

    // Sink and DLQ topics were created with the source's partition count; every offset is committed.
    const admin = fx.admin;
    const meta = await admin.fetchTopicMetadata({ topics: [s.topics.sink, s.topics.dlq] });
    expect(meta.topics.map((t) => t.partitions.length)).toEqual([3, 3]);
    const [committed] = await admin.fetchOffsets({ groupId: s.id, topics: [s.topics.source] });
    const ends = (await endOffsets(admin, [s.topics.source])).get(s.topics.source)!;
    for (const p of committed!.partitions) expect(Number(p.offset)).toBe(ends.get(p.partition));
  });

  it('loses nothing when the worker is SIGKILLed mid-stream and restarted, with duplicates bounded by the records between two commits', async () => {
    const s = await scenario('kill', { WEIR_TEST_BACKOFF_MS: '5' });
    const total = 4_000;
    const commitIntervalMs = 200;
    await s.send(Array.from({ length: total }, (_, seq) => ({ id: `r${seq}`, seq, ...(seq % 20 === 0 ? { failAttempts: 1 } : {}) })));
    const first = s.start(['--commit-interval-ms', String(commitIntervalMs), '--session-timeout-ms', '6000']);
    const assigned = await first.waitForLog((l) => l.msg === 'partitions assigned');
    // The first worker's commits as seen from outside: when each partition's committed offset moved.
    const assignedAt = Date.parse(String(assigned['time']));
    const advances = new Map<number, Array<{ readonly atMs: number; readonly offset: number }>>();
    let killed = false;
    const sampling = pollUntil(
      async () => {
        const [offsets] = await fx.admin.fetchOffsets({ groupId: s.id, topics: [s.topics.source] });
        for (const p of offsets!.partitions) {
          const seen = advances.get(p.partition) ?? [];
          const offset = Math.max(0, Number(p.offset));
          if (offset !== (seen.at(-1)?.offset ?? 0)) advances.set(p.partition, [...seen, { atMs: Date.now(), offset }]);
        }
        return killed;
      },
      120_000,
      20,
    );
    const progress = await s.outcomes((rs) => rs.length >= total / 4);
    expect(progress.complete).toBe(true);
    const killedAt = Date.now();
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    killed = true;
    await sampling;
    const second = s.start();
    const { records, complete } = await s.outcomes((rs) => distinct(rs) >= total, 90_000);
    expect(await second.stop('SIGTERM')).toBe(0);
    expect(complete).toBe(true);
    const duplicates = records.length - distinct(records);
    expect(distinct(records)).toBe(total);
    // The bound, from the run: the records processed since a partition's last commit — at most
    // the longest time a partition went without a commit (one commit interval plus the commit's
    // own time, or a failed commit's retry, as it really went; or since its last one at the
    // kill), at the first worker's rate (twice, for bursts) — plus the record in hand of each task.
    let gapMs = 0;
    // The rate: the first worker's outputs over its time, or the sum of each partition's fastest
    // progress (committed offsets over ≥ 300 ms), whichever is higher.
    let peakPerMs = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      const seen = (advances.get(p) ?? []).filter((a) => a.atMs <= killedAt);
      const times = [assignedAt, ...seen.map((a) => a.atMs), killedAt];
      for (let i = 1; i < times.length; i++) gapMs = Math.max(gapMs, times[i]! - times[i - 1]!);
      let fastest = 0;
      for (let i = 0; i < seen.length; i++)
        for (let j = i + 1; j < seen.length; j++)
          if (seen[j]!.atMs - seen[i]!.atMs >= 300)
            fastest = Math.max(fastest, (seen[j]!.offset - seen[i]!.offset) / (seen[j]!.atMs - seen[i]!.atMs));
      peakPerMs += fastest;
    }
    const byFirst = distinct(records.filter((r) => (scriptOf(r) as { pid?: number }).pid === first.child.pid));
    const perMs = Math.max(peakPerMs, byFirst / Math.max(1, killedAt - assignedAt));
    const bound = Math.ceil(2 * perMs * gapMs) + PARTITIONS;
    console.log(
      `[kill test] inputs ${total}, outcomes ${records.length}, duplicates ${duplicates} (bound ${bound}: ${(perMs * 1000).toFixed(0)} records/s, longest gap between commits ${gapMs} ms)`,
    );
    expect(duplicates).toBeLessThanOrEqual(bound);
  });

  it('hands partitions over when a second worker joins and the first one leaves, losing nothing, with duplicates bounded per rebalance', async () => {
    const s = await scenario('rebalance', { WEIR_TEST_BACKOFF_MS: '5', WEIR_TEST_RECORD_DELAY_MS: '2' });
    const total = 6_000;
    await s.send(Array.from({ length: total }, (_, seq) => ({ id: `r${seq}`, seq, ...(seq % 25 === 0 ? { failAttempts: 1 } : {}) })));
    const began = Date.now();
    const a = s.start(['--session-timeout-ms', '6000', '--max-buffered-records', '200']);
    expect((await s.outcomes((rs) => rs.length >= total / 4)).complete).toBe(true);
    const b = s.start(['--session-timeout-ms', '6000', '--max-buffered-records', '200']);
    await b.waitForLog((l) => l.msg === 'task started');
    expect((await s.outcomes((rs) => distinct(rs) >= total / 2)).complete).toBe(true);
    expect(await a.stop('SIGTERM')).toBe(0);
    await b.waitForLog((l) => l.msg === 'partitions assigned' && (l['partitions'] as string[]).length === 3);
    const { records, complete } = await s.outcomes((rs) => distinct(rs) >= total, 90_000);
    expect(await b.stop('SIGTERM')).toBe(0);
    expect(complete).toBe(true);
    expect(distinct(records)).toBe(total);
    // Each worker saw the other: A at B's join, B at A's leave.
    expect(a.logs.filter((l) => l.msg === 'partitions assigned').length).toBeGreaterThanOrEqual(2);
    expect(b.logs.filter((l) => l.msg === 'partitions assigned').length).toBeGreaterThanOrEqual(2);
    // The bound, from the run: at each of the two rebalances (B joins, A leaves), the moved
    // partitions replay at most one commit interval (1 s, at twice the mean rate) plus the record
    // in hand of each task.
    const duplicates = records.length - distinct(records);
    const perMs = total / (Date.now() - began);
    const bound = 2 * (Math.ceil(2 * perMs * AT_LEAST_ONCE_COMMIT_INTERVAL_MS) + PARTITIONS);
    console.log(
      `[rebalance test] inputs ${total}, outcomes ${records.length}, duplicates ${duplicates} (bound ${bound}: ${(perMs * 1000).toFixed(0)} records/s)`,
    );
    expect(duplicates).toBeLessThanOrEqual(bound);
  });

  it('keeps its group membership through a backoff longer than the session timeout', async () => {
    const s = await scenario('backoff', { WEIR_TEST_MAX_ATTEMPTS: '2', WEIR_TEST_BACKOFF_MS: '9000', WEIR_TEST_BACKOFF_MAX_MS: '9000' });
    const worker = s.start(['--session-timeout-ms', '6000', '--heartbeat-interval-ms', '1000']);
    await worker.waitForLog((l) => l.msg === 'task started');
    const began = Date.now();
    await s.send([{ id: 'slow', seq: 0, failAttempts: 1 }]);
    // Other keys keep flowing while `slow` waits (they may share its partition only by chance: seq 1..9 → keys k1..k9).
    await s.send(Array.from({ length: 9 }, (_, i) => ({ id: `fast${i + 1}`, seq: i + 1 })));
    const { records, complete } = await s.outcomes((rs) => rs.some((r) => r.headers['trace'] === 'slow'), 40_000);
    const waited = Date.now() - began;
    expect(complete).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(9_000);
    expect(records.filter((r) => r.headers['trace'] !== 'slow').length).toBeGreaterThan(0);
    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(worker.logs.filter((l) => l.msg.startsWith('group rebalancing'))).toEqual([]);
    expect(worker.logs.filter((l) => l.msg === 'partitions assigned')).toHaveLength(1);
  });
});
