import { describe, expect, it } from 'vitest';
import type { RetryOptions } from '../dsl/process-options.js';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { compile } from './compile.js';
import { describeTopology, topologyDescription } from './describe-topology.js';

function payments(retry: RetryOptions) {
  return compile(
    topology({ applicationId: 'pay' })
      .source('payments', 'json')
      .process('charge', (r) => r.value, { retry })
      .branch({ success: sink('payments.charged'), dlq: sink('payments.dlq') }),
  );
}

const explicit = payments({ mode: 'topics', tiers: ['1s', '10s', '1m'] });
const derived = payments({ mode: 'topics', maxAttempts: 5, backoff: { initialMs: 200, multiplier: 3, maxMs: 2000, jitter: 'none' } });

describe('describeTopology: retry topics', () => {
  it('JSON lists each tier with its topic and delay, a retry edge per tier and the DLQ edge', () => {
    const [sub] = topologyDescription(explicit).subtopologies;
    expect(sub!.nodes.filter((n) => n.type === 'retry-tier')).toEqual([
      { type: 'retry-tier', name: 'charge-retry-0', topic: 'pay.charge.retry.0', delayMs: 1000 },
      { type: 'retry-tier', name: 'charge-retry-1', topic: 'pay.charge.retry.1', delayMs: 10_000 },
      { type: 'retry-tier', name: 'charge-retry-2', topic: 'pay.charge.retry.2', delayMs: 60_000 },
    ]);
    expect(sub!.edges.filter((e) => e.kind === 'retry')).toEqual([
      { from: 'charge', to: 'charge-retry-0', kind: 'retry', delayMs: 1000 },
      { from: 'charge', to: 'charge-retry-1', kind: 'retry', delayMs: 10_000 },
      { from: 'charge', to: 'charge-retry-2', kind: 'retry', delayMs: 60_000 },
    ]);
    expect(sub!.edges).toContainEqual({ from: 'charge-retry-2', to: 'charge', kind: 'record' });
    expect(sub!.edges).toContainEqual({ from: 'charge', to: 'charge-dlq', kind: 'dlq' });
    expect(sub!.nodes).toContainEqual({ type: 'dead-letter', name: 'charge-dlq', topic: 'payments.dlq' });
    const processor = sub!.nodes.find((n) => n.type === 'processor')!;
    expect(processor.retry).toMatchObject({ mode: 'topics', maxAttempts: 4, maxHops: 4, maxReplays: 3, tiers: 'explicit' });
    expect(JSON.parse(describeTopology(explicit, 'json'))).toEqual(topologyDescription(explicit));
  });

  it('JSON shows tiers derived from the backoff schedule (last delay reused)', () => {
    const [sub] = topologyDescription(derived).subtopologies;
    expect(sub!.nodes.filter((n) => n.type === 'retry-tier').map((n) => [n.topic, n.delayMs])).toEqual([
      ['pay.charge.retry.0', 200],
      ['pay.charge.retry.1', 600],
      ['pay.charge.retry.2', 1800],
      ['pay.charge.retry.3', 2000],
    ]);
    expect(sub!.nodes.find((n) => n.type === 'processor')!.retry!.tiers).toBe('backoff');
  });

  it('text shows the tiers, their delays and the DLQ edge', () => {
    const text = describeTopology(explicit, 'text');
    expect(text).toContain('Processor: charge (retry: topics, maxAttempts: 4, tiers: explicit, maxHops: 4, maxReplays: 3)');
    expect(text).toContain(
      'charge-retry-0 (retry after 1000ms), charge-retry-1 (retry after 10000ms), charge-retry-2 (retry after 60000ms), charge-dlq (dlq)',
    );
    expect(text).toContain('Retry tier: charge-retry-1 (topic: pay.charge.retry.1, delay: 10000ms)');
    expect(text).toContain('Dead-letter queue: charge-dlq (topic: payments.dlq)');
    expect(describeTopology(payments({ mode: 'topics', tiers: ['1s'], maxAttempts: 3 }), 'text')).toContain(
      'tiers: explicit, the last reused',
    );
    expect(describeTopology(derived, 'text')).toContain('tiers: from backoff: 200ms ×3 ≤ 2000ms, jitter: none, maxHops: 5');
  });

  it('Mermaid draws the tier topics with their delays, dotted retry edges and the DLQ edge', () => {
    const mermaid = describeTopology(explicit, 'mermaid');
    expect(mermaid).toMatch(/^flowchart LR/);
    expect(mermaid).toContain('s0n3[("pay.charge.retry.0 (1000ms)")]');
    expect(mermaid).toContain('s0n5[("pay.charge.retry.2 (60000ms)")]');
    expect(mermaid).toContain('s0n1 -.->|"retry 10000ms"| s0n4');
    expect(mermaid).toContain('s0n4 --> s0n1');
    expect(mermaid).toContain('s0n1 -->|dlq| s0n6');
    expect(mermaid).toContain('s0n6[("payments.dlq")]');
  });

  it('blocking mode has no tier nodes: one retry edge in place, and the DLQ edge', () => {
    const blocking = payments({ maxAttempts: 3, backoff: { initialMs: 100 } });
    const [sub] = topologyDescription(blocking).subtopologies;
    expect(sub!.nodes.some((n) => n.type === 'retry-tier')).toBe(false);
    expect(sub!.edges.filter((e) => e.kind === 'retry')).toEqual([{ from: 'charge', to: 'charge', kind: 'retry', delayMs: 100 }]);
    expect(describeTopology(blocking, 'text')).toContain('charge (retry in place, backoff from 100ms)');
    expect(describeTopology(blocking, 'mermaid')).toContain('s0n1 -.->|"retry in place, backoff from 100ms"| s0n1');
  });
});

