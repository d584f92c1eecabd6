import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NonRetriableError,
  sink,
  topology,
  type CircuitBreakerOptions,
  type ProcessingGuarantee,
  type RetryBudgetOptions,
  type RetryOptions,
} from '../index.js';
import {
  arbitraries,
  invariants,
  ManualClock,
  plannedProcessor,
  propertyRuns,
  TopologyTestDriver,
  type PlannedValue,
} from '../testing/index.js';

const RUNS = propertyRuns();
const TIMEOUT_MS = Math.max(60_000, RUNS * 60);
const guarantees = fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once');
const planOf = (input: { value: unknown }) => (input.value as PlannedValue).plan;
/** Retry options with short backoffs, so an outage spans many attempts. */
const retries = arbitraries.retryOptions({ minAttempts: 2, maxInitialMs: 2_000 });

interface OutageValue {
  readonly id: number;
  readonly poison?: true;
}

/**
 * A dependency that is down — every call fails retriably — from `fromMs` to `toMs` on the
 * driver's clock; poison records fail non-retriably whenever they are called.
 */
function outageTopology(
  clock: ManualClock,
  outage: { fromMs: number; toMs: number },
  retry: RetryOptions,
  breaker: CircuitBreakerOptions,
  guarantee: ProcessingGuarantee,
) {
  return topology({ applicationId: 'outage', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', 'json')
    .process(
      'call',
      (record) => {
        const value = record.value as OutageValue;
        if (value.poison) throw new NonRetriableError(`poison ${value.id}`);
        const now = clock.now();
        if (now >= outage.fromMs && now < outage.toMs) throw new Error('dependency down');
        return { id: value.id };
      },
      { retry, circuitBreaker: breaker },
    )
    .branch({ success: sink('out'), dlq: sink('dlq') });
}

describe('circuit breaker, retry budget and timeouts (TopologyTestDriver)', () => {
  it(
    'an open breaker is never called through, records keep their attempts while held, and every input has one outcome',
    async () => {
      let opened = 0;
      await fc.assert(
        fc.asyncProperty(
          retries,
          arbitraries.circuitBreakerOptions({ maxMs: 20_000 }),
          guarantees,
          fc.array(fc.record({ poison: fc.boolean(), late: fc.boolean() }), { minLength: 1, maxLength: 25 }),
          fc.record({ startMs: fc.integer({ min: 0, max: 5_000 }), lengthMs: fc.integer({ min: 1, max: 120_000 }) }),
          fc.integer({ min: 1, max: 3 }),
          async (retry, breaker, guarantee, records, outage, partitions) => {
            const clock = new ManualClock();
            const fromMs = clock.now() + outage.startMs;
            const driver = new TopologyTestDriver(
              outageTopology(clock, { fromMs, toMs: fromMs + outage.lengthMs }, retry, breaker, guarantee),
              {
                clock,
                partitions,
              },
            );
            const input = (late: boolean) =>
              records
                .map((r, id) => ({ ...r, id }))
                .filter((r) => r.late === late)
                .map((r) => ({ key: `k${r.id % 5}`, value: r.poison ? { id: r.id, poison: true } : { id: r.id } }));
            await driver.pipeInput('in', input(false));
            await driver.advanceTime(outage.startMs + 1);
            await driver.pipeInput('in', input(true));
            await driver.drain();
            invariants.noCallWhileBreakerOpen(driver);
            invariants.conservationWithBreaker(driver);
            invariants.attemptBound(driver);
            invariants.delaysWithinPolicy(driver);
            invariants.headersBounded(driver);
            if (driver.history.circuitTransitions.some((t) => t.to === 'open')) opened++;
          },
        ),
        { numRuns: RUNS },
      );
      // Not vacuous: the breaker opened in a good share of the runs.
      expect(opened).toBeGreaterThan(RUNS / 10);
    },
    TIMEOUT_MS,
  );

  it(
    'a breaker that opens before any record runs out of attempts, in an outage shorter than its free holds, dead-letters nothing that succeeds after it',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 6 }),
          fc.integer({ min: 1, max: 3 }),
          guarantees,
          fc.integer({ min: 1, max: 20 }),
          fc.double({ min: 0.01, max: 1, noNaN: true }),
          async (maxAttempts, partitions, guarantee, count, share) => {
            const clock = new ManualClock();
            // A record is held at most maxAttempts times: the opening failure and maxAttempts − 1
            // failed probes. An outage that ends before the (maxAttempts − 1)-th probe (waits 500 ms
            // doubling up to 8 s, from the outage's start at the earliest) fails fewer probes.
            const waits = Array.from({ length: maxAttempts - 1 }, (_, i) => Math.min(8_000, 500 * 2 ** i));
            const lengthMs = Math.max(1, Math.floor(share * waits.reduce((a, b) => a + b, 0)));
            // minimumCalls ≤ maxAttempts and a window longer than a record's whole backoff: the
            // breaker opens no later than the first record's last attempt.
            const retry: RetryOptions = { maxAttempts, backoff: { initialMs: 10, multiplier: 2, maxMs: 100, jitter: 'full' } };
            const breaker: CircuitBreakerOptions = {
              minimumCalls: maxAttempts,
              windowMs: 60_000,
              failureRateThreshold: 1,
              openMs: 500,
              maxOpenMs: 8_000,
            };
            const from = clock.now();
            const driver = new TopologyTestDriver(
              outageTopology(clock, { fromMs: from, toMs: from + lengthMs }, retry, breaker, guarantee),
              {
                clock,
                partitions,
              },
            );
            await driver.pipeInput(
              'in',
              Array.from({ length: count }, (_, id) => ({ key: `k${id}`, value: { id } })),
            );
            await driver.drain();
            expect(driver.deadLetters()).toEqual([]);
            expect(driver.readOutput('out')).toHaveLength(count);
            invariants.noCallWhileBreakerOpen(driver);
            invariants.conservationWithBreaker(driver);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'retries stay within the retry budget, and the budget only delays: every input still ends as its failure plan says',
    async () => {
      let delayed = 0;
      await fc.assert(
        fc.asyncProperty(
          retries,
          arbitraries.retryBudgetOptions(),
          guarantees,
          arbitraries.plannedInputs({ maxLength: 30 }),
          fc.integer({ min: 1, max: 3 }),
          async (retry, budget: RetryBudgetOptions, guarantee, inputs, partitions) => {
            const t = topology({ applicationId: 'budget', processingGuarantee: guarantee, commitIntervalMs: 100 })
              .source('in', 'json')
              .process('planned', plannedProcessor(), { retry, retryBudget: budget })
              .branch({ success: sink('out'), dlq: sink('dlq') });
            const driver = new TopologyTestDriver(t, { partitions });
            await driver.pipeInput('in', inputs);
            await driver.drain();
            invariants.all(driver, { planOf });
            invariants.retriesWithinBudget(driver);
            delayed += driver.history.retriesDelayed;
          },
        ),
        { numRuns: RUNS },
      );
      expect(delayed).toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );

  it(
    'an attempt that hangs times out at timeoutMs of virtual time, its forwards are dropped, and the task moves on',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 60_000 }),
          guarantees,
          fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 12 }),
          async (maxAttempts, timeoutMs, guarantee, hangs) => {
            const t = topology({ applicationId: 'timeouts', processingGuarantee: guarantee, commitIntervalMs: 100 })
              .source('in', 'json')
              .process(
                'slow',
                (record, ctx) => {
                  const { id, hang } = record.value as { id: number; hang: number };
                  if (ctx.attempt > hang) return { id };
                  ctx.forward({ value: { id, partial: true } });
                  return new Promise(() => undefined); // hangs, ignoring ctx.signal
                },
                { retry: { maxAttempts, backoff: { initialMs: 0, jitter: 'none' } }, timeoutMs },
              )
              .branch({ success: sink('out'), dlq: sink('dlq') });
            const driver = new TopologyTestDriver(t);
            const start = driver.now();
            await driver.pipeInput(
              'in',
              hangs.map((hang, id) => ({ key: `k${id}`, value: { id, hang } })),
            );
            await driver.drain();
            invariants.conservation(driver);
            invariants.attemptBound(driver);
            const out = driver.readOutput<string, { id: number; partial?: boolean }>('out');
            expect(out.filter((o) => o.value.partial)).toEqual([]);
            const succeeded = hangs.flatMap((h, id) => (h < maxAttempts ? [id] : []));
            expect(out.map((o) => o.value.id).sort((a, b) => a - b)).toEqual(succeeded);
            const dead = driver.deadLetters();
            expect(dead).toHaveLength(hangs.length - succeeded.length);
            for (const d of dead) expect([d.errorClass, d.attempts]).toEqual(['AttemptTimeoutError', maxAttempts]);
            // One partition: the timed-out attempts ran one after another, each for timeoutMs.
            const timedOut = hangs.reduce((sum, h) => sum + Math.min(h, maxAttempts), 0);
            expect(driver.now() - start).toBeGreaterThanOrEqual(timedOut * timeoutMs);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
