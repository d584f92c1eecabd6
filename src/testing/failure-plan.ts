import type { RetryOptions } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import { NonRetriableError, TestDriverError } from '../errors.js';
import { resolveRetryPolicy, type RetryPolicy } from '../failure/retry-policy.js';

/** What one processing attempt of a record does under a {@link FailurePlan}. */
export type AttemptResult = 'ok' | 'retriable' | 'non-retriable';

/**
 * A record's script: attempt n (1-based) does `plan[n - 1]`; attempts past the end succeed.
 * `['retriable', 'retriable']` succeeds at attempt 3; `['non-retriable']` goes to the DLQ at
 * once. Keyed by the attempt number (`ctx.attempt`), not by a call count, so a replayed record
 * (after a crash or a rebalance) follows the same script — in the driver and on a real worker.
 */
export type FailurePlan = readonly AttemptResult[];

/** A retriable failure a {@link FailurePlan} asked for (`weir.error.class` `PlannedFailure`). */
export class PlannedFailure extends Error {
  override readonly name = 'PlannedFailure';
}

/**
 * A non-retriable failure a {@link FailurePlan} asked for (a `NonRetriableError`; its
 * `weir.error.class` is `PlannedNonRetriableFailure`).
 */
export class PlannedNonRetriableFailure extends NonRetriableError {}

/**
 * Throws what the plan says attempt `attempt` does: nothing for `'ok'` (or past the plan's
 * end), a {@link PlannedFailure} for `'retriable'`, a {@link PlannedNonRetriableFailure} for
 * `'non-retriable'`. Call it at the top of a processor under test.
 *
 * @param attempt the 1-based attempt number (`ctx.attempt`)
 * @param what names the record in the error message, e.g. `record o-17`
 * @throws PlannedFailure | PlannedNonRetriableFailure as planned
 */
export function applyFailurePlan(plan: FailurePlan | undefined, attempt: number, what = 'record'): void {
  const step = plan?.[attempt - 1] ?? 'ok';
  if (step === 'retriable') throw new PlannedFailure(`${what}: attempt ${attempt} fails (planned, retriable)`);
  if (step === 'non-retriable') throw new PlannedNonRetriableFailure(`${what}: attempt ${attempt} fails (planned, non-retriable)`);
}

/** The value of a planned test record: an id, its failure plan, and any payload. */
export interface PlannedValue<P = unknown> {
  readonly id: string;
  readonly plan: FailurePlan;
  readonly payload?: P;
}

/** What {@link plannedProcessor} writes to the sink for a record that succeeds. */
export interface PlannedResult<P = unknown> {
  readonly id: string;
  /** The attempt that succeeded (1-based). */
  readonly attempt: number;
  readonly payload?: P;
}

/**
 * A processor that follows each record's {@link FailurePlan} (the record value, JSON, is a
 * {@link PlannedValue}) and, on success, returns `{ id, attempt, payload }`.
 *
 * @example
 * topology('app').source('in', 'json').process('planned', plannedProcessor(), { retry }).branch({ success: 'out' })
 */
export function plannedProcessor<P = unknown>(): ProcessorFn<any, any, PlannedResult<P>> {
  return (record, ctx) => {
    const value = record.value as PlannedValue<P>;
    applyFailurePlan(value.plan, ctx.attempt, `record ${value.id}`);
    return value.payload === undefined
      ? { id: value.id, attempt: ctx.attempt }
      : { id: value.id, attempt: ctx.attempt, payload: value.payload };
  };
}

/** The outcome a plan must lead to under a retry policy. */
export interface ExpectedOutcome {
  readonly outcome: 'success' | 'dead-letter';
  /** The deciding attempt: `weir.attempts` of the DLQ copy, or the attempt that succeeded. */
  readonly attempts: number;
  /** Dead letters: the expected `weir.error.class`. */
  readonly errorClass?: string;
}

/**
 * The model of weir's retry rules: where a record with this plan must end under `retry` —
 * success at the first `'ok'` attempt; DLQ at the first `'non-retriable'` one; DLQ with
 * `PlannedFailure` once `maxAttempts` attempts failed; in retry-topic mode, DLQ with
 * `LoopGuardError` when a retry would exceed `maxHops`.
 *
 * @param retry the processor's retry options, or its compiled policy
 * @throws Error when `retry` is not a valid policy (the message lists the problems)
 */
export function expectedOutcome(plan: FailurePlan, retry: RetryOptions | RetryPolicy | undefined): ExpectedOutcome {
  const policy = retry !== undefined && 'tierDelaysMs' in retry ? retry : resolveRetryPolicy(retry);
  if (Array.isArray(policy)) throw new TestDriverError(`expectedOutcome: invalid retry policy: ${policy.join('; ')}`);
  for (let attempt = 1; ; attempt++) {
    const step = plan[attempt - 1] ?? 'ok';
    if (step === 'ok') return { outcome: 'success', attempts: attempt };
    if (step === 'non-retriable') return { outcome: 'dead-letter', attempts: attempt, errorClass: 'PlannedNonRetriableFailure' };
    if (attempt >= policy.maxAttempts) return { outcome: 'dead-letter', attempts: attempt, errorClass: 'PlannedFailure' };
    if (policy.mode === 'topics' && attempt > policy.maxHops)
      return { outcome: 'dead-letter', attempts: attempt, errorClass: 'LoopGuardError' };
  }
}
