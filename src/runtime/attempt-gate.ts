import { HALF_OPEN_RECHECK_MS, type CallResult } from '../failure/circuit-breaker.js';
import type { RetryHistory } from '../failure/retry-history.js';
import type { WaitReason } from './poll-result.js';
import type { ProcessorResilience } from './processor-resilience.js';
import type { RecordOutcome } from './record-outcome.js';
import type { Slot } from './task-buffer.js';
import type { TaskEvents } from './task-events.js';

/** Whether a record may be attempted now: call (`probe`: a half-open breaker's probe), or wait. */
export type Admission =
  | { readonly kind: 'call'; readonly probe: boolean }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly reason: Extract<WaitReason, 'circuit-open' | 'retry-budget'> };

/** The admission of a call when the processor has no circuit breaker. */
const UNGUARDED: Admission = Object.freeze({ kind: 'call', probe: false });

/**
 * A task's side of its processor's outage guards ({@link ProcessorResilience}): before an
 * attempt, a retry (the record failed before) needs a retry-budget token and every call a
 * circuit-breaker permit, and a first attempt deposits into the budget; after it, the breaker
 * counts the outcome and may hold the record. Times are epoch ms on the task's clock.
 */
export class AttemptGate {
  constructor(
    private readonly resilience: ProcessorResilience,
    private readonly events: TaskEvents,
  ) {}

  /** Asks the budget (retries only) and the breaker whether the head record may be attempted at `now`. */
  admit(slot: Slot, history: RetryHistory, now: number): Admission {
    const { breaker, budget, processor } = this.resilience;
    const isRetry = history.attempts > 0;
    if (budget !== null && isRetry && budget.tokens(now) < 1) {
      const answer = budget.tryRetry(now);
      if (answer.kind === 'wait') {
        if (slot.budgetDelayed !== true) {
          slot.budgetDelayed = true;
          budget.delayed++;
          this.events.retryDelayed(slot.raw, processor, answer.retryAtMs);
        }
        return { kind: 'wait', untilMs: answer.retryAtMs, reason: 'retry-budget' };
      }
    }
    const permit = breaker?.acquire(now) ?? UNGUARDED;
    if (permit.kind === 'wait') return { kind: 'wait', untilMs: permit.untilMs, reason: 'circuit-open' };
    if (budget !== null) {
      if (isRetry) budget.tryRetry(now);
      else if (slot.retry === undefined) budget.firstAttempt(now);
    }
    if (slot.budgetDelayed === true) slot.budgetDelayed = false;
    return permit;
  }

  /**
   * Counts an attempt's outcome in the breaker.
   *
   * @returns when the record may be tried again (epoch ms) if the breaker holds it — the failure
   *   opened the breaker, was a failed probe, or came while it was open — else undefined
   */
  settle(at: number, call: CallResult, probe: boolean, outcome: RecordOutcome): number | undefined {
    const breaker = this.resilience.breaker;
    if (breaker === null) return undefined;
    const error = outcome.kind === 'success' ? undefined : outcome.error;
    if (breaker.record(at, call, probe, error) !== 'held') return undefined;
    return breaker.reopensAt ?? at + HALF_OPEN_RECHECK_MS;
  }
}
