import type { OutputRecord } from '../record/record-types.js';

/** What is known of the failure that decided an outcome. */
interface FailureOf {
  /** The class name recorded in `weir.error.class`. */
  readonly errorClass: string;
  readonly error: unknown;
  /**
   * Whether the failure was retriable (classified `'retry'`), even if attempts ran out: what a
   * circuit breaker counts as a failure of the dependency.
   */
  readonly retriable: boolean;
}

/**
 * What becomes of a failed attempt, as a value:
 * - `retry-in-place` (blocking mode): try the record again after `delayMs`; its partition waits;
 * - `retry-topic` (retry-topic mode): `output` is the record's copy for the next retry tier,
 *   due `delayMs` from now; the partition moves on;
 * - `retry-parked` (retry-topic mode with `order: 'key'`): the record waits at its task until
 *   `delayMs` from now, durably, and its key's later records wait behind it; other keys move on;
 * - `dead-letter`: `output` is the record's DLQ copy.
 */
export type FailureOutcome =
  | (FailureOf & { readonly kind: 'retry-in-place'; readonly delayMs: number })
  | (FailureOf & { readonly kind: 'retry-topic'; readonly delayMs: number; readonly output: OutputRecord })
  | (FailureOf & { readonly kind: 'retry-parked'; readonly delayMs: number })
  | (FailureOf & { readonly kind: 'dead-letter'; readonly output: OutputRecord });
