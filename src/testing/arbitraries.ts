import fc from 'fast-check';
import {
  JITTERS,
  type CircuitBreakerOptions,
  type Jitter,
  type RetryBudgetOptions,
  type RetryMode,
  type RetryOrder,
  type RetryOptions,
} from '../dsl/process-options.js';
import type { ProcessingGuarantee } from '../dsl/topology-builder.js';
import { resolveRetryPolicy } from '../failure/retry-policy.js';
import type { ChainPlannedValue } from './chain-plan.js';
import type { AttemptResult, FailurePlan, PlannedValue } from './failure-plan.js';
import { FAULT_POINTS, type Fault, type FaultPoint, type FaultSchedule } from './fault-schedule.js';
import type { TestInput } from './test-records.js';

/** Options of {@link arbitraries.testInputs}. */
export interface TestInputsOptions<V> {
  /** The key pool: a count (`k0`, `k1`, …; default 4 — small, so keys repeat) or the keys. */
  readonly keys?: number | readonly string[];
  /** Also generate records without a key. Default false. */
  readonly nullKeys?: boolean;
  readonly minLength?: number;
  /** Default 20. */
  readonly maxLength?: number;
  /** Record values; default `{ n: <integer> }`. */
  readonly value?: fc.Arbitrary<V>;
  /** Also generate user headers (`h-0`…`h-2`). Default false. */
  readonly headers?: boolean;
}

function keyArbitrary(options: { keys?: number | readonly string[]; nullKeys?: boolean }): fc.Arbitrary<string | null> {
  const pool = typeof options.keys === 'object' ? options.keys : Array.from({ length: options.keys ?? 4 }, (_, i) => `k${i}`);
  if (pool.length === 0) throw new RangeError('arbitraries: keys must not be empty');
  const key: fc.Arbitrary<string | null> = fc.constantFrom(...pool);
  return options.nullKeys ? fc.oneof({ weight: 4, arbitrary: key }, { weight: 1, arbitrary: fc.constant(null) }) : key;
}

const headersArbitrary = fc.dictionary(fc.constantFrom('h-0', 'h-1', 'h-2'), fc.string({ maxLength: 8 }), { maxKeys: 3 });

/** A generated test input: a string key (or null) and a `V` value (never raw bytes). */
export type GeneratedInput<V> = TestInput<string, V> & { readonly key: string | null; readonly value: V };
type Input<V> = GeneratedInput<V>;

function inputs<V>(options: TestInputsOptions<V>, value: fc.Arbitrary<V>): fc.Arbitrary<Input<V>[]> {
  const record = fc.record({ key: keyArbitrary(options), value, headers: options.headers ? headersArbitrary : fc.constant(undefined) });
  return fc
    .array(record, { minLength: options.minLength ?? 0, maxLength: options.maxLength ?? 20 })
    .map((records) =>
      records.map((r) => (r.headers === undefined ? { key: r.key, value: r.value } : { key: r.key, value: r.value, headers: r.headers })),
    );
}

/** Records with keys from a small pool (so per-key order and dedup get exercised) and payloads. */
function testInputs<V = { n: number }>(options: TestInputsOptions<V> = {}): fc.Arbitrary<GeneratedInput<V>[]> {
  return inputs(options, options.value ?? (fc.record({ n: fc.integer() }) as unknown as fc.Arbitrary<V>));
}

/** Options of {@link arbitraries.failurePlan}. */
export interface FailurePlanOptions {
  /** Longest plan (default 6): attempts past it succeed. */
  readonly maxLength?: number;
  /** Relative weights of each attempt result (default ok 1, retriable 3, non-retriable 1). */
  readonly weights?: Readonly<Partial<Record<AttemptResult, number>>>;
}

/** A failure plan: for each attempt, ok, retriable or non-retriable. */
function failurePlan(options: FailurePlanOptions = {}): fc.Arbitrary<FailurePlan> {
  const w = { ok: 1, retriable: 3, 'non-retriable': 1, ...options.weights };
  const step = fc.oneof(
    ...(['ok', 'retriable', 'non-retriable'] as const)
      .filter((r) => w[r] > 0)
      .map((r) => ({ weight: w[r], arbitrary: fc.constant<AttemptResult>(r) })),
  );
  return fc.array(step, { maxLength: options.maxLength ?? 6 });
}

/** Options of {@link arbitraries.plannedInputs}. */
export interface PlannedInputsOptions<P> extends Omit<TestInputsOptions<unknown>, 'value'> {
  readonly plan?: fc.Arbitrary<FailurePlan>;
  /** Payload beside the plan (default none). */
  readonly payload?: fc.Arbitrary<P>;
}

