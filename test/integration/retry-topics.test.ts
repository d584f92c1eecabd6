/**
 * `weir run` with non-blocking retry topics on the real broker: the worker consumes its own
 * tiers, never processes a tier record before its due time (measured with broker append
 * timestamps), and keeps the main partition flowing while a poison record waits.
 */
import { describe, expect, it } from 'vitest';
import type { ReadRecord } from '../../scripts/lib/topic-io.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

/** The broker stamps each record with its append time: a clock the worker does not control. */
const APPEND_TIME = { 'message.timestamp.type': 'LogAppendTime' } as const;

const fx = useIntegrationFixture('weir-it-retry-topics');
const scenarios = new ScriptedScenarios(fx);

/**
 * A retry-topic scenario on a one-partition source, its worker started. Sink, DLQ and tier
 * topics are created here with broker append timestamps (the worker finds them and creates
 * nothing). Every script gets its own key.
 */
async function scenario(name: string, tiers: number, env: Record<string, string>) {
  const s = await scenarios.create(name, {
    partitions: 1,
    env: { WEIR_TEST_RETRY_MODE: 'topics', ...env },
    precreate: { tiers, config: APPEND_TIME },
  });
  const worker = s.start();
  await worker.waitForLog((l) => l.msg === 'task started' && l['task'] === `${s.topics.source}-0`, 60_000);
  return {
    ...s,
    worker,
    send: (scripts: readonly Script[]) => s.send(scripts, Number.MAX_SAFE_INTEGER),
    read: (until: (records: readonly ReadRecord[]) => boolean, timeoutMs = 60_000) => s.outcomes(until, timeoutMs, s.topics.tiers),
  };
}

const num = (r: ReadRecord, header: string): number => Number(r.headers[header]);

describe(onClient('weir run (retry topics)'), () => {
  it('never processes a tier record before its due time: each hop and outcome is appended after the previous due time', async () => {
    // Tiers from the backoff schedule: 1 s, 2 s; the 2 s tier is reused for the third retry.
    const s = await scenario('rt-due', 2, { WEIR_TEST_MAX_ATTEMPTS: '4', WEIR_TEST_BACKOFF_MS: '1000', WEIR_TEST_BACKOFF_MAX_MS: '2000' });
    const scripts: Script[] = [
      { id: 'once', seq: 0, failAttempts: 1 },
      { id: 'twice', seq: 1, failAttempts: 2 },
      { id: 'thrice', seq: 2, failAttempts: 3 },
      { id: 'poison', seq: 3, kind: 'poison' },
      { id: 'fine', seq: 4 },
    ];
    await s.send(scripts);
    const isFinal = (r: ReadRecord) => r.topic === s.topics.sink || r.topic === s.topics.dlq;
    const { records, complete } = await s.read((rs) => rs.filter(isFinal).length >= scripts.length, 60_000);
    expect(complete).toBe(true);

    const expectedHops: Record<string, number> = { once: 1, twice: 2, thrice: 3, poison: 3, fine: 0 };
    let hopsChecked = 0;
    for (const script of scripts) {
      const mine = records.filter((r) => scriptOf(r).id === script.id);
      const hops = mine.filter((r) => s.topics.tiers.includes(r.topic)).sort((a, b) => num(a, 'weir.attempts') - num(b, 'weir.attempts'));
      const finals = mine.filter(isFinal);
      expect(finals, script.id).toHaveLength(1);
      expect(
        hops.map((h) => num(h, 'weir.attempts')),
        script.id,
      ).toEqual(Array.from({ length: expectedHops[script.id]! }, (_, i) => i + 1));
      // Retry n goes to tier min(n, 1): 1 s, then the 2 s tier (reused).
      expect(hops.map((h) => h.topic)).toEqual(hops.map((_, i) => s.topics.tiers[Math.min(i, 1)]));
      const chain = [...hops, finals[0]!];
      for (let i = 0; i < hops.length; i++) {
        const hop = hops[i]!;
        const due = num(hop, 'weir.retry.due.ms');
        const delay = i === 0 ? 1000 : 2000;
        expect(due - num(hop, 'weir.last.failure.ms')).toBe(delay);
        expect(hop.headers['weir.original.topic']).toBe(s.topics.source);
        expect(hop.headers['weir.original.offset']).toBe(String(script.seq));
        expect(hop.headers['weir.error.class']).toBe('ScriptedFailure');
        // The record made from this hop (next hop, sink or DLQ) was appended at or after its due time...
        const next = chain[i + 1]!;
        expect(next.timestamp, `${script.id} hop ${i + 1}`).toBeGreaterThanOrEqual(due);
        // ...and the hop itself was appended before it was due (it really waited).
        expect(hop.timestamp).toBeLessThan(due);
        hopsChecked++;
      }
    }
    expect(hopsChecked).toBe(9);
    const dlq = records.filter((r) => r.topic === s.topics.dlq);
    expect(dlq.map((r) => scriptOf(r).id)).toEqual(['poison']);
    expect(dlq[0]!.headers['weir.attempts']).toBe('4');
    expect(dlq[0]!.headers['weir.retry.due.ms']).toBeUndefined();
    expect(await s.worker.stop('SIGTERM')).toBe(0);
  });

  it('keeps the main partition flowing: the records behind a poison record reach the sink long before its retry is due', async () => {
    const s = await scenario('rt-flow', 1, { WEIR_TEST_MAX_ATTEMPTS: '2', WEIR_TEST_BACKOFF_MS: '3000', WEIR_TEST_BACKOFF_MAX_MS: '3000' });
    const scripts: Script[] = [
      { id: 'poison', seq: 0, kind: 'poison' },
      ...Array.from({ length: 50 }, (_, i) => ({ id: `ok${i + 1}`, seq: i + 1 })),
    ];
    await s.send(scripts);
    const { records, complete } = await s.read(
      (rs) => rs.filter((r) => r.topic === s.topics.sink || r.topic === s.topics.dlq).length >= scripts.length,
      30_000,
    );
    expect(complete).toBe(true);

    const [hop] = records.filter((r) => r.topic === s.topics.tiers[0]);
    const due = num(hop!, 'weir.retry.due.ms');
    expect(due - num(hop!, 'weir.last.failure.ms')).toBe(3000);
    const sink = records.filter((r) => r.topic === s.topics.sink);
    expect(sink.map((r) => scriptOf(r).seq)).toEqual(scripts.slice(1).map((x) => x.seq));
    const lastSuccessAt = Math.max(...sink.map((r) => r.timestamp));
    // Every record behind the poison one was written before the poison record was even due,
    // well within the 3 s it waits.
    expect(lastSuccessAt).toBeLessThan(due);
    expect(lastSuccessAt - hop!.timestamp).toBeLessThan(2000);
    const [dead] = records.filter((r) => r.topic === s.topics.dlq);
    expect(scriptOf(dead!).id).toBe('poison');
    expect(dead!.timestamp).toBeGreaterThanOrEqual(due);
    expect(await s.worker.stop('SIGTERM')).toBe(0);
  });
});
