import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { compile } from './compile.js';
import { describeTopology, topologyDescription } from './describe-topology.js';

const chained = compile(
  topology('shop')
    .source('orders', 'json')
    .process('parse', (r) => r.value, { retry: { maxAttempts: 1 } })
    .process('enrich', (r) => r.value, {
      retry: { mode: 'topics', tiers: ['1s', '10s'] },
      inputSerdes: { value: 'string' },
      dlq: sink('enrich.dlq'),
    })
    .process('write', (r) => r.value, { retry: { maxAttempts: 3, backoff: { initialMs: 100 } } })
    .branch({ success: { all: [sink('a'), sink('b')] }, dlq: 'write.dlq' }),
);

describe('describeTopology: processor chains', () => {
  it('JSON lists every step in order with its position, input serdes, retry tiers and DLQ edge', () => {
    const [sub] = topologyDescription(chained).subtopologies;
    const processors = sub!.nodes.filter((n) => n.type === 'processor');
    expect(processors.map((n) => [n.name, n.chain])).toEqual([
      ['parse', { position: 1, length: 3 }],
      ['enrich', { position: 2, length: 3, inputSerdes: { key: 'string', value: 'string' } }],
      ['write', { position: 3, length: 3, inputSerdes: { key: 'string', value: 'json' } }],
    ]);
    expect(sub!.edges.filter((e) => e.kind === 'record').map((e) => `${e.from}>${e.to}`)).toEqual([
      'orders-source>parse',
      'parse>enrich',
      'enrich>write',
      'enrich-retry-0>enrich',
      'enrich-retry-1>enrich',
    ]);
    expect(sub!.edges.filter((e) => e.kind === 'retry')).toEqual([
      { from: 'enrich', to: 'enrich-retry-0', kind: 'retry', delayMs: 1000 },
      { from: 'enrich', to: 'enrich-retry-1', kind: 'retry', delayMs: 10_000 },
      { from: 'write', to: 'write', kind: 'retry', delayMs: 100 },
    ]);
    expect(sub!.edges.filter((e) => e.kind === 'dlq')).toEqual([
      { from: 'parse', to: 'parse-dlq', kind: 'dlq' },
      { from: 'enrich', to: 'enrich-dlq', kind: 'dlq' },
      { from: 'write', to: 'write-dlq', kind: 'dlq' },
    ]);
    expect(sub!.nodes.filter((n) => n.type === 'dead-letter').map((n) => n.topic)).toEqual(['shop.parse.dlq', 'enrich.dlq', 'write.dlq']);
    expect(sub!.nodes.filter((n) => n.type === 'retry-tier').map((n) => n.topic)).toEqual(['shop.enrich.retry.0', 'shop.enrich.retry.1']);
    expect(sub!.edges.filter((e) => e.kind === 'success').map((e) => e.from)).toEqual(['write', 'write']);
    const single = topologyDescription(
      compile(
        topology('x')
          .source('in')
          .process('p', (r) => r.value)
          .branch({ success: 'out' }),
      ),
    );
    expect(single.subtopologies[0]!.nodes.find((n) => n.type === 'processor')).not.toHaveProperty('chain');
  });

  it('text shows each step with its place in the chain and its own retry and DLQ edges', () => {
    const text = describeTopology(chained, 'text');
    // One attempt: no retry mode, backoff or odds to show.
    expect(text).toContain('Processor: parse (step 1 of 3, retry: none (maxAttempts: 1), maxReplays: 3)');
    expect(text).not.toMatch(/P\(success within 1 attempt/);
    expect(text).toContain(
      'Processor: enrich (step 2 of 3, input: key string, value string, retry: topics, maxAttempts: 3, tiers: explicit, maxHops: 3',
    );
    expect(text).toContain('--> enrich, parse-dlq (dlq)');
    expect(text).toContain('--> write, enrich-retry-0 (retry after 1000ms), enrich-retry-1 (retry after 10000ms), enrich-dlq (dlq)');
    expect(text).toContain(
      '--> write-to-a (success, all), write-to-b (success, all), write (retry in place, backoff from 100ms), write-dlq (dlq)',
    );
  });

  it('Mermaid draws the chain, each step’s tiers and DLQ', () => {
    const mermaid = describeTopology(chained, 'mermaid');
    // Nodes: 0 source, 1–3 the steps, 4–5 sinks, 6 parse's DLQ, 7–8 enrich's tiers, 9 its DLQ, 10 write's DLQ.
    expect(mermaid).toContain('s0n0 --> s0n1');
    expect(mermaid).toContain('s0n1 --> s0n2');
    expect(mermaid).toContain('s0n2 --> s0n3');
    expect(mermaid).toContain('s0n1 -->|dlq| s0n6');
    expect(mermaid).toContain('s0n2 -.->|"retry 1000ms"| s0n7');
    expect(mermaid).toContain('s0n7 --> s0n2');
    expect(mermaid).toContain('s0n2 -->|dlq| s0n9');
    expect(mermaid).toContain('s0n3 -.->|"retry in place, backoff from 100ms"| s0n3');
    expect(mermaid).toContain('s0n3 ==>|"success (all)"| s0n4');
    expect(mermaid).toContain('s0n10[("write.dlq")]');
  });
});

describe("describeTopology: retry order 'key'", () => {
  const ordered = compile(
    topology('shop')
      .source('orders', 'json')
      .process('price', (r) => r.value, { retry: { mode: 'topics', order: 'key', tiers: ['1s', '10s'], maxParkedKeys: 50 } })
      .process('ship', (r) => r.value, { retry: { maxAttempts: 2 } })
      .branch({ success: sink('out') }),
  );

  it('shows the parked node with its changelog and limit, and the ordered step retrying through it, in all three formats', () => {
    const [sub] = topologyDescription(ordered).subtopologies;
    expect(sub!.nodes.find((n) => n.type === 'parked')).toEqual({
      type: 'parked',
      name: 'price-parked',
      topic: 'shop.price.parked',
      maxParkedKeys: 50,
    });
    expect(sub!.nodes.find((n) => n.name === 'price')!.retry).toMatchObject({
      mode: 'topics',
      order: 'key',
      maxParkedKeys: 50,
      tiers: 'explicit',
      delaysMs: [1000, 10_000],
    });
    expect(sub!.nodes.some((n) => n.type === 'retry-tier')).toBe(false);
    expect(sub!.edges.filter((e) => e.from === 'price-parked' || e.to === 'price-parked')).toEqual([
      { from: 'price', to: 'price-parked', kind: 'retry', delayMs: 1000, delaysMs: [1000, 10_000] },
      { from: 'price-parked', to: 'price', kind: 'record' },
    ]);
    const text = describeTopology(ordered, 'text');
    expect(text).toContain('retry: topics, maxAttempts: 3, delays at the task: 1000ms, 10000ms, order: key, maxHops: 3');
    expect(text).toContain('Parked records: price-parked (changelog: shop.price.parked, compacted, maxParkedKeys: 50 per task;');
    expect(text).toContain('--> ship, price-parked (retry at the task after 1000ms, 10000ms), price-dlq (dlq)');
    const mermaid = describeTopology(ordered, 'mermaid');
    expect(mermaid).toContain('[("shop.price.parked (parked, key order)")]');
    expect(mermaid).toMatch(/-\.->\|"retry at the task 1000ms, 10000ms"\| s0n\d+/);
  });
});
