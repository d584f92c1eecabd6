import { conservation, dedup, exactlyOnce, followsFailurePlans, type ConservationOptions } from './delivery-invariants.js';
import type { FailurePlan } from './failure-plan.js';
import { followsChainPlans } from './chain-invariants.js';
import { attemptBound, delaysWithinPolicy, headersBounded, perKeyOrder } from './retry-invariants.js';
import { conservationWithBreaker, noCallWhileBreakerOpen, retriesWithinBudget } from './outage-invariants.js';
import type { PipedInput } from './test-records.js';
import type { TopologyTestDriver } from './topology-test-driver.js';

/** Options of {@link invariants.all}. */
export interface AllInvariantsOptions extends ConservationOptions {
  /** Also check every input against its failure plan ({@link followsFailurePlans}). */
  readonly planOf?: (input: PipedInput<any, any>) => FailurePlan | undefined;
}

/**
 * Every invariant that applies to the run: conservation, attempt bound, delays, headers and
 * per-key order always; dedup when duplicates are forbidden; exactly_once under exactly_once;
 * the breaker and budget invariants when a processor has them; the failure-plan model when
 * `planOf` is given.
 *
 * @throws InvariantViolation from the first invariant that does not hold
 */
function all(driver: TopologyTestDriver, options: AllInvariantsOptions = {}): void {
  conservation(driver, options);
  attemptBound(driver);
  delaysWithinPolicy(driver);
  headersBounded(driver);
  perKeyOrder(driver);
  if (options.duplicates !== 'allowed') dedup(driver);
  if (driver.topology.processingGuarantee === 'exactly_once') exactlyOnce(driver);
  const processors = driver.topology.subtopologies.toArray().flatMap((sub) => sub.steps.toArray().map((step) => step.processor));
  if (processors.some((p) => p.circuitBreaker !== null)) {
    noCallWhileBreakerOpen(driver);
    conservationWithBreaker(driver, options);
  }
  if (processors.some((p) => p.retryBudget !== null)) retriesWithinBudget(driver);
  if (options.planOf) followsFailurePlans(driver, options.planOf);
}

/**
 * weir's invariants, to call at the end of a property on a {@link TopologyTestDriver} run.
 * Each throws an `InvariantViolation` naming the invariant and every offending record
 * (`input #3 (orders/0@3, key "c-1")` or `topic/partition@offset`); call `driver.drain()` first
 * for those that need every input decided.
 *
 * @example
 * await driver.pipeInput('orders', inputs);
 * await driver.drain();
 * invariants.conservation(driver);
 * invariants.delaysWithinPolicy(driver);
 */
export const invariants = Object.freeze({
  /** Every input ends in exactly one of sink or DLQ (or at least one, with `duplicates: 'allowed'`). */
  conservation,
  /** No record is attempted more than `maxAttempts` times. */
  attemptBound,
  /** Every backoff delay lies within the policy's bounds, jitter included, and no attempt is early. */
  delaysWithinPolicy,
  /** In blocking mode and with `retry.order: 'key'`, successes keep per-key order. */
  perKeyOrder,
  /** Inputs with the same dedup key yield a single outcome. */
  dedup,
  /** exactly_once: no output duplicated or lost (read_committed), under any faults. */
  exactlyOnce,
  /** DLQ and retry headers do not grow. */
  headersBounded,
  /** Every input ended as its failure plan says. */
  followsFailurePlans,
  /** Processor chains: every input ended as its per-step plans say, no step rerun after it succeeded. */
  followsChainPlans,
  /** No processor is called while its circuit breaker is open. */
  noCallWhileBreakerOpen,
  /** Retries stay within each processor's retry budget. */
  retriesWithinBudget,
  /** Conservation with a breaker: one outcome per input, no dead letter while open, held attempts cost nothing. */
  conservationWithBreaker,
  all,
});
