import type { Counter, Histogram } from 'prom-client';
import type { CircuitTransition } from '../failure/circuit-breaker.js';
import type { FinalOutcome, RecordEventOutcome, RecordsEvent, TaskListener } from '../runtime/task-listener.js';

/**
 * One change of a worker's counters and histograms (`weir_*_total`, `weir_*_seconds`), as its
 * tasks and the worker report it: what {@link WorkerMetrics} counts. Plain data (structured-clone
 * safe), so a stream thread posts it to its process as it happens and the process counts it: the
 * process's counters then keep every count of a thread that crashes, and never go back.
 *
 * One event per poll (`records`), per flush (`flush`), per dead letter, port error, breaker
 * transition, delayed retry and rebalance — never one per successful record.
 */
export type MetricEvent =
  /** A poll's outcomes, as decided, and (recording level `debug`) the durations of its attempts, ms. */
  | {
      readonly kind: 'records';
      readonly topic: string;
      readonly counts: RecordsEvent['counts'];
      readonly attemptDurationsMs?: RecordsEvent['attemptDurationsMs'];
    }
  /**
   * A unit of work became durable (its outputs acknowledged, or its transaction committed):
   * `decidedTimestampsMs` are the input timestamps (epoch ms) of its records' final outcomes,
   * by outcome; `atMs` is when (epoch ms); `committed` whether it committed offsets, taking
   * `durationMs`.
   */
  | {
      readonly kind: 'flush';
      readonly topic: string;
      readonly committed: boolean;
      readonly durationMs?: number;
      readonly decidedTimestampsMs?: Readonly<Partial<Record<FinalOutcome, readonly number[]>>>;
      readonly atMs: number;
    }
  | { readonly kind: 'dead-letter'; readonly topic: string; readonly errorClass: string }
  | { readonly kind: 'port-error'; readonly port: string }
  | { readonly kind: 'dedup-skipped'; readonly records: number }
  | { readonly kind: 'circuit-transition'; readonly processor: string; readonly from: string; readonly to: string }
  | { readonly kind: 'retry-delayed'; readonly processor: string }
  /** The worker's consumer-group member went through a rebalance. */
  | { readonly kind: 'rebalance' };

/**
 * Outcomes counted when they become durable (`flush` events) rather than when decided: each
 * `success` is then a record whose outputs are in its sinks, each `dead-letter` one in the DLQ,
 * each `duplicate` one whose skip was committed. `retry` (every failed attempt, in place or
 * into a retry tier) and `held` are counted as the attempts fail (`records` events).
 */
export const COUNTED_WHEN_DURABLE: ReadonlySet<RecordEventOutcome> = new Set<RecordEventOutcome>(['success', 'dead-letter', 'duplicate']);

/**
 * A task listener that turns what tasks report into {@link MetricEvent}s, passed to `emit`.
 * `attemptDurations`: the `records` events carry the attempts' durations (recording level
 * `debug`); without it they carry the counts only, and a stream thread posts no durations.
 */
export function metricEventListener(emit: (event: MetricEvent) => void, attemptDurations: boolean): TaskListener {
  return {
    onRecords: attemptDurations
      ? (e) => emit({ kind: 'records', topic: e.topic, counts: e.counts, attemptDurationsMs: e.attemptDurationsMs })
      : (e) => emit({ kind: 'records', topic: e.topic, counts: e.counts }),
    onFailedRecord: (e) => {
      if (e.outcome === 'dead-letter') emit({ kind: 'dead-letter', topic: e.topic, errorClass: e.errorClass ?? 'unknown' });
    },
    onFlush: (e) =>
      emit({
        kind: 'flush',
        topic: e.topic,
        committed: e.committedOffset !== undefined,
        ...(e.durationMs !== undefined ? { durationMs: e.durationMs } : {}),
        ...(e.decidedTimestampsMs !== undefined ? { decidedTimestampsMs: e.decidedTimestampsMs } : {}),
        atMs: Date.now(),
      }),
    onPortError: (e) => emit({ kind: 'port-error', port: e.port }),
    onDedupSkipped: (e) => emit({ kind: 'dedup-skipped', records: e.records }),
    onCircuitTransition: (t: CircuitTransition) => emit({ kind: 'circuit-transition', processor: t.processor, from: t.from, to: t.to }),
    onRetryDelayed: (e) => emit({ kind: 'retry-delayed', processor: e.processor }),
  };
}

/** The counters and histograms a {@link MetricEvent} changes (a `WorkerMetrics`). */
export interface CountedMetrics {
  readonly records: Counter<'topic' | 'outcome'>;
  readonly deadLetters: Counter<'topic' | 'error_class'>;
  readonly commits: Counter<'topic'>;
  readonly portErrors: Counter<'port'>;
  readonly dedupSkipped: Counter;
  readonly rebalances: Counter<'thread'>;
  readonly circuitTransitions: Counter<'processor' | 'from' | 'to'>;
  readonly retriesDelayed: Counter<'processor'>;
  /** Absent under recording level `info`. */
  readonly processDuration: Histogram<'topic' | 'outcome'> | undefined;
  readonly endToEndLatency: Histogram<'topic' | 'outcome'>;
  readonly commitDuration: Histogram<'topic'>;
}

/**
 * Counts `event` into `metrics`; `thread` labels a rebalance with its stream thread. See
 * {@link COUNTED_WHEN_DURABLE} for when record outcomes are counted.
 */
export function countMetricEvent(metrics: CountedMetrics, event: MetricEvent, thread: string | undefined): void {
  switch (event.kind) {
    case 'records':
      for (const outcome of Object.keys(event.counts) as RecordEventOutcome[]) {
        const n = event.counts[outcome];
        if (n > 0 && !COUNTED_WHEN_DURABLE.has(outcome)) metrics.records.inc({ topic: event.topic, outcome }, n);
        const durations = event.attemptDurationsMs?.[outcome];
        const histogram = metrics.processDuration;
        if (durations === undefined || histogram === undefined) continue;
        const labels = { topic: event.topic, outcome };
        for (const ms of durations) histogram.observe(labels, ms / 1_000);
      }
      return;
    case 'flush': {
      if (event.committed) {
        metrics.commits.inc({ topic: event.topic });
        if (event.durationMs !== undefined) metrics.commitDuration.observe({ topic: event.topic }, event.durationMs / 1_000);
      }
      const decided = event.decidedTimestampsMs ?? {};
      for (const outcome of Object.keys(decided) as FinalOutcome[]) {
        const timestamps = decided[outcome] ?? [];
        const labels = { topic: event.topic, outcome };
        if (COUNTED_WHEN_DURABLE.has(outcome) && timestamps.length > 0) metrics.records.inc(labels, timestamps.length);
        for (const timestampMs of timestamps) metrics.endToEndLatency.observe(labels, Math.max(0, event.atMs - timestampMs) / 1_000);
      }
      return;
    }
    case 'dead-letter':
      metrics.deadLetters.inc({ topic: event.topic, error_class: event.errorClass });
      return;
    case 'port-error':
      metrics.portErrors.inc({ port: event.port });
      return;
    case 'dedup-skipped':
      metrics.dedupSkipped.inc(event.records);
      return;
    case 'circuit-transition':
      metrics.circuitTransitions.inc({ processor: event.processor, from: event.from, to: event.to });
      return;
    case 'retry-delayed':
      metrics.retriesDelayed.inc({ processor: event.processor });
      return;
    case 'rebalance':
      metrics.rebalances.inc(thread === undefined ? {} : { thread });
      return;
  }
}
