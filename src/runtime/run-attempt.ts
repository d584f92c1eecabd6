import { buildDeadLetterRecord } from '../dlq/dead-letter-record.js';
import type { FailureInfo } from '../dlq/failure-headers.js';
import { recordOrigin } from '../dlq/record-origin.js';
import type { ProcessorContext, ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { LoopGuardError } from '../errors.js';
import { computeBackoffDelay, type Random } from '../retry/backoff.js';
import { classifyError, errorClassOf } from '../retry/classify-error.js';
import { tierIndexForRetry } from '../retry/retry-policy.js';
import { buildRetryTierRecord } from '../retry/retry-tier-record.js';
import type { Subtopology } from '../topology/compiled-topology.js';
import type { PreparedRecord } from './prepared-record.js';
import type { RecordOutcome } from './record-outcome.js';
import type { RetryHistory } from './retry-history.js';
import { routeOutputs } from './route-outputs.js';

/** Everything one attempt needs. Times are epoch ms. */
export interface AttemptInput {
  readonly applicationId: string;
  readonly sub: Subtopology;
  readonly prepared: PreparedRecord;
  /** The record's retry history so far (from its headers and/or the task's blocking state). */
  readonly history: RetryHistory;
  readonly now: number;
  readonly random: Random;
}

function failureInfo(input: AttemptInput, attempts: number, error: unknown): FailureInfo {
  return {
    applicationId: input.applicationId,
    processor: input.sub.processor.name,
    attempts,
    error,
    firstFailureMs: input.history.firstFailureMs ?? input.now,
    lastFailureMs: input.now,
    replayCount: input.history.replayCount,
  };
}

function deadLetter(input: AttemptInput, attempts: number, error: unknown): RecordOutcome {
  return {
    kind: 'dead-letter',
    output: buildDeadLetterRecord(input.prepared.raw, input.sub.deadLetter.topic, failureInfo(input, attempts, error), input.sub.processor.retry.maxReplays),
    errorClass: errorClassOf(error),
    error,
  };
}

function retryLater(input: AttemptInput, attempt: number, error: unknown): RecordOutcome {
  const policy = input.sub.processor.retry;
  const retryIndex = attempt - 1;
  if (policy.mode === 'blocking') {
    return { kind: 'retry', delayMs: computeBackoffDelay(policy.backoff, retryIndex, input.random), errorClass: errorClassOf(error), error };
  }
  const hops = input.history.hops + 1;
  if (hops > policy.maxHops) {
    return deadLetter(input, attempt, new LoopGuardError(`record exceeded the hop limit (${policy.maxHops}) after: ${error instanceof Error ? error.message : String(error)}`));
  }
  const tier = input.sub.retryTiers.get(tierIndexForRetry(policy, retryIndex))!;
  const delayMs = policy.explicitTiers ? tier.delayMs : computeBackoffDelay(policy.backoff, retryIndex, input.random);
  const output = buildRetryTierRecord(input.prepared.raw, tier.topic, failureInfo(input, attempt, error), input.now + delayMs, hops);
  return { kind: 'retry', delayMs, errorClass: errorClassOf(error), error, output };
}

/**
 * Runs one processing attempt of one record and returns its outcome as a value: success
 * (routed, serialized outputs), retry (blocking delay, or the retry-tier copy), or
 * dead-letter (the DLQ copy). Never throws: processor errors, serde errors and failing
 * predicates all become outcomes.
 */
export async function runAttempt(input: AttemptInput): Promise<RecordOutcome> {
  const { sub, prepared, history } = input;
  const processor = sub.processor;
  const attempt = history.attempts + 1;
  if (prepared.record === undefined) return deadLetter(input, history.attempts, prepared.error);

  const record: ProcessorRecord = prepared.record;
  const origin = recordOrigin(prepared.raw);
  const outputs: ProcessorOutput[] = [];
  let open = true;
  const ctx: ProcessorContext = {
    applicationId: input.applicationId,
    processor: processor.name,
    attempt,
    maxAttempts: processor.retry.maxAttempts,
    originalTopic: origin.topic,
    originalPartition: origin.partition,
    originalOffset: origin.offset,
    forward(output) {
      if (!open) throw new Error(`processor '${processor.name}' called forward() after its attempt ended`);
      outputs.push(output);
    },
  };

  let failure: { error: unknown } | undefined;
  try {
    const result = await processor.fn(record, ctx);
    if (result !== undefined) outputs.push({ value: result });
  } catch (error) {
    failure = { error };
  } finally {
    open = false;
  }

  if (failure === undefined) {
    const routed = routeOutputs(sub, prepared.raw, record, outputs);
    if (!Array.isArray(routed)) return deadLetter(input, attempt, routed.error);
    return { kind: 'success', outputs: routed };
  }

  const { classification, hookError } = classifyError(failure.error, record, processor.classify ?? undefined);
  if (hookError !== undefined) {
    const reason = failure.error instanceof Error ? failure.error.message : String(failure.error);
    const hookFailure = new Error(`${hookError}; the processor failed with: ${reason}`, { cause: failure.error });
    hookFailure.name = 'ClassifyHookError';
    return deadLetter(input, attempt, hookFailure);
  }
  if (classification === 'dlq' || attempt >= processor.retry.maxAttempts) return deadLetter(input, attempt, failure.error);
  return retryLater(input, attempt, failure.error);
}
