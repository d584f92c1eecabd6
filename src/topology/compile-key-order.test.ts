import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { compile } from './compile.js';
import { fn, one, problemOf } from './compile.test-support.js';
import { consumedTopics, producedTopics } from './compiled-topology.js';

const keyOrder = { mode: 'topics', order: 'key', maxAttempts: 3 } as const;

describe("compile: retry order 'key'", () => {
  it('gives the sub-topology a compacted changelog named after its (first) ordered processor, and the step no tier topics', () => {
    const compiled = compile(one({ retry: keyOrder }));
    const sub = compiled.subtopologies.get(0)!;
    expect(sub.parkedTopic).toBe('app.p.parked');
    expect(sub.maxParkedKeys).toBe(10_000);
    expect(sub.processor.retry).toMatchObject({ order: 'key', tierDelaysMs: [500, 1000] });
    expect(sub.steps.get(0)!.retryTiers.size).toBe(0);
    expect(consumedTopics(compiled)).toEqual(['in']);
    expect(producedTopics(compiled)).toContainEqual({ topic: 'app.p.parked', partitions: null, sourceTopic: 'in', changelog: true });
  });

  it("takes the least maxParkedKeys of a chain's ordered steps; blocking steps may join an ordered chain", () => {
    const compiled = compile(
      topology('app')
        .source('in', { key: 'string', value: 'json' })
        .process('parse', fn)
        .process('price', fn, { retry: { ...keyOrder, maxParkedKeys: 50 } })
        .process('ship', fn, { retry: { ...keyOrder, maxParkedKeys: 20 } })
        .branch({ success: sink('out') }),
    );
    expect(compiled.subtopologies.get(0)).toMatchObject({ parkedTopic: 'app.price.parked', maxParkedKeys: 20 });
  });

  it('names the processor: order key in blocking mode, maxParkedKeys without it, and a retry-topic step that would break the order', () => {
    const error = problemOf(
      topology('app')
        .source('in', { key: 'string', value: 'json' })
        .process('price', fn, { retry: { order: 'key' } })
        .process('tax', fn, { retry: { mode: 'topics', maxParkedKeys: 3 } })
        .process('ship', fn, { retry: keyOrder })
        .process('bill', fn, { retry: { mode: 'topics' } })
        .branch({ success: sink('out') }),
    );
    expect(error.message).toContain(
      "node 'price': retry.order 'key' is only valid with retry.mode 'topics' (blocking mode keeps the order already",
    );
    expect(error.message).toContain("node 'tax': retry.maxParkedKeys is only valid with retry.order 'key'");
    expect(error.message).toContain(
      "node 'bill': retries through topics without retry.order 'key', but step 'ship' of its chain keeps key order",
    );
  });

  it('refuses a changelog topic that is also a sink or a DLQ, saying which', () => {
    expect(problemOf(one({ retry: keyOrder }, { success: sink('app.p.parked') })).message).toContain(
      "node 'p-parked': parked-records changelog topic 'app.p.parked' of processor 'p' is also a sink of its success branch",
    );
    expect(problemOf(one({ retry: keyOrder, dlq: 'app.p.parked' }, { success: sink('out') })).message).toContain(
      "node 'p-parked': parked-records changelog topic 'app.p.parked' of processor 'p' is also the DLQ of processor 'p'",
    );
  });

  it('refuses a changelog topic that another sub-topology reads as its source or writes as a sink or DLQ', () => {
    const ordered = (t: ReturnType<typeof topology>) =>
      t.source('in', 'json').process('p', fn, { retry: keyOrder }).branch({ success: 'out' });
    expect(
      problemOf(ordered(topology('app')).source('app.p.parked', 'json').process('q', fn).branch({ success: 'out2' })).message,
    ).toContain("source topic 'app.p.parked' is the parked-records changelog of processor 'p': weir writes and reads it itself");
    expect(
      problemOf(ordered(topology('app')).source('in2', 'json').process('q', fn).branch({ success: 'app.p.parked' })).message,
    ).toContain("sink topic 'app.p.parked' is the parked-records changelog of processor 'p': weir writes it itself");
    expect(
      problemOf(ordered(topology('app')).source('in2', 'json').process('q', fn).branch({ success: 'out2', dlq: 'app.p.parked' })).message,
    ).toContain("dead-letter topic 'app.p.parked' is the parked-records changelog of processor 'p'");
  });
});
