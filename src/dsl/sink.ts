import type { SerdeSpec } from './serdes.js';

const SINK_BRAND = Symbol.for('weir.sink');

/** Options of {@link sink}. */
export interface SinkOptions {
  /** Node name in `describe()`; default `<processor>-to-<topic>` (or `<processor>-dlq`). */
  readonly name?: string;
  /** Key serde; default the source's key serde. */
  readonly key?: SerdeSpec;
  /** Value serde; default the source's value serde. */
  readonly value?: SerdeSpec;
  /** Partitions when weir creates the topic at start; default the source topic's count. */
  readonly partitions?: number;
}

/** A sink: a topic that a processor's outputs (or dead letters) are written to. */
export interface SinkSpec extends SinkOptions {
  readonly [SINK_BRAND]: true;
  readonly topic: string;
}

/**
 * Declares a sink topic.
 *
 * @example
 * .branch({ success: sink('orders.enriched'), dlq: sink('orders.dlq') })
 */
export function sink(topic: string, options: SinkOptions = {}): SinkSpec {
  return Object.freeze({ ...options, topic, [SINK_BRAND]: true as const });
}

/** True for a value made by {@link sink} (in this or another copy of weir). */
export function isSinkSpec(value: unknown): value is SinkSpec {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SINK_BRAND] === true;
}