/** Records whose value is a {@link PlannedValue} (`{ id: 'r<index>', plan }`), for `plannedProcessor()`. */
function plannedInputs<P = undefined>(options: PlannedInputsOptions<P> = {}): fc.Arbitrary<GeneratedInput<PlannedValue<P>>[]> {
  const value = fc.record({ plan: options.plan ?? failurePlan(), payload: options.payload ?? fc.constant(undefined) });
  return inputs(options, value).map((records) =>
    records.map((r, i) => ({
      ...r,
      value:
        r.value.payload === undefined ? { id: `r${i}`, plan: r.value.plan } : { id: `r${i}`, plan: r.value.plan, payload: r.value.payload },
    })),
  );
}

/** Records for a processor chain of `steps`: values `{ id: 'r<index>', plans: { [step]: FailurePlan } }` for `plannedChainStep`. */
function chainedInputs(
  steps: readonly string[],
  options: Omit<TestInputsOptions<unknown>, 'value'> & { readonly plan?: fc.Arbitrary<FailurePlan> } = {},
): fc.Arbitrary<GeneratedInput<ChainPlannedValue>[]> {
  const plan = options.plan ?? failurePlan({ maxLength: 4 });
  const plans = fc.tuple(...steps.map(() => plan)).map((list) => Object.fromEntries(steps.map((s, i) => [s, list[i]!])));
  return inputs(options, plans).map((records) => records.map((r, i) => ({ ...r, value: { id: `r${i}`, plans: r.value } })));
}

/** Options of {@link arbitraries.retryOptions}. */
export interface RetryOptionsArbitraryOptions {
  /** Default both. */
  readonly modes?: readonly RetryMode[];
  readonly minAttempts?: number;
  /** Default 6. */
  readonly maxAttempts?: number;
  /** Largest `backoff.initialMs` (default 3 600 000: an hour — the driver runs it in virtual time). */
  readonly maxInitialMs?: number;
  readonly jitters?: readonly Jitter[];
  /** In topics mode, sometimes give explicit tiers and a `maxHops` (default true). */
  readonly tiersAndHops?: boolean;
  /**
   * The `order`s a topics-mode policy may have (default `['none']`); with `'key'`, sometimes a
   * small `maxParkedKeys` (1–3), so that tasks fill up.
   */
  readonly orders?: readonly RetryOrder[];
}

/** Valid retry options: attempts, backoff (initial, multiplier, max, jitter), mode, tiers, hops. */
function retryOptions(options: RetryOptionsArbitraryOptions = {}): fc.Arbitrary<RetryOptions> {
  const maxInitial = options.maxInitialMs ?? 3_600_000;
  const backoff = fc
    .record({
      initialMs: fc.oneof(fc.integer({ min: 0, max: Math.min(1_000, maxInitial) }), fc.integer({ min: 0, max: maxInitial })),
      multiplier: fc.oneof(fc.constantFrom(1, 2, 3), fc.double({ min: 1, max: 4, noNaN: true })),
      extraMs: fc.integer({ min: 0, max: Math.max(1, maxInitial * 4) }),
      jitter: fc.constantFrom(...(options.jitters ?? JITTERS)),
    })
    .map(({ initialMs, multiplier, extraMs, jitter }) => ({ initialMs, multiplier, maxMs: initialMs + extraMs, jitter }));
  const base = fc.record({
    maxAttempts: fc.integer({ min: options.minAttempts ?? 1, max: options.maxAttempts ?? 6 }),
    backoff,
    mode: fc.constantFrom(...(options.modes ?? (['blocking', 'topics'] as const))),
  });
  const extras = fc.record({
    tiers: fc.option(fc.array(fc.integer({ min: 1, max: Math.max(1, maxInitial) }), { minLength: 1, maxLength: 3 }), { nil: undefined }),
    maxHops: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
  });
  const order = fc.record({
    order: fc.constantFrom(...(options.orders ?? (['none'] as const))),
    maxParkedKeys: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  });
  return fc
    .tuple(base, options.tiersAndHops === false ? fc.constant({ tiers: undefined, maxHops: undefined }) : extras, order)
    .map(([b, e, o]): RetryOptions => {
      if (b.mode !== 'topics') return b;
      const tiers = e.tiers !== undefined && e.tiers.length <= b.maxAttempts - 1 ? e.tiers : undefined;
      const ordered = o.order === 'key' ? { order: 'key' as const, ...(o.maxParkedKeys ? { maxParkedKeys: o.maxParkedKeys } : {}) } : {};
      return { ...b, ...(tiers ? { tiers } : {}), ...(e.maxHops !== undefined ? { maxHops: e.maxHops } : {}), ...ordered };
    })
    .filter((o) => !Array.isArray(resolveRetryPolicy(o)));
}

