import type { OutputRecord, RecordHeaders } from '../record/record-types.js';
import type { RecordOutcome } from './record-outcome.js';

/** What a trace span of one attempt is about. */
export interface AttemptSpanInfo {
  readonly applicationId: string;
  readonly processor: string;
  /** The topic the task reads: a source or a retry tier. */
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** 1-based attempt number (the attempts the record had, plus one). */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly key: Buffer | null;
  /** The input record's headers, where the trace context (W3C `traceparent`) is read from. */
  readonly headers: RecordHeaders;
}

/** How an attempt ended, for its span. */
export interface AttemptSpanEnd {
  /** `success`, `retry-in-place`, `retry-topic`, `dead-letter`, or `held` (charged to an open circuit breaker). */
  readonly outcome: RecordOutcome['kind'] | 'held';
  readonly errorClass?: string;
  readonly error?: unknown;
}

/** One attempt's span. */
export interface AttemptSpan {
  /** Runs the attempt in the span's context, so that spans the processor starts are its children. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Headers that carry the span's context on (e.g. `traceparent`, `tracestate`); empty when tracing is off. */
  headers(): Readonly<Record<string, string>>;
  end(result: AttemptSpanEnd): void;
}

/**
 * The tracing port of a task: a span per processing attempt. The worker binds it to
 * OpenTelemetry (`OtelAttemptTracer`); without one, nothing is traced.
 */
export interface AttemptTracer {
  /**
   * Whether a span would record or carry anything now. When false the task skips `start`, so
   * an untraced attempt costs nothing.
   */
  isActive(): boolean;
  start(info: AttemptSpanInfo): AttemptSpan;
}

/**
 * The outcome with `headers` set on each of its outputs (sink, retry-tier and dead-letter
 * records), replacing headers of the same name — the trace context of the attempt that wrote them.
 */
export function withTraceHeaders(outcome: RecordOutcome, headers: Readonly<Record<string, string>>): RecordOutcome {
  if (Object.keys(headers).length === 0) return outcome;
  const tag = (o: OutputRecord): OutputRecord => ({ ...o, headers: { ...o.headers, ...headers } });
  switch (outcome.kind) {
    case 'success':
      return { ...outcome, outputs: outcome.outputs.map(tag) };
    case 'retry-topic':
    case 'dead-letter':
      return { ...outcome, output: tag(outcome.output) };
    case 'retry-in-place':
    case 'retry-parked':
      return outcome;
  }
}
