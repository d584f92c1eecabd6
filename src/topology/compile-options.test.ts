import { describe, expect, it } from 'vitest';
import type { ProcessOptions } from '../dsl/process-options.js';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { compile } from './compile.js';
import { fn, one, problemOf } from './compile.test-support.js';

describe('compile: process and branch options (errors name the node, the option and the problem)', () => {
  it.each([
    [{ maxAttempts: 0 }, /retry.maxAttempts must be an integer ≥ 1 \(got 0\)/],
    [{ maxAttempts: 2.5 }, /retry.maxAttempts/],
    [{ backoff: { initialMs: 500, maxMs: 100 } }, /retry.backoff.maxMs \(100\) is less than retry.backoff.initialMs \(500\)/],
    [{ backoff: { initialMs: -1 } }, /retry.backoff.initialMs must be a number ≥ 0/],
    [{ backoff: { multiplier: 0.5 } }, /retry.backoff.multiplier must be a number ≥ 1/],
    [{ backoff: { jitter: 'some' } }, /retry.backoff.jitter must be one of none, full, equal/],
    [{ mode: 'later' }, /retry.mode must be 'blocking' or 'topics'/],
    [{ tiers: ['1s'] }, /retry.tiers is only valid with retry.mode 'topics'/],
    [{ mode: 'topics', tiers: ['1s', 'soon'] }, /retry.tiers\[1\] is not a positive duration/],
  ])('invalid retry numbers: %j', (retry, message) => {
    const e = problemOf(one({ retry: retry as ProcessOptions['retry'] }));
    expect(e.node).toBe('p');
    expect(e.message).toMatch(message);
  });

  it('outage options: defaults filled in, and none unless asked for', () => {
    const guarded = compile(one({ circuitBreaker: { openMs: 2_000 }, retryBudget: {}, timeoutMs: 250 })).subtopologies.get(0)?.processor;
    expect(guarded?.circuitBreaker).toEqual({
      failureRateThreshold: 0.5,
      minimumCalls: 5,
      windowMs: 10_000,
      openMs: 2_000,
      maxOpenMs: 60_000,
      halfOpenCalls: 1,
    });
    expect(guarded?.retryBudget).toEqual({ ratio: 0.2, minPerSecond: 10 });
    expect(guarded?.timeoutMs).toBe(250);
    const plain = compile(one()).subtopologies.get(0)?.processor;
    expect([plain?.circuitBreaker, plain?.retryBudget, plain?.timeoutMs]).toEqual([null, null, null]);
  });

  it.each([
    [{ circuitBreaker: { failureRateThreshold: 0 } }, /circuitBreaker.failureRateThreshold must be a number in \(0, 1\] \(got 0\)/],
    [{ circuitBreaker: { failureRateThreshold: 1.5 } }, /circuitBreaker.failureRateThreshold must be a number in \(0, 1\] \(got 1.5\)/],
    [{ circuitBreaker: { minimumCalls: 0 } }, /circuitBreaker.minimumCalls must be an integer ≥ 1 \(got 0\)/],
    [
      { circuitBreaker: { openMs: 90_000, maxOpenMs: 60_000 } },
      /circuitBreaker.openMs \(90000\) is more than circuitBreaker.maxOpenMs \(60000\)/,
    ],
    [{ circuitBreaker: { halfOpenCalls: 0 } }, /circuitBreaker.halfOpenCalls must be an integer ≥ 1/],
    [{ circuitBreaker: { windowMs: -5 } }, /circuitBreaker.windowMs must be a number of ms > 0/],
    [{ circuitBreaker: { openMS: 5 } }, /unknown option 'openMS' in circuitBreaker/],
    [{ timeoutMs: -1 }, /timeoutMs must be a number of ms > 0, at most 2147483647 \(about 24.8 days\) \(got -1\)/],
    [{ timeoutMs: 3e9 }, /timeoutMs must be a number of ms > 0, at most 2147483647/],
    [{ circuitBreaker: { openMs: 3e9, maxOpenMs: 3e9 } }, /circuitBreaker.openMs must be a number of ms > 0, at most 2147483647/],
    [{ retry: { backoff: { initialMs: 3e9 } } }, /retry.backoff.initialMs must be a number ≥ 0, at most 2147483647/],
    [{ retryBudget: { ratio: -0.1 } }, /retryBudget.ratio must be a number ≥ 0 \(got -0.1\)/],
    [{ retryBudget: { minPerSecond: 0.01 } }, /retryBudget.minPerSecond \(0.01\) must be at least 0.1/],
    [
      { retry: { backoff: { jitter: 'gaussian' } } },
      /retry.backoff.jitter must be one of none, full, equal, additive, decorrelated \(got "gaussian"\)/,
    ],
  ])('invalid outage options name the processor and the field: %j', (options, message) => {
    const e = problemOf(one(options as ProcessOptions));
    expect(e.node).toBe('p');
    expect(e.message).toMatch(message);
  });

  it('unknown option names (typos), instead of silently using defaults', () => {
    expect(problemOf(one({ retyr: { maxAttempts: 5 } } as never)).message).toMatch(
      /node 'p': unknown option 'retyr' in the process options \(known: retry, classify, dedup, circuitBreaker, retryBudget, timeoutMs, dlq, inputSerdes\)/,
    );
    expect(problemOf(one({ retry: { maxAttempt: 5 } as never })).message).toMatch(
      /unknown option 'maxAttempt' in retry \(known: maxAttempts, backoff/,
    );
    expect(problemOf(one({ retry: { backoff: { initalMs: 5 } as never } })).message).toMatch(/unknown option 'initalMs' in retry.backoff/);
    expect(problemOf(one({ dedup: { key: () => 'k', ttlMs: 1, tll: 2 } as never })).message).toMatch(/unknown option 'tll' in dedup/);
    expect(problemOf(one({}, { sucess: 'out' } as never)).message).toMatch(/unknown option 'sucess' in branch\(\)/);
    expect(problemOf(one({}, { success: sink('out', { partitons: 3 } as never) })).message).toMatch(
      /unknown option 'partitons' in sink\('out'\)/,
    );
    expect(
      problemOf(
        topology({ applicationId: 'a', guarantee: 'exactly_once' } as never)
          .source('in')
          .process('p', fn)
          .branch({ success: 'out' }),
      ).message,
    ).toMatch(/unknown option 'guarantee' in topology\(\)/);
  });

  it('a retry policy given twice', () => {
    expect(problemOf(one({ retry: { maxAttempts: 2 } }, { success: 'out', retry: { maxAttempts: 3 } })).message).toMatch(
      /retry policy given twice/,
    );
  });

  it('a retry of null in the process options is no policy: the branch one is taken, not "given twice"', () => {
    const compiled = compile(one({ retry: null as unknown as ProcessOptions['retry'] }, { success: 'out', retry: { maxAttempts: 7 } }));
    expect(compiled.subtopologies.get(0)!.processor.retry.maxAttempts).toBe(7);
  });

  it("a retry policy given twice reports each place's own problems in the same run", () => {
    const message = problemOf(
      one({ retry: { maxAttempts: 0 } }, { success: 'out', retry: { maxAttempts: 3, backoff: { initialMs: 500, maxMs: 100 } } }),
    ).message;
    expect(message).toMatch(/retry policy given twice/);
    expect(message).toMatch(/in the process options: .*maxAttempts/);
    expect(message).toMatch(/in branch\(\{ retry \}\): .*maxMs/);
  });
});
