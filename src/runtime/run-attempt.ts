import { AttemptTimeoutError, RecordTooLargeError } from '../errors.js';
import type { CallResult } from '../failure/circuit-breaker.js';
import type { Random } from '../failure/backoff.js';
import { deadLetterOutcome, decideFailure, type FailureContext } from '../failure/decide-failure.js';
import type { RetryHistory } from '../failure/retry-history.js';
import { recordBytes } from '../record/record-size.js';
import { AttemptContext, type LateForwardListener } from './attempt-context.js';
import type { Clock } from './ports.js';
import type { PreparedRecord } from './prepared-record.js';
import type { RecordOutcome } from './record-outcome.js';
import { handOff } from './hand-off.js';
import { routeOutputs } from './route-outputs.js';
import { runAfter } from './run-after.js';
import type { SubtopologyView } from './subtopology-view.js';

/** What stays the same for every attempt of a task. Times are epoch ms. */
export interface AttemptSetting {
  readonly applicationId: string;
  readonly view: SubtopologyView;
  /** The task's clock: failure times are read from it when the attempt ends; it runs `timeoutMs`. */
  readonly clock: Clock;
  readonly random: Random;
  /** Largest record, bytes (`recordBytes` estimate): larger outputs dead-letter the input. */
  readonly maxRecordBytes: number;
}

/** An attempt's outcome, and how its processor call ended (`'none'`: the processor was not called). */
export interface AttemptResult {
  readonly outcome: RecordOutcome;
  readonly call: CallResult | 'none';
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function failureContext(setting: AttemptSetting, prepared: PreparedRecord, history: RetryHistory): FailureContext {
  const { step } = setting.view;
  return {
    applicationId: setting.applicationId,
    processor: step.processor.name,
    policy: step.processor.retry,
    deadLetterTopic: step.deadLetter.topic,
    tiers: step.retryTiers.toArray(),
    record: prepared.raw,
    ...(step.index > 0 ? { step: step.processor.name } : {}),
    history,
    now: setting.clock.now(),
    random: setting.random,
    maxRecordBytes: setting.maxRecordBytes,
  };
}

/**
 * Runs one processing attempt of one record and returns its outcome as a value: success
 * (routed, serialized outputs), or what the failure path decides (`decideFailure`): a retry
 * in place, a retry-tier copy, or a dead letter. Never throws and never rejects: processor
 * errors, serde errors, failing predicates, outputs over the record size limit and attempts past
 * the processor's `timeoutMs` (`AttemptTimeoutError`) all become outcomes, and a dead-letter
 * copy too large for the broker leaves out what it must (see `fitDeadLetter`). Outputs
 * forwarded after the attempt ended — it threw, or timed out — are dropped and reported to `late`.
 *
 * @returns the result at once when the processor returned a plain value or threw (no promise,
 *   no microtask: the common case of a synchronous processor), else a promise of it
 */
export function runAttempt(
  setting: AttemptSetting,
  prepared: PreparedRecord,
  history: RetryHistory,
  late?: LateForwardListener,
): AttemptResult | Promise<AttemptResult> {
  if (prepared.kind === 'unreadable')
    return { outcome: deadLetterOutcome(failureContext(setting, prepared, history), history.attempts, prepared.error), call: 'none' };
  const { view } = setting;
  const attempt = history.attempts + 1;
  const ctx = new AttemptContext(setting.applicationId, view.processorName, attempt, view.maxAttempts, prepared.raw, late);
  let value: unknown;
  try {
    value = view.fn(prepared.record, ctx);
  } catch (error) {
    ctx.close();
    return failed(setting, prepared, history, error);
  }
  if (!isPromiseLike(value)) {
    ctx.close();
    return succeeded(setting, prepared, history, ctx, value);
  }
  const settle = (result: { readonly ok: boolean; readonly value?: unknown; readonly error?: unknown }): AttemptResult => {
    ctx.close();
    return result.ok ? succeeded(setting, prepared, history, ctx, result.value) : failed(setting, prepared, history, result.error);
  };
  const settled = Promise.resolve(value).then(
    (v) => ({ ok: true, value: v }),
    (error: unknown) => ({ ok: false, error }),
  );
  const { timeoutMs } = view;
  if (timeoutMs === null) return settled.then(settle);
  // Bounded by timeoutMs: at the timeout the signal aborts and the attempt settles as an
  // AttemptTimeoutError, whether or not the processor stops.
  return new Promise<AttemptResult>((resolve) => {
    const onTimeout = (): void => {
      const error = new AttemptTimeoutError(view.processorName, timeoutMs);
      ctx.abort(error);
      resolve(settle({ ok: false, error }));
    };
    const { clock } = setting;
    const cancel = runAfter(clock, timeoutMs, onTimeout);
    void settled.then((result) => {
      cancel();
      resolve(settle(result));
    });
  });
}

function succeeded(
  setting: AttemptSetting,
  prepared: PreparedRecord & { kind: 'ready' },
  history: RetryHistory,
  ctx: AttemptContext,
  returned: unknown,
): AttemptResult {
  const attempt = history.attempts + 1;
  const { next } = setting.view;
  if (next !== null) {
    const handed = handOff(setting.view.processorName, next, prepared.raw, prepared.record, ctx.forwarded, returned);
    if (handed !== null && !('kind' in handed))
      return { outcome: deadLetterOutcome(failureContext(setting, prepared, history), attempt, handed.error), call: 'success' };
    return {
      outcome: handed === null ? { kind: 'success', outputs: [] } : { kind: 'success', outputs: [], next: handed },
      call: 'success',
    };
  }
  let routed: ReturnType<typeof routeOutputs>;
  try {
    routed = routeOutputs(setting.view, prepared.raw, prepared.record, ctx.forwarded, returned);
  } catch (error) {
    routed = { error };
  }
  // The processor answered: for a circuit breaker that is a success, whatever its outputs.
  if (!Array.isArray(routed))
    return { outcome: deadLetterOutcome(failureContext(setting, prepared, history), attempt, routed.error), call: 'success' };
  for (const output of routed) {
    const bytes = recordBytes(output);
    if (bytes > setting.maxRecordBytes) {
      const error = new RecordTooLargeError(`the output to '${output.topic}'`, bytes, setting.maxRecordBytes);
      return { outcome: deadLetterOutcome(failureContext(setting, prepared, history), attempt, error), call: 'success' };
    }
  }
  return { outcome: { kind: 'success', outputs: routed }, call: 'success' };
}

function failed(
  setting: AttemptSetting,
  prepared: PreparedRecord & { kind: 'ready' },
  history: RetryHistory,
  error: unknown,
): AttemptResult {
  const attempt = history.attempts + 1;
  const outcome = decideFailure(
    failureContext(setting, prepared, history),
    attempt,
    error,
    prepared.record,
    setting.view.classify ?? undefined,
  );
  return { outcome, call: outcome.retriable ? 'failure' : 'ignored' };
}
