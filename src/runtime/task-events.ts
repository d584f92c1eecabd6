import type { InputRecord } from '../record/record-types.js';
import { errorMessageOf } from '../failure/classify-error.js';
import type { RecordOutcome } from './record-outcome.js';
import type { PortName } from './ports.js';
import type { TaskListener } from './task-listener.js';
import type { UnitOfWork } from './unit-of-work.js';

/** A task's side of its {@link TaskListener}: builds each event from the task's own values. */
export class TaskEvents {
  constructor(
    /** `<topic>-<partition>`. */
    private readonly task: string,
    readonly listener: TaskListener | undefined,
  ) {}

  /** The fields every record event carries. */
  private base(raw: InputRecord, attempt: number, atMs: number, durationMs: number | undefined) {
    return {
      task: this.task,
      topic: raw.topic,
      partition: raw.partition,
      offset: raw.offset,
      attempt,
      atMs,
      timestampMs: raw.timestamp,
      ...(durationMs !== undefined ? { durationMs } : {}),
    };
  }

  /** A record's outcome (`'duplicate'`: skipped by dedup), decided at `atMs` by an attempt of `durationMs`. */
  outcome(raw: InputRecord, outcome: RecordOutcome | 'duplicate', attempt: number, atMs: number, durationMs?: number): void {
    const onRecord = this.listener?.onRecord;
    if (onRecord === undefined) return;
    const base = this.base(raw, attempt, atMs, durationMs);
    if (outcome === 'duplicate') onRecord({ ...base, outcome: 'duplicate' });
    else if (outcome.kind === 'success') onRecord({ ...base, outcome: 'success', outputs: outcome.outputs.length });
    else {
      const failure = { errorClass: outcome.errorClass, errorMessage: errorMessageOf(outcome.error) };
      if (outcome.kind === 'dead-letter') onRecord({ ...base, outcome: 'dead-letter', ...failure });
      else
        onRecord({
          ...base,
          outcome: 'retry',
          ...failure,
          delayMs: outcome.delayMs,
          ...(outcome.kind === 'retry-topic' ? { retryTopic: outcome.output.topic } : {}),
        });
    }
  }

  /** A failed attempt charged to the tripped circuit breaker: the record waits `waitMs` with its attempts unchanged. */
  held(raw: InputRecord, outcome: RecordOutcome, attempt: number, atMs: number, waitMs: number, durationMs?: number): void {
    const onRecord = this.listener?.onRecord;
    if (onRecord === undefined || outcome.kind === 'success') return;
    const base = this.base(raw, attempt, atMs, durationMs);
    onRecord({ ...base, outcome: 'held', errorClass: outcome.errorClass, errorMessage: errorMessageOf(outcome.error), delayMs: waitMs });
  }

  /** A retry waits for a retry-budget token until `untilMs`. */
  retryDelayed(raw: InputRecord, processor: string, untilMs: number): void {
    this.listener?.onRetryDelayed?.({
      task: this.task,
      processor,
      topic: raw.topic,
      partition: raw.partition,
      offset: raw.offset,
      untilMs,
    });
  }

  /** The processor forwarded after its attempt ended; the output was dropped. */
  lateForward(raw: InputRecord, processor: string): void {
    this.listener?.onWarning?.({
      task: this.task,
      topic: raw.topic,
      partition: raw.partition,
      offset: raw.offset,
      message: `processor '${processor}' called ctx.forward() after its attempt ended; the output was dropped (await what forwards before returning)`,
    });
  }

  flushed(
    topic: string,
    partition: number,
    unit: UnitOfWork,
    confirmedKeys: number,
    committedOffset: number | undefined,
    durationMs?: number,
  ): void {
    this.listener?.onFlush?.({
      ...(durationMs !== undefined ? { durationMs } : {}),
      task: this.task,
      topic,
      partition,
      records: unit.records,
      outputs: unit.outputs.length,
      confirmedKeys,
      ...(committedOffset !== undefined ? { committedOffset } : {}),
    });
  }

  portError(port: PortName, error: unknown, retryInMs: number): void {
    this.listener?.onPortError?.({ task: this.task, port, error, retryInMs });
  }

  closed(state: 'closed' | 'fenced'): void {
    this.listener?.onClosed?.({ task: this.task, state });
  }
}
