/**
 * What a processor function sees and returns. A processor is the user's code in
 * `process(name, fn, options)`: it gets one deserialized record and a context, and either
 * returns (success) or throws (failure, classified as retriable or not).
 */

/** One input record, deserialized with the source's serdes. */
export interface ProcessorRecord<K = unknown, V = unknown> {
  readonly key: K;
  readonly value: V;
  /**
   * The record's headers, decoded as UTF-8 strings, without weir's own `weir.*` headers.
   * A header given several times keeps its last value.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The topic the record was read from: the source topic, or a retry tier topic. */
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** Record timestamp, epoch ms. */
  readonly timestamp: number;
}

/** An output a processor forwards to its success branch. */
export interface ProcessorOutput<K = unknown, V = unknown> {
  /** Output key; defaults to the input record's key. */
  readonly key?: K;
  readonly value: V;
  /** Extra headers (string values). The input's headers are forwarded too, as in Kafka Streams. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The context of one processing attempt. */
export interface ProcessorContext<K = unknown> {
  readonly applicationId: string;
  /** The processor's node name. */
  readonly processor: string;
  /** 1-based attempt number of this record (retries included, across retry tiers). */
  readonly attempt: number;
  /** The policy's attempt budget; `attempt === maxAttempts` is the last try. */
  readonly maxAttempts: number;
  /** Where the record first came in (differs from `record.topic` on retry tiers). */
  readonly originalTopic: string;
  readonly originalPartition: number;
  readonly originalOffset: number;
  /**
   * Aborts when the attempt outlives the processor's `timeoutMs` (its reason is the
   * `AttemptTimeoutError`); pass it to `fetch()` and other abortable calls. Never aborts without
   * `timeoutMs`.
   */
  readonly signal: AbortSignal;
  /**
   * Forwards an output to the success branch, like Kafka Streams' `context.forward()`.
   * Outputs of an attempt that then throws are discarded: they never reach a sink.
   */
  forward(output: ProcessorOutput<K, unknown>): void;
}

/**
 * The processor function. Its return value, if not `undefined`, is forwarded as one more
 * output with the input's key; return `undefined` to forward nothing (a filter) or to rely on
 * `ctx.forward()` alone. Throwing fails the attempt; the error is classified by the
 * processor's `classify` hook or the default rules.
 */
export type ProcessorFn<K = unknown, V = unknown, O = unknown> = (
  record: ProcessorRecord<K, V>,
  ctx: ProcessorContext<K>,
) => O | undefined | Promise<O | undefined>;
