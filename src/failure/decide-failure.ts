import type { ClassifyFn } from '../dsl/process-options.js';
import type { ProcessorRecord } from '../dsl/processor.js';
import { ClassifyHookError, IllegalStateError, LoopGuardError, RecordTooLargeError } from '../errors.js';
import { recordBytes } from '../record/record-size.js';
import type { InputRecord } from '../record/record-types.js';
import { computeBackoffDelay, type Random } from './backoff.js';
import { classifyError, errorClassOf, errorMessageOf } from './classify-error.js';
import { buildDeadLetterRecord } from './dead-letter-record.js';
import type { FailureInfo } from './failure-headers.js';
import type { FailureOutcome } from './failure-outcome.js';
import { fitDeadLetter } from './fit-dead-letter.js';
import type { RetryHistory } from './retry-history.js';
import { tierIndexForRetry, type RetryPolicy } from './retry-policy.js';
import { buildRetryTierRecord } from './retry-tier-record.js';

/** A retry tier as the failure path needs it: its topic and delay (ms). */
export interface RetryTierTarget {
  readonly topic: string;
  readonly delayMs: number;
}

/** Everything the failure path needs to know about a failed record. Times are epoch ms. */
export interface FailureContext {
  readonly applicationId: string;
  readonly processor: string;
  readonly policy: RetryPolicy;
  readonly deadLetterTopic: string;
  /** The processor's retry tiers, by tier index (empty in blocking mode). */
  readonly tiers: readonly RetryTierTarget[];
  /**
   * The record as it was read (from the source or a retry tier) or, at a chain step after the
   * first, the step's input: the previous step's output, serialized with the step's input serdes.
   */
  readonly record: InputRecord;
  /** A chain step after the first: its name (`weir.step` on the copies). */
  readonly step?: string;
  /** The record's retry history before this attempt. */
  readonly history: RetryHistory;
  readonly now: number;
  readonly random: Random;
  /** Largest record, bytes (`recordBytes` estimate). */
  readonly maxRecordBytes: number;
}

function failureInfo(ctx: FailureContext, attempts: number, error: unknown): FailureInfo {
  return {
    applicationId: ctx.applicationId,
    processor: ctx.processor,
    attempts,
    error,
    firstFailureMs: ctx.history.firstFailureMs ?? ctx.now,
    lastFailureMs: ctx.now,
    replayCount: ctx.history.replayCount,
    ...(ctx.step !== undefined ? { step: ctx.step } : {}),
  };
}

/**
 * The record's dead-letter outcome: its DLQ copy with the failure headers, fitted to the record
 * size limit (see `fitDeadLetter`).
 *
 * @param attempts how many times the record was processed (0 when it never reached the processor)
 * @param retriable whether the failure was retriable (its attempts ran out)
 */
export function deadLetterOutcome(ctx: FailureContext, attempts: number, error: unknown, retriable = false): FailureOutcome {
  const output = buildDeadLetterRecord(ctx.record, ctx.deadLetterTopic, failureInfo(ctx, attempts, error), ctx.policy.maxReplays);
  return { kind: 'dead-letter', output: fitDeadLetter(output, ctx.maxRecordBytes), errorClass: errorClassOf(error), error, retriable };
}

function retryOutcome(ctx: FailureContext, attempt: number, error: unknown): FailureOutcome {
  const { policy } = ctx;
  const retryIndex = attempt - 1;
  if (policy.mode === 'blocking') {
    return {
      kind: 'retry-in-place',
      delayMs: computeBackoffDelay(policy.backoff, retryIndex, ctx.random, ctx.history.lastDelayMs),
      errorClass: errorClassOf(error),
      error,
      retriable: true,
    };
  }
  const hops = ctx.history.hops + 1;
  if (hops > policy.maxHops) {
    return deadLetterOutcome(
      ctx,
      attempt,
      new LoopGuardError(`record exceeded the hop limit (${policy.maxHops}) after: ${errorMessageOf(error)}`),
      true,
    );
  }
  if (policy.order === 'key') {
    // The record waits at its task, its key's later records behind it: the tiers' delays, no topic.
    const delayMs = policy.explicitTiers
      ? policy.tierDelaysMs[tierIndexForRetry(policy, retryIndex)]!
      : computeBackoffDelay(policy.backoff, retryIndex, ctx.random, ctx.history.lastDelayMs);
    return { kind: 'retry-parked', delayMs, errorClass: errorClassOf(error), error, retriable: true };
  }
  const tier = ctx.tiers[tierIndexForRetry(policy, retryIndex)];
  if (tier === undefined) throw new IllegalStateError(`processor '${ctx.processor}' has no retry tier for retry ${retryIndex + 1}`);
  const delayMs = policy.explicitTiers
    ? tier.delayMs
    : computeBackoffDelay(policy.backoff, retryIndex, ctx.random, ctx.history.lastDelayMs);
  const output = buildRetryTierRecord(ctx.record, tier.topic, failureInfo(ctx, attempt, error), ctx.now + delayMs, hops);
  const bytes = recordBytes(output);
  if (bytes > ctx.maxRecordBytes)
    return deadLetterOutcome(ctx, attempt, new RecordTooLargeError(`the retry copy for '${tier.topic}'`, bytes, ctx.maxRecordBytes), true);
  return { kind: 'retry-topic', delayMs, output, errorClass: errorClassOf(error), error, retriable: true };
}

/**
 * Decides what becomes of a failed attempt (Spring Kafka's and Kafka Connect's rules):
 * the user's `classify` hook, else `defaultClassify`, says retry or dead-letter; a retriable
 * failure is retried — in place (blocking mode), through the next retry tier (retry-topic
 * mode), or parked at its task (`order: 'key'`) — until `maxAttempts`, or until the hop limit (`LoopGuardError`); then it is
 * dead-lettered. A hook that throws or answers something else dead-letters the record with a
 * `ClassifyHookError`. Never throws for a valid topology.
 *
 * @param attempt the attempt that failed (1-based)
 */
export function decideFailure(
  ctx: FailureContext,
  attempt: number,
  error: unknown,
  record: ProcessorRecord,
  classify: ClassifyFn | undefined,
): FailureOutcome {
  const { classification, hookError } = classifyError(error, record, classify);
  if (hookError !== undefined) return deadLetterOutcome(ctx, attempt, new ClassifyHookError(hookError, errorMessageOf(error), error));
  if (classification === 'dlq') return deadLetterOutcome(ctx, attempt, error);
  if (attempt >= ctx.policy.maxAttempts) return deadLetterOutcome(ctx, attempt, error, true);
  return retryOutcome(ctx, attempt, error);
}
