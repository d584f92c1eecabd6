import { describe, expect, it } from 'vitest';
import type { RetryOptions } from '../dsl/process-options.js';
import { resolveRetryPolicy, scheduleTierDelays, tierIndexForRetry, type RetryPolicy } from './retry-policy.js';

function policy(options: RetryOptions): RetryPolicy {
  const resolved = resolveRetryPolicy(options);
  if (Array.isArray(resolved)) throw new Error(resolved.join('; '));
  return resolved;
}

function problems(options: unknown): string[] {
  const resolved = resolveRetryPolicy(options as RetryOptions);
  return Array.isArray(resolved) ? resolved : [];
}

describe('resolveRetryPolicy: retry mode', () => {
  it("defaults to 'blocking' with no tiers", () => {
    const p = policy({});
    expect(p.mode).toBe('blocking');
    expect(p.tierDelaysMs).toEqual([]);
  });

  it('rejects an unknown mode and tiers outside topics mode, naming the field', () => {
    expect(problems({ mode: 'later' })).toEqual([`retry.mode must be 'blocking' or 'topics' (got "later")`]);
    expect(problems({ tiers: ['1s'] })).toContain(`retry.tiers is only valid with retry.mode 'topics'`);
  });
});

describe('resolveRetryPolicy: tiers derived from the backoff schedule (Spring Kafka 3.2+)', () => {
  it('makes one tier per distinct delay and reuses the last one (capped by maxMs)', () => {
    const p = policy({ mode: 'topics', maxAttempts: 7, backoff: { initialMs: 1000, multiplier: 2, maxMs: 5000, jitter: 'none' } });
    // retries: 1 s, 2 s, 4 s, 5 s, 5 s, 5 s
    expect(p.tierDelaysMs).toEqual([1000, 2000, 4000, 5000]);
    expect(p.explicitTiers).toBe(false);
    expect([0, 1, 2, 3, 4, 5].map((i) => tierIndexForRetry(p, i))).toEqual([0, 1, 2, 3, 3, 3]);
  });

  it('makes a single tier for a fixed backoff (multiplier 1)', () => {
    const p = policy({ mode: 'topics', maxAttempts: 5, backoff: { initialMs: 750, multiplier: 1 } });
    expect(p.tierDelaysMs).toEqual([750]);
    expect([0, 1, 2, 3].map((i) => tierIndexForRetry(p, i))).toEqual([0, 0, 0, 0]);
  });

  it('stops at the retries there are: 3 attempts → 2 tiers, even when maxMs is far', () => {
    const p = policy({ mode: 'topics', maxAttempts: 3, backoff: { initialMs: 100, multiplier: 3, maxMs: 60_000 } });
    expect(p.tierDelaysMs).toEqual([100, 300]);
  });

  it('makes no tier when there is no retry (maxAttempts 1)', () => {
    expect(policy({ mode: 'topics', maxAttempts: 1 }).tierDelaysMs).toEqual([]);
    expect(scheduleTierDelays({ initialMs: 100, multiplier: 2, maxMs: 1000, jitter: 'none' }, 0)).toEqual([]);
  });

  it('rounds fractional delays to whole ms', () => {
    expect(scheduleTierDelays({ initialMs: 100, multiplier: 1.5, maxMs: 1000, jitter: 'full' }, 4)).toEqual([100, 150, 225, 338]);
  });
});

describe('resolveRetryPolicy: explicit tiers', () => {
  it("parses durations ('1s', '10s', '1m') and ms numbers, one retry per tier by default", () => {
    const p = policy({ mode: 'topics', tiers: ['1s', '10s', '1m'] });
    expect(p.tierDelaysMs).toEqual([1000, 10_000, 60_000]);
    expect(p.explicitTiers).toBe(true);
    expect(p.maxAttempts).toBe(4);
    expect(p.maxHops).toBe(4);
    expect(policy({ mode: 'topics', tiers: [250, '2s'] }).tierDelaysMs).toEqual([250, 2000]);
  });

  it('reuses the last tier for retries past it', () => {
    const p = policy({ mode: 'topics', tiers: ['1s', '5s'], maxAttempts: 6 });
    expect([0, 1, 2, 3, 4].map((i) => tierIndexForRetry(p, i))).toEqual([0, 1, 1, 1, 1]);
  });

  it('rejects tiers that could never be used, bad durations and an empty list', () => {
    expect(problems({ mode: 'topics', tiers: ['1s', '10s', '1m'], maxAttempts: 3 })).toEqual([
      'retry.tiers has 3 tier(s) but retry.maxAttempts (3) allows only 2 retries: tiers past retry 2 would never be used (raise maxAttempts, or drop it to get one retry per tier)',
    ]);
    expect(problems({ mode: 'topics', tiers: ['1s', 'soon', 0] })).toEqual([
      'retry.tiers[1] is not a positive duration (got "soon")',
      'retry.tiers[2] is not a positive duration (got 0)',
    ]);
    expect(problems({ mode: 'topics', tiers: [] })).toEqual(['retry.tiers must be a non-empty list of delays such as 1s, 10s, 1m']);
  });
});

describe('resolveRetryPolicy: loop guards', () => {
  it('defaults maxHops to maxAttempts and maxReplays to 3, and validates both', () => {
    const p = policy({ mode: 'topics', maxAttempts: 5 });
    expect(p.maxHops).toBe(5);
    expect(p.maxReplays).toBe(3);
    expect(problems({ maxHops: 0, maxReplays: -1 })).toEqual([
      'retry.maxReplays must be an integer ≥ 0 (got -1)',
      'retry.maxHops must be an integer ≥ 1 (got 0)',
    ]);
  });
});

