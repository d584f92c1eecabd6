/**
 * weir's one error hierarchy. Every error weir throws is a {@link WeirError} with a stable
 * `code`; user code can match on `code` instead of on messages. The exceptions are on purpose:
 * the errors of a Kafka client or ioredis pass through as they are (named in each method's
 * `@throws`), and `weir/testing`'s `PlannedFailure` and `InjectedBrokerError` stand in for a
 * processor's own errors and for broker errors, so they are plain `Error`s. Argument checks — a
 * value of the wrong type or out of range passed to a weir function or constructor (a serde's
 * input, `ctx.forward()`, `ManualClock.advance()`, a replay rate, ...) — throw the built-in
 * `TypeError` or `RangeError`, as JavaScript's own APIs do.
 *
 * Record outcomes (success, retry, dead-letter) are values, not exceptions: the errors below
 * are for topology, config and control failures, plus the few error classes that weir records
 * in `weir.error.class` on dead-letter records.
 */

/** Stable error codes. */
export type WeirErrorCode =
  | 'WEIR_TOPOLOGY_INVALID'
  | 'WEIR_TOPOLOGY_LOAD'
  | 'WEIR_CONFIG_INVALID'
  | 'WEIR_NON_RETRIABLE'
  | 'WEIR_DESERIALIZATION'
  | 'WEIR_SERIALIZATION'
  | 'WEIR_NO_MATCHING_BRANCH'
  | 'WEIR_PRODUCER_FENCED'
  | 'WEIR_REPLAY_FENCED'
  | 'WEIR_DEDUP_STORE'
  | 'WEIR_CLASSIFY_HOOK'
  | 'WEIR_ILLEGAL_STATE'
  | 'WEIR_TOPIC_STALLED'
  | 'WEIR_BROKER_UNREACHABLE'
  | 'WEIR_INVARIANT_VIOLATION'
  | 'WEIR_TEST_DRIVER'
  | 'WEIR_LOOP_GUARD'
  | 'WEIR_MISSING_SOURCE_TOPIC'
  | 'WEIR_RECORD_TOO_LARGE'
  | 'WEIR_ATTEMPT_TIMEOUT'
  | 'WEIR_METRICS_PORT'
  | 'WEIR_TRANSACTION_ABORTED'
  | 'WEIR_MEMBER_FENCED'
  | 'WEIR_GROUP_INSTANCE_CONFLICT';

/** Base class of every error weir throws. */
export class WeirError extends Error {
  /** Stable machine-readable code. */
  readonly code: WeirErrorCode;

  constructor(code: WeirErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * A topology file that does not compile. `node` names the offending node (source topic,
 * processor or sink name) when there is one.
 */
export class TopologyError extends WeirError {
  readonly node: string | undefined;
  readonly problem: string;
  /** The topology file, when known. */
  readonly file: string | undefined;

  constructor(node: string | undefined, problem: string, file?: string) {
    const what = node === undefined ? problem : `node '${node}': ${problem}`;
    super('WEIR_TOPOLOGY_INVALID', file === undefined ? what : `${file}: ${what}`);
    this.node = node;
    this.problem = problem;
    this.file = file;
  }
}

/** A topology file that cannot be loaded (missing, syntax error, no default export, ...). */
export class TopologyLoadError extends WeirError {
  readonly file: string;

  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super('WEIR_TOPOLOGY_LOAD', `${file}: ${reason}`, options);
    this.file = file;
  }
}

/** A bad configuration value. `key` is the flag or environment variable at fault. */
export class ConfigError extends WeirError {
  readonly key: string;

  constructor(key: string, problem: string) {
    super('WEIR_CONFIG_INVALID', `invalid config '${key}': ${problem}`);
    this.key = key;
  }
}

/**
 * Throw this (or any error with `retriable: false`) from a processor to send the record to
 * the dead-letter queue at once, without retries. Mirrors Spring Kafka's
 * "not retryable exceptions" and Kafka Connect's non-retriable errors.
 *
 * @example
 * if (!order.id) throw new NonRetriableError('order has no id');
 */
export class NonRetriableError extends WeirError {
  readonly retriable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super('WEIR_NON_RETRIABLE', message, options);
  }
}

/** A record's key or value could not be deserialized with the source's serde. Non-retriable. */
export class DeserializationError extends WeirError {
  readonly retriable = false;
  /** Which part of the record failed. */
  readonly part: 'key' | 'value';

