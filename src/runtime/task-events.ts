import type { InputRecord } from '../record/record-types.js';
import { errorMessageOf } from '../failure/classify-error.js';
import type { RecordOutcome } from './record-outcome.js';
import type { PortName } from './ports.js';
import type { FinalOutcome, RecordEvent, RecordEventOutcome, TaskListener } from './task-listener.js';
import type { UnitOfWork } from './unit-of-work.js';

/** The event name of an outcome. */
function eventOutcome(outcome: RecordOutcome | 'duplicate'): RecordEventOutcome {
  if (outcome === 'duplicate') return 'duplicate';
  switch (outcome.kind) {
    case 'success':
      return 'success';
    case 'dead-letter':
      return 'dead-letter';
    case 'retry-in-place':
    case 'retry-topic':
    case 'retry-parked':
      return 'retry';
  }
}

/** Input timestamps (epoch ms) of the final outcomes decided in a unit of work, by outcome. */
export type DecidedTimestamps = Partial<Record<FinalOutcome, number[]>>;

/**
 * A task's side of its {@link TaskListener}: builds each event from the task's own values,
 * and only the events some handler takes. Outcomes are counted as they are decided and
 * reported once per poll (`report()`), and the input timestamps of final outcomes are kept
 * until the flush that makes them durable (`flushed()`) or the rewind that discards them.
 */
export class TaskEvents {
  private readonly each: ((event: RecordEvent) => void) | undefined;
  private readonly failed: ((event: RecordEvent) => void) | undefined;
  private readonly counting: boolean;
  private counts: Record<RecordEventOutcome, number> = { success: 0, retry: 0, held: 0, 'dead-letter': 0, duplicate: 0 };
  private durations: Partial<Record<RecordEventOutcome, number[]>> = {};
  private decided: DecidedTimestamps = {};
  private pending = 0;

  constructor(
    /** `<topic>-<partition>`. */
    private readonly task: string,
    readonly listener: TaskListener | undefined,
  ) {
    this.each = listener?.onRecord?.bind(listener);
    this.failed = listener?.onFailedRecord?.bind(listener);
    this.counting = listener?.onRecords !== undefined || listener?.onFlush !== undefined;
  }

  /** Counts an outcome and keeps what `onRecords` and `onFlush` report. */
  private count(raw: InputRecord, outcome: RecordEventOutcome, final: boolean, durationMs: number | undefined): void {
    if (!this.counting) return;
    this.counts[outcome]++;
    this.pending++;
    if (durationMs !== undefined) (this.durations[outcome] ??= []).push(durationMs);
    if (final) (this.decided[outcome as FinalOutcome] ??= []).push(raw.timestamp);
  }

  /** The fields every record event carries. */
  private event(
    raw: InputRecord,
    outcome: RecordEventOutcome,
    attempt: number,
    atMs: number,
    durationMs: number | undefined,
    processor?: string,
  ): RecordEvent {
    return {
      task: this.task,
      topic: raw.topic,
      partition: raw.partition,
      offset: raw.offset,
      outcome,
      attempt,
      atMs,
      timestampMs: raw.timestamp,
      ...(durationMs !== undefined ? { durationMs } : {}),
      ...(processor !== undefined ? { processor } : {}),
    };
  }

  /**
   * A record's outcome (`'duplicate'`: skipped by dedup), decided at `atMs` by an attempt of
   * `durationMs` of `processor` (given for the steps of a chain).
   */
  outcome(
    raw: InputRecord,
    outcome: RecordOutcome | 'duplicate',
    attempt: number,
    atMs: number,
    durationMs?: number,
    processor?: string,
  ): void {
    const name = eventOutcome(outcome);
    const retryTopic = outcome !== 'duplicate' && outcome.kind === 'retry-topic' ? outcome.output.topic : undefined;
    // A retry is final for its input where the record leaves the partition's way: to a tier
    // topic, or parked at the task (order 'key'); a retry in place keeps it at the head.
    const final = name !== 'retry' || (outcome !== 'duplicate' && outcome.kind !== 'retry-in-place');
    this.count(raw, name, final, durationMs);
    const failed = name !== 'success' && name !== 'duplicate';
    if (this.each === undefined && (!failed || this.failed === undefined)) return;
    const base = this.event(raw, name, attempt, atMs, durationMs, processor);
    let event: RecordEvent;
    if (outcome === 'duplicate') event = base;
    else if (outcome.kind === 'success') event = { ...base, outputs: outcome.outputs.length };
    else {
      const failure = { errorClass: outcome.errorClass, errorMessage: errorMessageOf(outcome.error) };
      if (outcome.kind === 'dead-letter') event = { ...base, ...failure };
      else event = { ...base, ...failure, delayMs: outcome.delayMs, ...(retryTopic !== undefined ? { retryTopic } : {}) };
    }
    this.each?.(event);
    if (failed) this.failed?.(event);
  }

