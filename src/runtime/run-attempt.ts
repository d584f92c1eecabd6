import type { ProcessorContext, ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { AttemptTimeoutError, RecordTooLargeError } from '../errors.js';
import type { CallResult } from '../failure/circuit-breaker.js';
import type { Random } from '../failure/backoff.js';
import { deadLetterOutcome, decideFailure, type FailureContext } from '../failure/decide-failure.js';
import type { RetryHistory } from '../failure/retry-history.js';
import { recordOrigin } from '../record/record-origin.js';
import { recordBytes } from '../record/record-size.js';
import type { Subtopology } from '../topology/compiled-topology.js';
import type { Clock } from './ports.js';
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
  /** The task's clock: failure times are read from it when the attempt ends; it runs `timeoutMs`. */
  readonly clock: Clock;
  readonly random: Random;
  /** Largest record, bytes (`recordBytes` estimate): larger outputs dead-letter the input. */
  readonly maxRecordBytes: number;
  /** The processor called `ctx.forward()` after its attempt ended (the output is dropped). */
  readonly onLateForward?: () => void;
}

/** An attempt's outcome, and how its processor call ended (`'none'`: the processor was not called). */
export interface AttemptResult {
  readonly outcome: RecordOutcome;
  readonly call: CallResult | 'none';
}

const systemAfter = (delayMs: number, fn: () => void): (() => void) => {
  const timer = setTimeout(fn, delayMs);
  return () => clearTimeout(timer);
};

type Settled = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** Runs the processor to the end (no `timeoutMs`): the cheap path, one await. */
async function callUnbounded(call: () => unknown): Promise<Settled> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Runs the processor bounded by `timeoutMs`: at the timeout `abort` is called and the call
 * settles as an `AttemptTimeoutError`, whether or not the processor stops.
 */
function callBounded(input: AttemptInput, timeoutMs: number, call: () => unknown, abort: (reason: unknown) => void): Promise<Settled> {
  const settled = callUnbounded(call);
  return new Promise<Settled>((resolve) => {
    const onTimeout = (): void => {
      const error = new AttemptTimeoutError(input.sub.processor.name, timeoutMs);
      abort(error);
      resolve({ ok: false, error });
    };
    const { clock } = input;
    const cancel = clock.after !== undefined ? clock.after(timeoutMs, onTimeout) : systemAfter(timeoutMs, onTimeout);
    void settled.then((result) => {
      cancel();
      resolve(result);
    });
  });
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
    now: input.clock.now(),
    random: input.random,
    maxRecordBytes: input.maxRecordBytes,
  };
}

/**
 * Runs one processing attempt of one record and returns its outcome as a value: success
 * (routed, serialized outputs), or what the failure path decides (`decideFailure`): a retry
 * in place, a retry-tier copy, or a dead letter. Never throws: processor errors, serde errors,
 * failing predicates, outputs over the record size limit and attempts past the processor's
 * `timeoutMs` (`AttemptTimeoutError`) all become outcomes, and a dead-letter copy too large for
 * the broker leaves out what it must (see `fitDeadLetter`). Outputs forwarded after the attempt
 * ended — it threw, or timed out — are dropped (`onLateForward`).
 */
export async function runAttempt(input: AttemptInput): Promise<AttemptResult> {
  const { sub, prepared, history } = input;
  const processor = sub.processor;
  const attempt = history.attempts + 1;
  if (prepared.kind === 'unreadable')
    return { outcome: deadLetterOutcome(failureContext(input), history.attempts, prepared.error), call: 'none' };

  const record: ProcessorRecord = prepared.record;
  const origin = recordOrigin(prepared.raw);
  const outputs: ProcessorOutput[] = [];
  let open = true;
  const { timeoutMs } = processor;
  // ctx.signal is made on first use (most processors never read it), one per attempt.
  let controller: AbortController | undefined;
  let abortReason: unknown;
  const abort = (reason: unknown): void => {
    abortReason = reason;
    controller?.abort(reason);
  };
  const ctx: ProcessorContext = {
    applicationId: input.applicationId,
    processor: processor.name,
    attempt,
    maxAttempts: processor.retry.maxAttempts,
    originalTopic: origin.topic,
    originalPartition: origin.partition,
    originalOffset: origin.offset,
    get signal(): AbortSignal {
      if (controller === undefined) {
        controller = new AbortController();
        if (abortReason !== undefined) controller.abort(abortReason);
      }
      return controller.signal;
    },
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

  const call = (): unknown => processor.fn(record, ctx);
  const settled = timeoutMs === null ? await callUnbounded(call) : await callBounded(input, timeoutMs, call, abort);
  open = false;
  if (settled.ok && settled.value !== undefined) outputs.push({ value: settled.value });

  if (settled.ok) {
    let routed: ReturnType<typeof routeOutputs>;
    try {
      routed = routeOutputs(sub, prepared.raw, record, outputs);
    } catch (error) {
      routed = { error };
    }
    // The processor answered: for a circuit breaker that is a success, whatever its outputs.
    if (!Array.isArray(routed)) return { outcome: deadLetterOutcome(failureContext(input), attempt, routed.error), call: 'success' };
    for (const output of routed) {
      const bytes = recordBytes(output);
      if (bytes > input.maxRecordBytes) {
        const error = new RecordTooLargeError(`the output to '${output.topic}'`, bytes, input.maxRecordBytes);
        return { outcome: deadLetterOutcome(failureContext(input), attempt, error), call: 'success' };
      }
    }
    return { outcome: { kind: 'success', outputs: routed }, call: 'success' };
  }
  const outcome = decideFailure(failureContext(input), attempt, settled.error, record, processor.classify ?? undefined);
  return { outcome, call: outcome.retriable ? 'failure' : 'ignored' };
}
