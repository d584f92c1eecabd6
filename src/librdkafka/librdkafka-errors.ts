import { MemberFencedError } from '../errors.js';

/**
 * librdkafka error codes weir acts on (`rd_kafka_resp_err_t`: negative codes are the client's
 * own, positive ones the broker's), as the binding's `LibrdKafkaError.code` carries them.
 */
export const ERR = Object.freeze({
  TRANSPORT: -195,
  MSG_TIMED_OUT: -192,
  PARTITION_EOF: -191,
  ALL_BROKERS_DOWN: -187,
  TIMED_OUT: -185,
  QUEUE_FULL: -184,
  ASSIGN_PARTITIONS: -175,
  REVOKE_PARTITIONS: -174,
  STATE: -172,
  PURGE_QUEUE: -152,
  PURGE_INFLIGHT: -151,
  FATAL: -150,
  MAX_POLL_EXCEEDED: -147,
  FENCED: -144,
  UNKNOWN_TOPIC_OR_PART: 3,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PRODUCER_EPOCH: 47,
  GROUP_ID_NOT_FOUND: 69,
  FENCED_INSTANCE_ID: 82,
  UNSTABLE_OFFSET_COMMIT: 88,
  PRODUCER_FENCED: 90,
});

/**
 * Codes that say "a newer producer owns this transactional id": librdkafka's own `ERR__FENCED`
 * (its fatal error after the broker's answer), PRODUCER_FENCED (90) and, from older brokers,
 * INVALID_PRODUCER_EPOCH (47).
 */
const FENCED_CODES = new Set<number>([ERR.FENCED, ERR.PRODUCER_FENCED, ERR.INVALID_PRODUCER_EPOCH]);

/** The librdkafka error code of an error (or of the error it wraps), if it has one. */
export function codeOf(error: unknown, depth = 0): number | undefined {
  if (typeof error !== 'object' || error === null || depth > 5) return undefined;
  const e = error as { code?: unknown; cause?: unknown };
  if (typeof e.code === 'number') return e.code;
  return codeOf(e.cause, depth + 1);
}

/** True when a librdkafka error says the transactional producer was fenced. */
export function isFencedError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && FENCED_CODES.has(code)) return true;
  // A fatal error carries the original cause only in its text.
  return code === ERR.FATAL && /fenced|PRODUCER_FENCED|INVALID_PRODUCER_EPOCH/i.test(String((error as Error).message));
}

/** True when a librdkafka error is fatal: the client that raised it cannot be used again. */
export function isFatalError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { isFatal?: unknown; code?: unknown };
  return e.isFatal === true || e.code === ERR.FATAL || e.code === ERR.FENCED;
}

/**
 * What a group consumer's `onCrash` gets for its fatal error (as {@link FatalErrorWatch.explain}
 * stated it): a `MemberFencedError` when the static member `groupInstanceId` was fenced by
 * another consumer with its `group.instance.id` (librdkafka's fatal `FENCED_INSTANCE_ID`), else
 * the error itself.
 */
export function memberCrashError(error: unknown, groupInstanceId: string | undefined): unknown {
  const text = error instanceof Error ? error.message : String(error);
  if (groupInstanceId !== undefined && /Static consumer fenced|FENCED_INSTANCE_ID|same group\.instance\.id/i.test(text))
    return new MemberFencedError(groupInstanceId, { cause: error });
  return error;
}

/** Error codes that stand for a fatal error whose cause librdkafka reported elsewhere (its `FATAL` log line). */
const GENERIC_FATAL_CODES = new Set<number>([ERR.FATAL, ERR.PURGE_QUEUE /* a failed producer's queued records, as a send reports them */]);

/** librdkafka's thread prefix of a log message: `[thrd:127.0.0.1:9092/bootstrap]: `, `[thrd:[::1]:9092/1]: `, `[thrd:main]: `. */
const THREAD_PREFIX = /^\[thrd:(.*?)\]: /;

/**
 * A librdkafka log message without the thread it came from (see {@link threadOf}), which would
 * otherwise read as a `host:port` (`thrd:127`).
 */
export function withoutThreadPrefix(message: string): string {
  return message.replace(THREAD_PREFIX, '');
}

/** The thread a librdkafka log message names in its prefix (`127.0.0.1:9092/bootstrap`, `main`), if it has one. */
export function threadOf(message: string): string | undefined {
  return THREAD_PREFIX.exec(message)?.[1];
}

/**
 * Remembers a client's fatal error as librdkafka states it: its `FATAL` log line (e.g. `Fatal
 * error: Broker: Static consumer fenced by other consumer with same group.instance.id`), since
 * the binding's calls fail with a bare `ERR__FATAL` ("Local: Fatal error") or purge what was in
 * flight. Feed it the client's log events; ask it what a failure really was.
 */
export class FatalErrorWatch {
  private cause: Error | undefined;

  /** A log event of the client. */
  logged(event: { readonly severity: number; readonly fac: string; readonly message: string }): void {
    if (event.fac === 'FATAL' || (event.severity <= 2 && /fatal/i.test(event.message)))
      this.cause ??= Object.assign(new Error(withoutThreadPrefix(event.message)), { code: ERR.FATAL, isFatal: true });
  }

  /** The fatal error librdkafka logged, if it logged one. */
  get stated(): Error | undefined {
    return this.cause;
  }

  /** Forgets the cause (a new client). */
  reset(): void {
    this.cause = undefined;
  }

  /**
   * The failure `error` stands for: the fatal cause when `error` is a generic fatal one (waiting
   * up to `waitMs` for the log line, which may come a moment after the failed call), else `error`.
   */
  async explain(error: unknown, waitMs = 500): Promise<unknown> {
    const code = codeOf(error);
    if (code === undefined || !GENERIC_FATAL_CODES.has(code)) return error;
    for (const deadline = Date.now() + waitMs; this.cause === undefined && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 10));
    return this.cause === undefined ? error : Object.assign(this.cause, { cause: error });
  }
}
