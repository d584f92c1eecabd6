import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { serdes } from '../dsl/serdes.js';
import { topology } from '../dsl/topology-builder.js';
import { compile } from './compile.js';
import { fn, one, problemOf } from './compile.test-support.js';
import { consumedTopics, producedTopics } from './compiled-topology.js';

describe('compile', () => {
  it('compiles a source → process → branch → sink chain with defaults filled in', () => {
    const t = compile(one());
    expect(t.applicationId).toBe('app');
    expect(t.processingGuarantee).toBe('at_least_once');
    expect(t.commitIntervalMs).toBe(1000);
    const sub = t.subtopologies.get(0)!;
    expect(sub.source.topic).toBe('in');
    expect(sub.source.keySerde.name).toBe('string');
    expect(sub.source.valueSerde.name).toBe('json');
    expect(sub.processor.retry).toMatchObject({
      maxAttempts: 3,
      mode: 'blocking',
      backoff: { initialMs: 500, multiplier: 2, maxMs: 30_000, jitter: 'equal' },
    });
    expect(sub.sinks.map((s) => s.topic).toArray()).toEqual(['out']);
    expect(sub.deadLetter.topic).toBe('dlq');
    expect(consumedTopics(t)).toEqual(['in']);
    expect(producedTopics(t).map((p) => p.topic)).toEqual(['out', 'dlq']);
  });

  it('returns a frozen topology', () => {
    const t = compile(one());
    expect(() => {
      (t as unknown as { applicationId: string }).applicationId = 'other';
    }).toThrow();
    expect(t.set('applicationId', 'other').applicationId).toBe('other');
    expect(t.applicationId).toBe('app');
  });

  it('defaults exactly_once to a 100 ms commit interval and lets overrides win', () => {
    const t = compile(
      topology({ applicationId: 'a', processingGuarantee: 'exactly_once' }).source('in').process('p', fn).branch({ success: 'out' }),
    );
    expect(t.commitIntervalMs).toBe(100);
    const o = compile(one(), { applicationId: 'b', processingGuarantee: 'exactly_once', commitIntervalMs: 250 });
    expect([o.applicationId, o.processingGuarantee, o.commitIntervalMs]).toEqual(['b', 'exactly_once', 250]);
  });

  it('names the default DLQ and the retry tiers after the application and processor', () => {
    const t = compile(
      topology('shop')
        .source('in')
        .process('charge', fn, { retry: { mode: 'topics', maxAttempts: 6, backoff: { initialMs: 1000, multiplier: 2, maxMs: 5000 } } })
        .branch({ success: 'out' }),
    );
    const sub = t.subtopologies.get(0)!;
    expect(sub.deadLetter.topic).toBe('shop.charge.dlq');
    expect(sub.retryTiers.map((r) => [r.topic, r.delayMs]).toArray()).toEqual([
      ['shop.charge.retry.0', 1000],
      ['shop.charge.retry.1', 2000],
      ['shop.charge.retry.2', 4000],
      ['shop.charge.retry.3', 5000],
    ]);
    expect(consumedTopics(t)).toEqual(['in', 'shop.charge.retry.0', 'shop.charge.retry.1', 'shop.charge.retry.2', 'shop.charge.retry.3']);
  });

  it('accepts custom serdes and per-sink serdes', () => {
    const upper = {
      name: 'upper',
      serialize: (v: string) => Buffer.from(v.toUpperCase()),
      deserialize: (b: Buffer | null) => b?.toString() ?? null,
    };
    const t = compile(one({}, { success: sink('out', { value: upper }) }, { key: serdes.buffer, value: 'string' }));
    const sub = t.subtopologies.get(0)!;
    expect([sub.source.keySerde.name, sub.source.valueSerde.name, sub.sinks.get(0)!.valueSerde.name]).toEqual([
      'buffer',
      'string',
      'upper',
    ]);
  });

  describe('errors name the node and the problem', () => {
    it('a missing source', () => {
      expect(problemOf(topology('app')).message).toMatch(/no source/);
    });

    it('something that is not a topology', () => {
      expect(problemOf({ default: 1 }).message).toMatch(/expected a topology built with topology/);
    });

    it('an unknown serde', () => {
      const e = problemOf(one({}, undefined, 'xml'));
      expect(e.node).toBe('in-source');
      expect(e.message).toMatch(/unknown serde 'xml'/);
      expect(problemOf(one({}, { success: sink('out', { value: 'yaml' as 'json' }) })).node).toBe('p-to-out');
    });

    it('a source without a processor, and a processor with no success route', () => {
      expect(problemOf(topology('app').source('in')).message).toMatch(/source 'in' has no processor/);
      const noBranch = topology('app').source('in').process('p', fn);
      expect(problemOf(noBranch)).toMatchObject({ node: 'p' });
      expect(problemOf(noBranch).message).toMatch(/no success route/);
      expect(problemOf(one({}, { success: [] })).message).toMatch(/node 'p': has no success route/);
    });

    it('a sink topic equal to its own source topic (a loop), and loops across sub-topologies', () => {
      expect(problemOf(one({}, { success: sink('in') })).message).toMatch(
        /node 'p-to-in': sink topic 'in' is the source topic of its own processor 'p' \(a loop\)/,
      );
      expect(problemOf(one({}, { success: 'out', dlq: 'in' })).message).toMatch(/a loop/);
      const cycle = topology('app')
        .source('a')
        .process('p1', fn)
        .branch({ success: 'b' })
        .source('b')
        .process('p2', fn)
        .branch({ success: 'a' });
      expect(problemOf(cycle).message).toMatch(/topics form a loop: a → b → a/);
    });

    it("a sink or dead-letter topic that is a retry tier's topic (its own processor's or another's)", () => {
      const topics = { retry: { mode: 'topics' as const, maxAttempts: 3 } };
      expect(problemOf(one(topics, { success: sink('app.p.retry.0') })).message).toMatch(
        /node 'p-to-app\.p\.retry\.0': sink topic 'app\.p\.retry\.0' is a retry tier topic of processor 'p'/,
      );
      expect(problemOf(one(topics, { success: 'out', dlq: 'app.p.retry.1' })).message).toMatch(
        /dead-letter topic 'app\.p\.retry\.1' is a retry tier topic of processor 'p'/,
      );
      const other = topology('app')
        .source('a')
        .process('p1', fn, topics)
        .branch({ success: 'out1' })
        .source('b')
        .process('p2', fn)
        .branch({ success: 'app.p1.retry.0' });
      expect(problemOf(other).message).toMatch(/sink topic 'app\.p1\.retry\.0' is a retry tier topic of processor 'p1'/);
    });

    it('duplicate node names', () => {
      const dup = topology('app')
        .source('a')
        .process('p', fn)
        .branch({ success: 'x' })
        .source('b')
        .process('p', fn)
        .branch({ success: 'y' });
      expect(problemOf(dup)).toMatchObject({ node: 'p' });
      expect(problemOf(dup).message).toMatch(/duplicate node name/);
      expect(problemOf(topology('app').source('a').process('a-source', fn).branch({ success: 'x' })).message).toMatch(/duplicate/);
    });

    it('an unreachable success route, a bad predicate, bad partitions', () => {
      expect(problemOf(one({}, { success: ['a', 'b'] })).message).toMatch(/success route 2 is unreachable/);
      expect(problemOf(one({}, { success: [{ when: 'yes' as never, to: 'a' }] })).message).toMatch(/when must be a function/);
      expect(problemOf(one({}, { success: sink('out', { partitions: 0 }) })).message).toMatch(/partitions must be an integer ≥ 1/);
    });

    it('bad names and settings', () => {
      expect(problemOf(topology('my app').source('in').process('p', fn).branch({ success: 'out' })).message).toMatch(
        /application.id 'my app' may use only/,
      );
      expect(problemOf(topology('app').source('in!').process('p', fn).branch({ success: 'out' })).message).toMatch(/topic name 'in!'/);
      expect(problemOf(topology('app').source('in').process('p q', fn).branch({ success: 'out' })).message).toMatch(/processor name 'p q'/);
      expect(
        problemOf(
          topology('app')
            .source('in')
            .process('p', 'fn' as never)
            .branch({ success: 'out' }),
        ).message,
      ).toMatch(/processor must be a function/);
      expect(
        problemOf(topology({ applicationId: 'a', commitIntervalMs: 0 }).source('in').process('p', fn).branch({ success: 'out' })).message,
      ).toMatch(/commitIntervalMs/);
      expect(
        problemOf(
          topology({ applicationId: 'a', processingGuarantee: 'maybe' as never })
            .source('in')
            .process('p', fn)
            .branch({ success: 'out' }),
        ).message,
      ).toMatch(/processingGuarantee/);
      expect(problemOf(one({ dedup: { key: () => 'k', ttlMs: 0 } })).message).toMatch(/dedup.ttlMs must be a number of ms > 0/);
      expect(
        problemOf(
          topology('app').source('a').process('p1', fn).branch({ success: 'x' }).source('a').process('p2', fn).branch({ success: 'y' }),
        ).message,
      ).toMatch(/source of two sub-topologies/);
    });
  });
});