  constructor(part: 'key' | 'value', serde: string, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('WEIR_DESERIALIZATION', `cannot deserialize record ${part} with serde '${serde}'${reason}`, options);
    this.part = part;
  }
}

/** An output could not be serialized with its sink's serde. Non-retriable. */
export class SerializationError extends WeirError {
  readonly retriable = false;

  constructor(sink: string, serde: string, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('WEIR_SERIALIZATION', `cannot serialize output for sink '${sink}' with serde '${serde}'${reason}`, options);
  }
}

/** An output matched none of the success branches' predicates. Non-retriable. */
export class NoMatchingBranchError extends WeirError {
  readonly retriable = false;

  constructor(processor: string) {
    super('WEIR_NO_MATCHING_BRANCH', `output of processor '${processor}' matched no success branch`);
  }
}

/**
 * A record exceeded a loop guard (hop limit or replay limit) and was sent to the DLQ instead
 * of going around again. Non-retriable.
 */
export class LoopGuardError extends WeirError {
  readonly retriable = false;

  constructor(message: string) {
    super('WEIR_LOOP_GUARD', message);
  }
}

/**
 * The task's transactional producer was fenced by a newer instance with the same
 * transactional id (a zombie task). The worker drops the task; it does not crash.
 */
export class ProducerFencedError extends WeirError {
  constructor(transactionalId: string, options?: { cause?: unknown }) {
    super('WEIR_PRODUCER_FENCED', `producer '${transactionalId}' was fenced by a newer instance`, options);
  }
}

/**
 * A static member (`group.instance.id`, KIP-345) was fenced: another consumer joined the group
 * with the same `group.instance.id`, and the group coordinator gave it this member's place
 * (`FENCED_INSTANCE_ID`). The Kafka client binding reports it; the worker decides (see
 * {@link GroupInstanceConflictError}).
 */
export class MemberFencedError extends WeirError {
  readonly groupInstanceId: string;

  constructor(groupInstanceId: string, options?: { cause?: unknown }) {
    super('WEIR_MEMBER_FENCED', `group member '${groupInstanceId}' was fenced by another member with the same group.instance.id`, options);
    this.groupInstanceId = groupInstanceId;
  }
}

/**
 * Another worker runs with this worker's `group.instance.id`: this worker, which took the id
 * last, stops (exit 2), and the one that had it keeps its partitions. Give every worker (and
 * every stream thread) its own id, e.g. the pod name.
 */
export class GroupInstanceConflictError extends WeirError {
  readonly groupInstanceId: string;

  constructor(groupInstanceId: string, options?: { cause?: unknown }) {
    super(
      'WEIR_GROUP_INSTANCE_CONFLICT',
      `another worker of the group runs with group.instance.id '${groupInstanceId}' (--group-instance-id): this one stops, the other keeps its partitions; give each worker its own id`,
      options,
    );
    this.groupInstanceId = groupInstanceId;
  }
}

/**
 * A task's part of a shared transaction (exactly_once_v2: one transaction for every task of a
 * member) was aborted because another part of it failed: the task re-runs its unit of work,
 * as after any aborted transaction.
 */
export class TransactionAbortedError extends WeirError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super('WEIR_TRANSACTION_ABORTED', `the shared transaction was aborted (${reason})`, options);
  }
}

/**
 * A `weir dlq replay` run was fenced: a newer run of the same replay group initialized the
 * same transactional id (`InitProducerId` bumps its epoch, KIP-98). The fenced run's open
 * chunk is aborted by the broker; what it committed stays replayed, and the newer run goes on
 * from there. The CLI exits 1.
 */
export class ReplayFencedError extends WeirError {
  readonly transactionalId: string;

  constructor(dlqTopic: string, transactionalId: string, options?: { cause?: unknown }) {
    super(
      'WEIR_REPLAY_FENCED',
      `this replay of '${dlqTopic}' was fenced: a newer replay with transactional id '${transactionalId}' started, so this one stopped; its open chunk was aborted, the newer run goes on from the last committed chunk`,
      options,
    );
    this.transactionalId = transactionalId;
  }
}

/** The dedup store (Redis) failed. What happens next follows `onStoreError`. */
export class DedupStoreError extends WeirError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('WEIR_DEDUP_STORE', message, options);
  }
}

/**
 * A processor's `classify` hook threw, or answered something other than `'retry'` or `'dlq'`.
 * A hook that cannot be trusted cannot keep the record safe from loops, so the record is
 * dead-lettered with this error; `cause` is the processor's own failure. Non-retriable.
 */