/** Options of {@link arbitraries.faultSchedule}. */
export interface FaultScheduleOptions {
  /** Which points and faults are possible (`mid-transaction`, `stall` and `abort-transaction` need exactly_once). */
  readonly guarantee: ProcessingGuarantee;
  /** Default 3. */
  readonly maxFaults?: number;
  /** Default every kind that applies. */
  readonly kinds?: readonly Fault['kind'][];
  /** Largest `nth` (default 4) and `atPoll` (default 24). */
  readonly maxNth?: number;
  readonly maxPoll?: number;
}

/** A fault point valid under `guarantee`. */
function faultPoint(guarantee: ProcessingGuarantee): fc.Arbitrary<FaultPoint> {
  return fc.constantFrom(...FAULT_POINTS.filter((p) => guarantee === 'exactly_once' || p !== 'mid-transaction'));
}

/** Fault schedules: crashes, stalls (zombies) and broker errors at named points, aborted transactions, rebalances, dedup store outages. */
function faultSchedule(options: FaultScheduleOptions): fc.Arbitrary<FaultSchedule> {
  const nth = fc.integer({ min: 1, max: options.maxNth ?? 4 });
  const atPoll = fc.integer({ min: 1, max: options.maxPoll ?? 24 });
  const point = faultPoint(options.guarantee);
  const byKind: Record<Fault['kind'], fc.Arbitrary<Fault>> = {
    crash: fc.record({ kind: fc.constant('crash' as const), point, nth }),
    'broker-error': fc.record({ kind: fc.constant('broker-error' as const), point, nth }),
    stall: fc.record({ kind: fc.constant('stall' as const), point, nth }),
    'abort-transaction': fc.record({ kind: fc.constant('abort-transaction' as const), nth }),
    rebalance: fc.record({ kind: fc.constant('rebalance' as const), atPoll, graceful: fc.boolean() }),
    'dedup-store-down': fc.record({ kind: fc.constant('dedup-store-down' as const), atPoll, forPolls: fc.integer({ min: 1, max: 10 }) }),
  };
  const kinds = (options.kinds ?? (Object.keys(byKind) as Fault['kind'][])).filter(
    (k) => options.guarantee === 'exactly_once' || (k !== 'abort-transaction' && k !== 'stall'),
  );
  if (kinds.length === 0) throw new RangeError(`arbitraries.faultSchedule: no fault kind applies under ${options.guarantee}`);
  return fc.array(fc.oneof(...kinds.map((k) => byKind[k])), { maxLength: options.maxFaults ?? 3 });
}

/** Valid circuit-breaker options (resilience4j's names; times up to `maxMs`, default 60 000). */
function circuitBreakerOptions(options: { readonly maxMs?: number } = {}): fc.Arbitrary<CircuitBreakerOptions> {
  const maxMs = options.maxMs ?? 60_000;
  return fc
    .record({
      failureRateThreshold: fc.constantFrom(0.25, 0.5, 0.75, 1),
      minimumCalls: fc.integer({ min: 1, max: 6 }),
      windowMs: fc.integer({ min: 100, max: maxMs }),
      openMs: fc.integer({ min: 1, max: maxMs }),
      extraMs: fc.integer({ min: 0, max: maxMs }),
      halfOpenCalls: fc.integer({ min: 1, max: 3 }),
    })
    .map(({ extraMs, ...o }) => ({ ...o, maxOpenMs: o.openMs + extraMs }));
}

/** Valid retry-budget options (Finagle's shape: a ratio and a floor per second). */
function retryBudgetOptions(): fc.Arbitrary<RetryBudgetOptions> {
  return fc.record({ ratio: fc.constantFrom(0, 0.1, 0.5, 1, 2), minPerSecond: fc.constantFrom(0.1, 0.5, 1, 5) });
}

/**
 * fast-check arbitraries for weir properties: inputs, failure plans, retry policies, circuit
 * breakers, retry budgets and fault schedules. Shrinking works on all of them, so a failing property reports a small input.
 *
 * @example
 * fc.asyncProperty(arbitraries.plannedInputs(), arbitraries.faultSchedule({ guarantee: 'exactly_once' }), async (inputs, faults) => { … })
 */
export const arbitraries = Object.freeze({
  testInputs,
  plannedInputs,
  chainedInputs,
  failurePlan,
  retryOptions,
  faultSchedule,
  faultPoint,
  circuitBreakerOptions,
  retryBudgetOptions,
});