describe('describeTopology: retry arithmetic and outage guards', () => {
  const guarded = compile(
    topology({ applicationId: 'pay' })
      .source('payments', 'json')
      .process('charge', (r) => r.value, {
        retry: { maxAttempts: 4, backoff: { initialMs: 100, multiplier: 2, maxMs: 300, jitter: 'equal' } },
        circuitBreaker: { failureRateThreshold: 0.6, minimumCalls: 3, openMs: 2_000 },
        retryBudget: { ratio: 0.1, minPerSecond: 2 },
        timeoutMs: 500,
      })
      .branch({ success: sink('payments.charged') }),
  );

  it('JSON gives each retry its delay range, the worst case to the DLQ and the odds of success', () => {
    const processor = topologyDescription(guarded).subtopologies[0]?.nodes.find((n) => n.type === 'processor');
    expect(processor?.retryArithmetic?.retryDelaysMs).toEqual([
      { retry: 1, minMs: 50, maxMs: 100 },
      { retry: 2, minMs: 100, maxMs: 200 },
      { retry: 3, minMs: 150, maxMs: 300 },
    ]);
    // Delays 100 + 200 + 300, plus three retries running into their 500 ms timeout.
    expect(processor?.retryArithmetic?.worstCaseToDeadLetterMs).toBe(600 + 3 * 500);
    const odds = processor?.retryArithmetic?.successProbability ?? [];
    expect(odds.map((o) => o.p)).toEqual([0.5, 0.8, 0.95]);
    expect(odds[0]?.probability).toBeCloseTo(1 - 0.5 ** 4, 12);
    expect(odds[2]?.probability).toBeCloseTo(1 - 0.05 ** 4, 12);
    expect(processor?.circuitBreaker).toMatchObject({ failureRateThreshold: 0.6, minimumCalls: 3, openMs: 2_000, maxOpenMs: 60_000 });
    expect(processor?.outageRideOut).toEqual({ minOutageToDeadLetterMs: 30_000, deadLetterProbe: 4 });
    expect(processor?.retryBudget).toEqual({ ratio: 0.1, minPerSecond: 2 });
    expect(processor?.timeoutMs).toBe(500);
  });

  it('text prints the same per processor, never rounding a probability below 1 up to 100 %', () => {
    const text = describeTopology(guarded, 'text');
    expect(text).toContain('retry delays: #1 50–100ms, #2 100–200ms, #3 150–300ms');
    expect(text).toContain('worst case from first failure to the DLQ: 2100ms (attempts at their timeout)');
    expect(text).toContain('P(success within 4 attempts): 93.8 % at p=0.5, 99.8 % at p=0.8, 99.999 % at p=0.95');
    expect(text).toContain(
      'circuit breaker: opens at 60.0 % retriable failures of ≥ 3 calls in 10000ms; open 2000ms (doubling, ≤ 60000ms)',
    );
    // 4 attempts: the DLQ at failed probe 4 at the earliest, after waits of 2, 4, 8 and 16 s.
    expect(text).toContain(
      'outages ridden out: up to 30000ms from the breaker opening (a longer one dead-letters the record taking every probe, at failed probe 4)',
    );
    expect(text).not.toContain('warning:');
    expect(text).toContain('retry budget: 0.1 × first attempts + 2/s, over 10 s');
    expect(text).toContain('attempt timeout: 500ms');
    expect(describeTopology(explicit, 'text')).toContain('retry delays: #1 1000ms, #2 10000ms, #3 60000ms');
  });
});

