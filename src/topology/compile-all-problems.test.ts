import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { fn, problemOf } from './compile.test-support.js';

const nodesOf = (input: unknown) => problemOf(input).problems.map((p) => p.node);

describe('compile reports every problem of a topology in one run', () => {
  it('across sub-topologies, steps, sinks and the topology options, one per line, the first one first', () => {
    const bad = topology({ applicationId: 'app', commitIntervalMs: -5 })
      .source('orders', 'xml' as 'json')
      .process('parse', fn, { retry: { maxAttempts: 0 } })
      .process('enrich', fn, { timeoutMs: -1 })
      .branch({ success: sink('out', { value: 'yaml' as 'json' }) })
      .source('payments')
      .process('parse', fn)
      .branch({ success: sink('payments') });
    const error = problemOf(bad);
    // The duplicate 'parse' is one problem: its derived node 'parse-dlq' is not claimed again.
    expect(error.problems.map((p) => p.node)).toEqual([
      undefined,
      'orders-source',
      'parse',
      'enrich',
      'enrich-to-out',
      'parse',
      'parse-to-payments',
    ]);
    // The first problem stays the error's node and problem, as for a topology with one mistake.
    expect(error.node).toBeUndefined();
    expect(error.problem).toMatch(/commitIntervalMs/);
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('7 problems:');
    expect(lines.slice(2)).toEqual(error.problems.slice(1).map(({ node, problem }) => `  node '${node}': ${problem}`));
  });

  it('a bad source topic or processor name does not hide the other problems of its sub-topology', () => {
    const bad = topology({ applicationId: 'app' })
      .source('bad topic!')
      .process('my proc/1', fn, { dlq: 'x'.repeat(300) })
      .branch({ success: sink('') });
    // The names weir derives from the bad ones (the source node, the processor's default DLQ and
    // retry tiers) are not reported again; the explicit DLQ and the sink are.
    expect(problemOf(bad).problems.map((p) => [p.node, p.problem.slice(0, 24)])).toEqual([
      ['bad topic!', "source: topic name 'bad "],
      ['my proc/1', "processor name 'my proc/"],
      ['my proc/1-dlq', "topic name 'xxxxxxxxxxxx"],
      ['my proc/1-to-', 'topic name must be a non'],
    ]);
    const derived = topology({ applicationId: 'app' })
      .source('in')
      .process('my proc/1', fn, { retry: { mode: 'topics', tiers: ['1s'] } })
      .branch({ success: sink('out') });
    expect(nodesOf(derived)).toEqual(['my proc/1']);
  });

  it('every bad option of one step, and both serdes of a source', () => {
    const options = {
      retry: { maxAttempts: 0, backoff: { jitter: 'lots' } },
      circuitBreaker: { failureRateThreshold: 2 },
      retryBudget: { ratio: -1 },
      timeoutMs: -5,
    };
    const error = problemOf(
      topology('shop')
        .source('orders', { key: 'int', value: 'yaml' } as never)
        .process('enrich', fn, options as never)
        .branch({ success: 'out' }),
    );
    for (const field of [
      "'int' for the key",
      "'yaml' for the value",
      'timeoutMs',
      'retry.maxAttempts',
      'retry.backoff.jitter',
      'failureRateThreshold',
      'retryBudget.ratio',
    ])
      expect(error.message).toContain(field);
  });

  it('a chain of the wrong shape still reports its source problems', () => {
    const t = topology('shop')
      .source('orders', 'yaml' as 'json')
      .process('enrich', fn)
      .branch({ success: 'out' });
    (t as unknown as { process: (name: string, f: unknown) => unknown }).process('late', fn);
    expect(nodesOf(t)).toEqual(['orders-source', 'late']);
  });

  it('adds no follow-on problem: a topic sourced twice is one problem, and a bad option keeps the retry-tier checks of a good application.id', () => {
    const twice = topology('shop')
      .source('orders')
      .process('a', fn)
      .branch({ success: 'x' })
      .source('orders')
      .process('b', fn)
      .branch({ success: 'y' });
    expect(problemOf(twice).problems).toHaveLength(1);
    const badInterval = topology({ applicationId: 'shop', commitIntervalMs: 0 })
      .source('orders')
      .process('enrich', fn, { retry: { mode: 'topics', maxAttempts: 2 } })
      .branch({ success: sink('shop.enrich.retry.0') });
    expect(nodesOf(badInterval)).toEqual([undefined, 'enrich-to-shop.enrich.retry.0']);
    expect(
      problemOf(topology({ applicationId: 'my shop', commitIntervalMs: 1.5 }).source('in').process('p', fn).branch({ success: 'o' }))
        .message,
    ).toMatch(/commitIntervalMs.*\n {2}application\.id 'my shop'/);
  });

  it("checks a retry tier's topic name, which application.id and the processor name make (Kafka's limit: 249 characters)", () => {
    const long = topology('a'.repeat(200))
      .source('in')
      .process('p'.repeat(44), fn, { retry: { mode: 'topics', maxAttempts: 2 } })
      .branch({ success: 'out' });
    expect(problemOf(long)).toMatchObject({ node: `${'p'.repeat(44)}-retry-0` });
    expect(problemOf(long).message).toMatch(/retry tier topic name .* is longer than 249 characters/);
  });

  it('one mistake is one problem, on one line', () => {
    const error = problemOf(
      topology('app')
        .source('in')
        .process('p', fn)
        .branch({ success: sink('in') }),
    );
    expect(error.others).toEqual([]);
    expect(error.message).toBe(`node 'p-to-in': ${error.problem}`);
  });

  it('a missing or bad application.id is a problem, with the other options; the topics it would name add none of their own', () => {
    for (const options of [{}, { applicationId: 5 }, { applicationId: { x: 1 } }])
      expect(
        problemOf(
          topology(options as never)
            .source('in')
            .process('p', fn)
            .branch({ success: 'o' }),
        ).message,
      ).toMatch(/application\.id must be a non-empty string/);
    // With no good application.id the DLQ and retry-tier topics are unknown: no problem is made up about them.
    const standIn = topology({ applicationId: 'my shop' })
      .source('in')
      .process('p'.repeat(230), fn, { retry: { mode: 'topics', maxAttempts: 2 } })
      .branch({ success: 'o' });
    expect(problemOf(standIn).problems.map((p) => p.problem)).toEqual([expect.stringMatching(/application\.id 'my shop'/)]);
  });

  it('puts each problem of one options object on a line of its own, and names a BigInt name without failing', () => {
    const error = problemOf(
      topology('shop')
        .source('in')
        .process('p', fn, { retry: { maxAttempts: 0, backoff: { jitter: 'lots' } } } as never)
        .branch({ success: 'o' }),
    );
    expect(error.problems.map((p) => p.node)).toEqual(['p', 'p']);
    expect(error.message.split('\n')).toHaveLength(3);
    expect(
      problemOf(
        topology('shop')
          .source('in')
          .process(10n as never, fn)
          .branch({ success: 'o' }),
      ).message,
    ).toMatch(/processor name must be a non-empty string \(got bigint\)/);
  });
});
