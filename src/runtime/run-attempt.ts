import type { ProcessorContext, ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { RecordTooLargeError } from '../errors.js';
import type { Random } from '../failure/backoff.js';
import { deadLetterOutcome, decideFailure, type FailureContext } from '../failure/decide-failure.js';
import type { RetryHistory } from '../failure/retry-history.js';
import { recordOrigin } from '../record/record-origin.js';
import { recordBytes } from '../record/record-size.js';
import type { Subtopology } from '../topology/compiled-topology.js';
import type { PreparedRecord } from './prepared-record.js';
import type { RecordOutcome } from './record-outcome.js';
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

function failureContext(input: AttemptInput): FailureContext {
  const { sub } = input;
  return {
    applicationId: input.applicationId,
    processor: sub.processor.name,
    policy: sub.processor.retry,
    deadLetterTopic: sub.deadLetter.topic,
    tiers: sub.retryTiers.toArray(),
    record: input.prepared.raw,
    history: input.history,
    now: input.now,
    random: input.random,
    maxRecordBytes: input.maxRecordBytes,
  };
}

/**
 * Runs one processing attempt of one record and returns its outcome as a value: success
 * (routed, serialized outputs), or what the failure path decides (`decideFailure`): a retry
 * in place, a retry-tier copy, or a dead letter. Never throws: processor errors, serde errors,
 * failing predicates and outputs over the record size limit all become outcomes, and a
 * dead-letter copy too large for the broker leaves out what it must (see `fitDeadLetter`).
 */
export async function runAttempt(input: AttemptInput): Promise<RecordOutcome> {
  const { sub, prepared, history } = input;
  const processor = sub.processor;
  const attempt = history.attempts + 1;
  if (prepared.kind === 'unreadable') return deadLetterOutcome(failureContext(input), history.attempts, prepared.error);

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
        throw new TypeError(
          `ctx.forward() takes { value, key?, headers? } (got ${output === null ? 'null' : typeof output === 'object' ? 'an object without value' : typeof output})`,
        );
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
    if (!Array.isArray(routed)) return deadLetterOutcome(failureContext(input), attempt, routed.error);
    for (const output of routed) {
      const bytes = recordBytes(output);
      if (bytes > input.maxRecordBytes)
        return deadLetterOutcome(
          failureContext(input),
          attempt,
          new RecordTooLargeError(`the output to '${output.topic}'`, bytes, input.maxRecordBytes),
        );
    }
    return { kind: 'success', outputs: routed };
  }
  return decideFailure(failureContext(input), attempt, failure.error, record, processor.classify ?? undefined);
}