export class ClassifyHookError extends WeirError {
  readonly retriable = false;

  /**
   * @param problem what the hook did wrong, e.g. `classify threw: boom`
   * @param reason the processor's error message
   * @param processorError the processor's error (the `cause`)
   */
  constructor(problem: string, reason: string, processorError: unknown) {
    super('WEIR_CLASSIFY_HOOK', `${problem}; the processor failed with: ${reason}`, { cause: processorError });
  }
}

/**
 * A source topic does not exist at start (Kafka Streams' `MissingSourceTopicException`):
 * weir creates sink, DLQ and retry-tier topics, but never the topics it reads.
 */
export class MissingSourceTopicError extends WeirError {
  readonly topics: readonly string[];

  constructor(topics: readonly string[]) {
    super(
      'WEIR_MISSING_SOURCE_TOPIC',
      `source topic${topics.length > 1 ? 's' : ''} ${topics.map((t) => `'${t}'`).join(', ')} do${topics.length > 1 ? '' : 'es'} not exist; create ${topics.length > 1 ? 'them' : 'it'} first`,
    );
    this.topics = topics;
  }
}

/**
 * An output (or a retry-tier copy) is larger than the record size limit (`--max-record-bytes`,
 * which must not exceed the broker's `message.max.bytes`). The broker would reject it on every
 * retry, so the input record is dead-lettered at once. Non-retriable.
 */
export class RecordTooLargeError extends WeirError {
  readonly retriable = false;

  constructor(what: string, bytes: number, limitBytes: number) {
    super('WEIR_RECORD_TOO_LARGE', `${what} is ${bytes} bytes, over the record size limit of ${limitBytes} bytes (--max-record-bytes)`);
  }
}

/**
 * A processing attempt outlived its processor's `timeoutMs`: `ctx.signal` was aborted with this
 * error, and the attempt failed with it even if the processor ignored the signal (its late
 * outputs are dropped). Retriable, like any failure of a slow dependency.
 */
export class AttemptTimeoutError extends WeirError {
  readonly retriable = true;
  readonly timeoutMs: number;

  constructor(processor: string, timeoutMs: number) {
    super('WEIR_ATTEMPT_TIMEOUT', `processor '${processor}' did not finish its attempt within timeoutMs (${timeoutMs} ms)`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A lifecycle method called in a state that does not allow it (a task, worker or breaker
 * transition outside its table), or another broken invariant: a bug in weir or in its caller,
 * never a problem with the data.
 */
export class IllegalStateError extends WeirError {
  constructor(message: string) {
    super('WEIR_ILLEGAL_STATE', message);
  }
}

/** Reading a topic (`weir dlq inspect`, `weir dlq replay`) made no progress for its idle timeout. */
export class TopicRangeStalledError extends WeirError {
  constructor(message: string) {
    super('WEIR_TOPIC_STALLED', message);
  }
}

/** No Kafka broker answered: the message names the brokers tried and how to set them. */
export class BrokerUnreachableError extends WeirError {
  readonly brokers: readonly string[];

  constructor(brokers: readonly string[], options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('WEIR_BROKER_UNREACHABLE', `cannot reach Kafka at ${brokers.join(',')} (set --brokers or KAFKA_BROKERS)${reason}`, options);
    this.brokers = brokers;
  }
}

/**
 * The TopologyTestDriver (`weir/testing`) was used wrongly — a record it cannot pipe (no such
 * partition, a value its serde cannot write), a topic that is not the topology's — or its
 * tasks did not settle (a livelock in the topology under test).
 */
export class TestDriverError extends WeirError {
  constructor(message: string) {
    super('WEIR_TEST_DRIVER', message);
  }
}

/**
 * The worker could not serve `/metrics`, `/healthz` and `/readyz` on its `--metrics-port`
 * (most often: another process already listens there). A runtime failure (exit 1), not bad input.
 */
export class MetricsPortError extends WeirError {
  readonly port: number;

  constructor(port: number, options?: { cause?: unknown }) {
    const code = (options?.cause as { code?: unknown } | undefined)?.code;
    const reason =
      code === 'EADDRINUSE'
        ? 'the port is already in use'
        : options?.cause instanceof Error
          ? options.cause.message
          : String(options?.cause ?? 'unknown error');
    super('WEIR_METRICS_PORT', `cannot serve metrics and health checks on port ${port} (--metrics-port): ${reason}`, options);
    this.port = port;
  }
}