describe('resolveRetryPolicy: key order', () => {
  it("keeps order 'key' in topics mode, with maxParkedKeys 10 000 by default", () => {
    expect(policy({ mode: 'topics', order: 'key' })).toMatchObject({ order: 'key', maxParkedKeys: 10_000, tierDelaysMs: [500, 1000] });
    expect(policy({ mode: 'topics', order: 'key', maxParkedKeys: 3 }).maxParkedKeys).toBe(3);
    expect(policy({ mode: 'topics' })).toMatchObject({ order: 'none', maxParkedKeys: null });
  });

  it("rejects order 'key' in blocking mode, maxParkedKeys without it, and bad values, naming the field", () => {
    expect(problems({ order: 'key' })).toEqual([
      "retry.order 'key' is only valid with retry.mode 'topics' (blocking mode keeps the order already: a failed record holds its partition)",
    ]);
    expect(problems({ mode: 'topics', maxParkedKeys: 5 })).toEqual(["retry.maxParkedKeys is only valid with retry.order 'key'"]);
    expect(problems({ mode: 'topics', order: 'offset' as never, maxParkedKeys: 0 })).toEqual([
      "retry.order must be 'none' or 'key' (got \"offset\")",
      'retry.maxParkedKeys must be an integer ≥ 1 (got 0)',
    ]);
  });

  it('reports the rules across mode, order, tiers and maxParkedKeys also when another field is invalid', () => {
    expect(problems({ order: 'key', maxParkedKeys: 0 })).toEqual([
      'retry.maxParkedKeys must be an integer ≥ 1 (got 0)',
      "retry.order 'key' is only valid with retry.mode 'topics' (blocking mode keeps the order already: a failed record holds its partition)",
    ]);
    expect(problems({ maxAttempts: 0, tiers: ['1s'], maxParkedKeys: 2 })).toEqual([
      'retry.maxAttempts must be an integer ≥ 1 (got 0)',
      "retry.tiers is only valid with retry.mode 'topics'",
      "retry.maxParkedKeys is only valid with retry.order 'key'",
    ]);
    // A rule whose own field is invalid is not checked: the field's problem says enough.
    expect(problems({ mode: 'sideways', order: 'key' })).toEqual(["retry.mode must be 'blocking' or 'topics' (got \"sideways\")"]);
  });
});

describe('resolveRetryPolicy: defaults', () => {
  it('resolves {} and undefined to the documented defaults: 3 attempts, 500 ms × 2 up to 30 s, equal jitter, blocking', () => {
    const documented: RetryPolicy = {
      maxAttempts: 3,
      backoff: { initialMs: 500, multiplier: 2, maxMs: 30_000, jitter: 'equal' },
      mode: 'blocking',
      tierDelaysMs: [],
      explicitTiers: false,
      maxHops: 3,
      maxReplays: 3,
      order: 'none',
      maxParkedKeys: null,
    };
    expect(policy({})).toEqual(documented);
    expect(resolveRetryPolicy(undefined)).toEqual(documented);
    expect(Object.isFrozen(policy({}))).toBe(true);
    expect(Object.isFrozen(policy({}).backoff)).toBe(true);
  });

  it('fills the backoff fields not given, and raises a maxMs not given to initialMs', () => {
    expect(policy({ backoff: { jitter: 'none' } }).backoff).toEqual({ initialMs: 500, multiplier: 2, maxMs: 30_000, jitter: 'none' });
    expect(policy({ backoff: { initialMs: 40_000 } }).backoff.maxMs).toBe(40_000);
    expect(problems({ backoff: { initialMs: 500, maxMs: 100 } })).toEqual([
      'retry.backoff.maxMs (100) is less than retry.backoff.initialMs (500)',
    ]);
  });

  it('reports maxMs below initialMs along with an invalid field elsewhere, not only once that is fixed', () => {
    expect(problems({ backoff: { initialMs: 1_000, maxMs: 10, multiplier: Number.NaN } })).toEqual([
      'retry.backoff.multiplier must be a number ≥ 1 (got NaN)',
      'retry.backoff.maxMs (10) is less than retry.backoff.initialMs (1000)',
    ]);
    // A bound that is itself invalid is reported as such, not compared.
    expect(problems({ backoff: { initialMs: 1_000, maxMs: -1 } })).toHaveLength(1);
  });

  it('names the backoff field at fault, and the object when it is not one', () => {
    expect(problems({ backoff: { multiplier: 0.5, jitter: 'some' } })).toEqual([
      'retry.backoff.multiplier must be a number ≥ 1 (got 0.5)',
      'retry.backoff.jitter must be one of none, full, equal, additive, decorrelated (got "some")',
    ]);
    expect(problems({ backoff: 5 })).toEqual(['retry.backoff must be an object (got 5)']);
    expect(problems(3)).toEqual(['retry must be an object (got 3)']);
    expect(problems({ backoff: { initialMS: 5 } })).toEqual([
      "unknown option 'initialMS' in retry.backoff (known: initialMs, multiplier, maxMs, jitter)",
    ]);
  });

  it('accepts read-only tier lists, as the options type did', () => {
    const tiers = ['1s', '10s'] as const;
    expect(policy({ mode: 'topics', tiers }).tierDelaysMs).toEqual([1_000, 10_000]);
  });
});