describe('describe with a very large maxAttempts', () => {
  it('lists the first retries one by one and the rest in one range, with the worst case in readable units (a billion attempts described in a line, not gigabytes)', () => {
    const compiled = compile(
      topology('app')
        .source('in')
        .process('p', (r) => r.value, {
          retry: { maxAttempts: 1_000_000_000, backoff: { initialMs: 100, multiplier: 2, maxMs: 30_000, jitter: 'none' } },
        })
        .branch({ success: sink('out') }),
    );
    const text = describeTopology(compiled, 'text');
    expect(text.length).toBeLessThan(10_000);
    const delays = text.split('\n').find((l) => l.includes('retry delays:'))!;
    expect(delays).toContain('#1 100ms, #2 200ms, #3 400ms');
    expect(delays).toContain('#11–#999999999 30000ms');
    const worst = text.split('\n').find((l) => l.includes('worst case'))!;
    const listed = [100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000].reduce((a, b) => a + b, 0);
    expect(worst).toContain(`${listed + (999_999_999 - 10) * 30_000}ms (about `);
    expect(worst).toMatch(/about \d+ days/);
  });
});

describe('describeTopology: multicast (success: { all })', () => {
  const fanOut = compile(
    topology('shop')
      .source('orders', 'json')
      .process('enrich', (r) => r.value)
      .branch({ success: { all: [sink('orders.audit'), sink('orders.enriched')] } }),
  );

  it('JSON marks each multicast sink and success edge', () => {
    const [sub] = topologyDescription(fanOut).subtopologies;
    expect(sub!.nodes.filter((n) => n.type === 'sink').map((n) => [n.topic, n.multicast])).toEqual([
      ['orders.audit', true],
      ['orders.enriched', true],
    ]);
    expect(sub!.edges.filter((e) => e.kind === 'success')).toEqual([
      { from: 'enrich', to: 'enrich-to-orders.audit', kind: 'success', multicast: true },
      { from: 'enrich', to: 'enrich-to-orders.enriched', kind: 'success', multicast: true },
    ]);
    const [firstMatch] = topologyDescription(payments({})).subtopologies;
    expect(firstMatch!.edges.find((e) => e.kind === 'success')).not.toHaveProperty('multicast');
  });

  it('text and Mermaid draw an edge to every sink, marked as multicast', () => {
    const text = describeTopology(fanOut, 'text');
    expect(text).toContain('Sink: enrich-to-orders.audit (topic: orders.audit, multicast: every output)');
    expect(text).toContain('--> enrich-to-orders.audit (success, all), enrich-to-orders.enriched (success, all), enrich (retry in place');
    const mermaid = describeTopology(fanOut, 'mermaid');
    expect(mermaid).toContain('s0n1 ==>|"success (all)"| s0n2');
    expect(mermaid).toContain('s0n1 ==>|"success (all)"| s0n3');
    expect(describeTopology(payments({}), 'mermaid')).toContain('s0n1 -->|success| s0n2');
  });
});
