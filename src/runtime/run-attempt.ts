import { buildDeadLetterRecord } from '../failure/dead-letter-record.js';
import type { FailureInfo } from '../failure/failure-headers.js';
import { recordOrigin } from '../record/record-origin.js';
import type { ProcessorContext, ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { fitDeadLetter } from '../failure/fit-dead-letter.js';
import { LoopGuardError, RecordTooLargeError } from '../errors.js';
import { recordBytes } from '../record/record-size.js';
import { computeBackoffDelay, type Random } from '../failure/backoff.js';
import { classifyError, errorClassOf, errorMessageOf } from '../failure/classify-error.js';
import { tierIndexForRetry } from '../failure/retry-policy.js';
import { buildRetryTierRecord } from '../failure/retry-tier-record.js';
import type { Subtopology } from '../topology/compiled-topology.js';
import type { PreparedRecord } from './prepared-record.js';
import type { RecordOutcome } from './record-outcome.js';
import type { RetryHistory } from '../failure/retry-history.js';
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
  /** Largest record, bytes (`recordBytes` estimate): larger outputs dead-letter the input. */
  readonly maxRecordBytes: number;
  /** The processor called `ctx.forward()` after its attempt ended (the output is dropped). */
  readonly onLateForward?: () => void;
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
  const output = buildDeadLetterRecord(input.prepared.raw, input.sub.deadLetter.topic, failureInfo(input, attempts, error), input.sub.processor.retry.maxReplays);
  return {
    kind: 'dead-letter',
    output: fitDeadLetter(output, input.maxRecordBytes),
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
    return deadLetter(input, attempt, new LoopGuardError(`record exceeded the hop limit (${policy.maxHops}) after: ${errorMessageOf(error)}`));
  }
  const tier = input.sub.retryTiers.get(tierIndexForRetry(policy, retryIndex))!;
  const delayMs = policy.explicitTiers ? tier.delayMs : computeBackoffDelay(policy.backoff, retryIndex, input.random);
  const output = buildRetryTierRecord(input.prepared.raw, tier.topic, failureInfo(input, attempt, error), input.now + delayMs, hops);
  const bytes = recordBytes(output);
  if (bytes > input.maxRecordBytes) return deadLetter(input, attempt, new RecordTooLargeError(`the retry copy for '${tier.topic}'`, bytes, input.maxRecordBytes));
  return { kind: 'retry', delayMs, errorClass: errorClassOf(error), error, output };
}

/**
 * Runs one processing attempt of one record and returns its outcome as a value: success
 * (routed, serialized outputs), retry (blocking delay, or the retry-tier copy), or
 * dead-letter (the DLQ copy). Never throws: processor errors, serde errors, failing
 * predicates and outputs over the record size limit all become outcomes, and a dead-letter
 * copy too large for the broker leaves out what it must (see `fitDeadLetter`).
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
      if (!open) {
        // Throwing here would throw into the user's timer or callback, outside any attempt.
        input.onLateForward?.();
        return;
      }
      if (typeof output !== 'object' || output === null || !('value' in output)) {
        throw new TypeError(`ctx.forward() takes { value, key?, headers? } (got ${output === null ? 'null' : typeof output === 'object' ? 'an object without value' : typeof output})`);
      }
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
    let routed: ReturnType<typeof routeOutputs>;
    try {
      routed = routeOutputs(sub, prepared.raw, record, outputs);
    } catch (error) {
      routed = { error };
    }
    if (!Array.isArray(routed)) return deadLetter(input, attempt, routed.error);
    for (const output of routed) {
      const bytes = recordBytes(output);
      if (bytes > input.maxRecordBytes) return deadLetter(input, attempt, new RecordTooLargeError(`the output to '${output.topic}'`, bytes, input.maxRecordBytes));
    }
    return { kind: 'success', outputs: routed };
  }

  const { classification, hookError } = classifyError(failure.error, record, processor.classify ?? undefined);
  if (hookError !== undefined) {
    const reason = errorMessageOf(failure.error);
    const hookFailure = new Error(`${hookError}; the processor failed with: ${reason}`, { cause: failure.error });
    hookFailure.name = 'ClassifyHookError';
    return deadLetter(input, attempt, hookFailure);
  }
  if (classification === 'dlq' || attempt >= processor.retry.maxAttempts) return deadLetter(input, attempt, failure.error);
  return retryLater(input, attempt, failure.error);
}
