import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { fn, problemOf } from './compile.test-support.js';

describe('compile reports every problem of a topology in one run', () => {
  it('across sub-topologies, steps, sinks and the topology options, the first one first', () => {
    const bad = topology({ applicationId: 'app', commitIntervalMs: -5 })
      .source('orders', 'xml' as 'json')
      .process('parse', fn, { retry: { maxAttempts: 0 } })
      .process('enrich', fn, { timeoutMs: -1 })
      .branch({ success: sink('out', { value: 'yaml' as 'json' }) })
      .source('payments')
      .process('parse', fn)
      .branch({ success: sink('payments') });
    const error = problemOf(bad);
    const nodes = error.problems.map((p) => p.node);
    expect(nodes).toEqual([undefined, 'orders-source', 'parse', 'enrich', 'enrich-to-out', 'parse', 'parse-to-payments']);
    // The first problem stays the error's node and problem, as for a topology with one mistake.
    expect(error.node).toBeUndefined();
    expect(error.problem).toMatch(/commitIntervalMs/);
    for (const { node, problem } of error.problems.slice(1)) expect(error.message).toContain(`node '${node}': ${problem}`);
    expect(error.message).toMatch(/unknown serde 'xml'/);
    expect(error.message).toMatch(/duplicate node name/);
    expect(error.message).toMatch(/sink topic 'payments' is the source topic of its own processor/);
  });

  it('one mistake is one problem, with no others', () => {
    const error = problemOf(
      topology('app')
        .source('in')
        .process('p', fn)
        .branch({ success: sink('in') }),
    );
    expect(error.others).toEqual([]);
    expect(error.problems).toHaveLength(1);
  });
});
