import type { PortName } from './ports.js';
import type { CircuitTransition } from '../failure/circuit-breaker.js';

/**
 * The outcome of one record as a task reports it. `'held'`: an attempt failed while the
 * processor's circuit breaker tripped, so the failure was charged to the dependency: the record
 * waits for the breaker with its attempts unchanged (not final, like `'retry'`).
 */
export type RecordEventOutcome = 'success' | 'retry' | 'held' | 'dead-letter' | 'duplicate';

/** One record's outcome, reported when it is decided (durable at the next flush). */
export interface RecordEvent {
  /** `<topic>-<partition>` of the task. */
  readonly task: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly outcome: RecordEventOutcome;
  /** The attempt that decided it (1-based; 0 when the processor never ran). */
  readonly attempt: number;
  /**
   * Sub-topologies with a processor chain: the step (processor) whose attempt this is — a
   * record is reported once per step attempt that retries it, holds it or decides it.
   */
  readonly processor?: string;
  /** Failures: the error class recorded in `weir.error.class`. */
  readonly errorClass?: string;
  /** Failures: the error message recorded in `weir.error.message`. */
  readonly errorMessage?: string;
  /** Retries: the backoff delay chosen, ms; `'held'`: the wait for the breaker, ms. */
  readonly delayMs?: number;
  /** Retries through a retry topic: the tier the copy went to (absent for a retry in place). */
  readonly retryTopic?: string;
  /** Success: how many outputs went to sinks. */
  readonly outputs?: number;
  /** Task clock time of the outcome, epoch ms. */
  readonly atMs: number;
  /** The input record's timestamp, epoch ms. */
  readonly timestampMs?: number;
  /** How long the attempt took on the task clock (processor call, routing, serialization), ms; absent when no attempt ran. */
  readonly durationMs?: number;
}

/** A port call that failed; the task retries after `retryInMs`. */
export interface PortErrorEvent {
  readonly task: string;
  readonly port: PortName;
  readonly error: unknown;
  readonly retryInMs: number;
}

/** A record outcome that is final once its unit of work is durable (a retry-tier copy is a final outcome of its input). */
export type FinalOutcome = Extract<RecordEventOutcome, 'success' | 'dead-letter' | 'duplicate' | 'retry'>;

/**
 * What a task decided during one `poll()`, counted: the cheap way to observe every record
 * (metrics), one event per poll instead of one per record. Reported at the end of each poll
 * that decided anything; the arrays are the listener's to keep.
 */
export interface RecordsEvent {
  /** `<topic>-<partition>` of the task. */
  readonly task: string;
  readonly topic: string;
  readonly partition: number;
  /** Records per outcome (a record retried in place counts once per failed attempt, like `onRecord`). */
  readonly counts: Readonly<Record<RecordEventOutcome, number>>;
  /** Durations of the attempts that ran, ms, by their outcome (an entry per attempt; absent for none). */
  readonly attemptDurationsMs: Readonly<Partial<Record<RecordEventOutcome, readonly number[]>>>;
}

/** A unit of work that became durable, and the offset committed with it (if any). */
export interface FlushEvent {
  readonly task: string;
  readonly topic: string;
  readonly partition: number;
  readonly records: number;
  readonly outputs: number;
  readonly committedOffset?: number;
  /** Dedup keys confirmed. */
  readonly confirmedKeys: number;
  /** How long the write took on the task clock — produce and acks, offset commit or the whole transaction — ms. */
  readonly durationMs?: number;
  /**
   * The input timestamps (epoch ms) of the unit's records with a final outcome, by outcome:
   * their outcomes became durable with this flush (end-to-end latency).
   */
  readonly decidedTimestampsMs?: Readonly<Partial<Record<FinalOutcome, readonly number[]>>>;
}

/**
 * How many records an `order: 'key'` task holds back: `keys` with a parked record, `records`
 * parked (heads and the followers behind them). `full`: at `maxParkedKeys`, the task takes no
 * new record (its partition pauses) until a key's records are decided.
 */
export interface ParkedEvent {
  readonly task: string;
  readonly topic: string;
  readonly partition: number;
  readonly keys: number;
  readonly records: number;
  readonly maxParkedKeys: number;
  readonly full: boolean;
}

/**
 * Observes a task: the worker turns these into logs and metrics, the TopologyTestDriver
 * into the history its invariants check. Listeners must not throw. A task builds only the
 * events some handler takes: `onRecord` costs an event per record, `onRecords` one per poll.
 */
export interface TaskListener {
  /** Every record's outcome, one event each (the TopologyTestDriver's history). */
  onRecord?(event: RecordEvent): void;
  /** Failed attempts only — `retry`, `held` and `dead-letter` outcomes — one event each (logs, dead-letter metrics). */
  onFailedRecord?(event: RecordEvent): void;
  /** Every record counted, one event per poll (metrics). */
  onRecords?(event: RecordsEvent): void;
  onFlush?(event: FlushEvent): void;
  onPortError?(event: PortErrorEvent): void;
  /** Dedup was skipped for records because the store failed under `onStoreError: 'skip-dedup'`. */
  onDedupSkipped?(event: { readonly task: string; readonly records: number; readonly error: unknown }): void;
  onClosed?(event: { readonly task: string; readonly state: 'closed' | 'fenced' }): void;
  /** A processor's circuit breaker changed state (from its `ResilienceRegistry`, not from one task). */
  onCircuitTransition?(transition: CircuitTransition): void;
  /** An `order: 'key'` task's parked records changed (see {@link ParkedEvent}). */
  onParked?(event: ParkedEvent): void;
  /** A retry waits for a token of its processor's retry budget (once per record and wait). */
  onRetryDelayed?(event: {
    readonly task: string;
    readonly processor: string;
    readonly topic: string;
    readonly partition: number;
    readonly offset: number;
    /** When a token may be there, epoch ms. */
    readonly untilMs: number;
  }): void;
  /** Something in the user's code that weir worked around, e.g. `ctx.forward()` after the attempt ended. */
  onWarning?(event: {
    readonly task: string;
    readonly topic: string;
    readonly partition: number;
    readonly offset: number;
    readonly message: string;
  }): void;
}
