import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { ResilienceRegistry } from '../runtime/processor-resilience.js';
import { taskHarness } from '../runtime/partition-task.test-support.js';
import { compile } from '../topology/compile.js';
import { WorkerMetrics } from './worker-metrics.js';

const T0 = 1_000_000_000;

/** The value of one sample in a Prometheus text exposition, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('WorkerMetrics: outage guards', () => {
  it('reports each breaker state and transition, the budget tokens at scrape time and the delayed retries', async () => {
    const compiled = compile(
      topology('app')
        .source('in')
        .process('guarded', (r) => r.value, {
          circuitBreaker: { minimumCalls: 1, failureRateThreshold: 1, openMs: 1_000 },
          retryBudget: { ratio: 0.5, minPerSecond: 2 },
        })
        .branch({ success: sink('out') })
        .source('in2')
        .process('plain', (r) => r.value)
        .branch({ success: sink('out2') }),
    );
    const metrics = new WorkerMetrics();
    const listener = metrics.listener();
    const registry = new ResilienceRegistry(compiled, (t) => listener.onCircuitTransition?.(t));
    let now = T0;
    metrics.watchResilience(registry, () => now);
    const guarded = registry.forProcessor('guarded');

    let text = await metrics.registry.metrics();
    expect(sample(text, 'weir_circuit_state{processor="guarded"}')).toBe(0);
    expect(text).not.toContain('processor="plain"');
    expect(sample(text, 'weir_retry_budget_tokens{processor="guarded"}')).toBe(20); // 2/s over 10 s

    for (let i = 0; i < 4; i++) guarded?.budget?.firstAttempt(now);
    guarded?.budget?.tryRetry(now);
    guarded?.breaker?.record(now, 'failure', false, new Error('down'));
    listener.onRetryDelayed?.({ task: 'in-0', processor: 'guarded', topic: 'in', partition: 0, offset: 7, untilMs: now + 1 });
    text = await metrics.registry.metrics();
    expect(sample(text, 'weir_circuit_state{processor="guarded"}')).toBe(2);
    expect(sample(text, 'weir_circuit_transitions_total{processor="guarded",from="closed",to="open"}')).toBe(1);
    expect(sample(text, 'weir_retry_budget_tokens{processor="guarded"}')).toBe(21); // 20 + 0.5 × 4 − 1
    expect(sample(text, 'weir_retries_delayed_total{processor="guarded"}')).toBe(1);

    now += 11_000; // every slot expired: the floor is back
    text = await metrics.registry.metrics();
    expect(sample(text, 'weir_retry_budget_tokens{processor="guarded"}')).toBe(20);
  });
});

describe('WorkerMetrics: record outcomes', () => {
  it('counts every record exactly, from one event per poll, as the per-record events do (recording level debug)', async () => {
    const metrics = new WorkerMetrics({}, { recordingLevel: 'debug' });
    let calls = 0;
    const h = taskHarness({
      fn: (r) => {
        calls++;
        const value = r.value as { fail?: number; bad?: boolean };
        if (value.bad) throw new TypeError('not an order');
        if (value.fail !== undefined && (r.offset + calls) % 3 !== 0) throw new Error('flaky');
        return r.value;
      },
      options: { retry: { maxAttempts: 2, backoff: { initialMs: 10, multiplier: 2, maxMs: 100, jitter: 'none' } } },
      listener: metrics.listener(),
    });
    await h.send(
      Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: i % 7 === 0 ? { bad: true } : i % 5 === 0 ? { fail: i } : { n: i } })),
    );
    const task = h.makeTask();
    expect(await h.drive(task)).toEqual({ kind: 'idle' });

    const text = await metrics.registry.metrics();
    const byOutcome = new Map<string, number>();
    for (const e of h.events) byOutcome.set(e.outcome, (byOutcome.get(e.outcome) ?? 0) + 1);
    // The run had each kind of outcome, so each count below is a real check.
    expect(byOutcome.get('success')).toBeGreaterThan(20);
    expect(byOutcome.get('retry')).toBeGreaterThan(0);
    expect(byOutcome.get('dead-letter')).toBeGreaterThan(0);
    for (const [outcome, n] of byOutcome) expect(sample(text, `weir_records_total{topic="in",outcome="${outcome}"}`)).toBe(n);
    const attempts = h.events.filter((e) => e.durationMs !== undefined).length;
    const observed = [...byOutcome.keys()].reduce(
      (sum, outcome) => sum + (sample(text, `weir_process_duration_seconds_count{topic="in",outcome="${outcome}"}`) ?? 0),
      0,
    );
    expect(observed).toBe(attempts);
    const deadLetters = h.events.filter((e) => e.outcome === 'dead-letter');
    expect(sample(text, 'weir_dead_letters_total{topic="in",error_class="TypeError"}')).toBe(
      deadLetters.filter((e) => e.errorClass === 'TypeError').length,
    );
    // Every final outcome's latency is observed once, when its flush made it durable.
    const latencies = ['success', 'dead-letter'].reduce(
      (sum, outcome) => sum + (sample(text, `weir_end_to_end_latency_seconds_count{topic="in",outcome="${outcome}"}`) ?? 0),
      0,
    );
    expect(latencies).toBe(40);
  });

  it('records no per-attempt durations under recording level info (the default), and counts the rest the same', async () => {
    const metrics = new WorkerMetrics();
    expect(metrics.processDuration).toBeUndefined();
    const polls: unknown[] = [];
    const listener = metrics.listener();
    const h = taskHarness({
      fn: (r) => {
        if ((r.value as { bad?: boolean }).bad) throw new TypeError('not an order');
        return r.value;
      },
      listener: { ...listener, onRecords: (e) => (polls.push(e), listener.onRecords?.(e)) },
    });
    await h.send(Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: i % 4 === 0 ? { bad: true } : { n: i } })));
    expect(await h.drive(h.makeTask())).toEqual({ kind: 'idle' });

    const text = await metrics.registry.metrics();
    expect(polls.length).toBeGreaterThan(0);
    expect(text).not.toContain('weir_process_duration_seconds');
    expect(sample(text, 'weir_records_total{topic="in",outcome="success"}')).toBe(15);
    expect(sample(text, 'weir_records_total{topic="in",outcome="dead-letter"}')).toBe(5);
    expect(sample(text, 'weir_end_to_end_latency_seconds_count{topic="in",outcome="success"}')).toBe(15);
  });
});

describe("WorkerMetrics: order 'key'", () => {
  it('reports the keys and records each ordered task holds back at scrape time, and nothing for other tasks', async () => {
    const metrics = new WorkerMetrics({}, { processMetrics: false });
    let parked = { keys: 3, records: 7, full: false };
    metrics.watchTasks({
      tasks: () => [
        { topic: 'orders', partition: 0, state: 'running', position: 10, parked },
        { topic: 'orders', partition: 1, state: 'running', position: 4 },
      ],
      endOffsets: async () => new Map(),
      isRetryTier: () => false,
    });
    let text = (await metrics.exposition()).body;
    expect(sample(text, 'weir_parked_keys{topic="orders",partition="0"}')).toBe(3);
    expect(sample(text, 'weir_parked_records{topic="orders",partition="0"}')).toBe(7);
    expect(sample(text, 'weir_parked_full{topic="orders",partition="0"}')).toBe(0);
    expect(sample(text, 'weir_parked_keys{topic="orders",partition="1"}')).toBeUndefined();
    parked = { keys: 3, records: 9, full: true };
    text = (await metrics.exposition()).body;
    expect(sample(text, 'weir_parked_full{topic="orders",partition="0"}')).toBe(1);
    parked = { keys: 0, records: 0, full: false };
    text = (await metrics.exposition()).body;
    expect(sample(text, 'weir_parked_records{topic="orders",partition="0"}')).toBe(0);
    expect(sample(text, 'weir_parked_full{topic="orders",partition="0"}')).toBe(0);
  });
});