  /** A failed attempt charged to the tripped circuit breaker: the record waits `waitMs` with its attempts unchanged. */
  held(
    raw: InputRecord,
    outcome: RecordOutcome,
    attempt: number,
    atMs: number,
    waitMs: number,
    durationMs?: number,
    processor?: string,
  ): void {
    if (outcome.kind === 'success') return;
    this.count(raw, 'held', false, durationMs);
    if (this.each === undefined && this.failed === undefined) return;
    const event: RecordEvent = {
      ...this.event(raw, 'held', attempt, atMs, durationMs, processor),
      errorClass: outcome.errorClass,
      errorMessage: errorMessageOf(outcome.error),
      delayMs: waitMs,
    };
    this.each?.(event);
    this.failed?.(event);
  }

  /** Reports the outcomes counted since the last report (once per poll; nothing when none). */
  report(topic: string, partition: number): void {
    if (this.pending === 0) return;
    const counts = this.counts;
    const attemptDurationsMs = this.durations;
    this.counts = { success: 0, retry: 0, held: 0, 'dead-letter': 0, duplicate: 0 };
    this.durations = {};
    this.pending = 0;
    this.listener?.onRecords?.({ task: this.task, topic, partition, counts, attemptDurationsMs });
  }

  /** The unit's records will run again (an aborted transaction): their outcomes were not final. */
  rewound(): void {
    this.decided = {};
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

  /**
   * Takes the input timestamps of the final outcomes decided so far, for a unit whose write
   * starts now while the task processes on: they are reported by that unit's `flushed()`, or
   * given back with `restoreDecided()` when its records stay in the unit of work.
   */
  takeDecided(): DecidedTimestamps {
    const taken = this.decided;
    this.decided = {};
    return taken;
  }

  /** Gives back timestamps taken by `takeDecided()` (the ones decided since are dropped: their records run again). */
  restoreDecided(taken: DecidedTimestamps): void {
    this.decided = taken;
  }

  /**
   * A unit became durable. `decided`: its final outcomes' input timestamps, when they were
   * taken at the start of its write; by default every one decided so far.
   */
  flushed(
    topic: string,
    partition: number,
    unit: UnitOfWork,
    confirmedKeys: number,
    committedOffset: number | undefined,
    durationMs?: number,
    decided?: DecidedTimestamps,
  ): void {
    const decidedTimestampsMs = decided ?? this.takeDecided();
    this.listener?.onFlush?.({
      ...(durationMs !== undefined ? { durationMs } : {}),
      task: this.task,
      topic,
      partition,
      records: unit.records,
      outputs: unit.outputs.length,
      confirmedKeys,
      ...(committedOffset !== undefined ? { committedOffset } : {}),
      decidedTimestampsMs,
    });
  }

  /** An `order: 'key'` task's parked keys and records changed (`full`: at `maxParkedKeys`). */
  parked(topic: string, partition: number, keys: number, records: number, maxParkedKeys: number): void {
    this.listener?.onParked?.({ task: this.task, topic, partition, keys, records, maxParkedKeys, full: keys >= maxParkedKeys });
  }

  portError(port: PortName, error: unknown, retryInMs: number): void {
    this.listener?.onPortError?.({ task: this.task, port, error, retryInMs });
  }

  closed(state: 'closed' | 'fenced'): void {
    this.decided = {};
    this.listener?.onClosed?.({ task: this.task, state });
  }
}
