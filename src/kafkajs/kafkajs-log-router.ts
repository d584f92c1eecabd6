import type { Logger } from 'pino';

/** kafkajs' numeric log levels (`logLevel` of kafkajs): ERROR 1, WARN 2, INFO 4, DEBUG 5. */
const KAFKAJS_LEVEL = { error: 1, warn: 2, info: 4, debug: 5 } as const;

/** One kafkajs log call, as its `logCreator` receives it. */
export interface KafkajsLogEntry {
  readonly namespace: string;
  readonly level: number;
  readonly log: { readonly message: unknown; readonly [field: string]: unknown };
}

/** Options of {@link KafkajsLogRouter}. Times in ms. */
export interface KafkajsLogRouterOptions {
  /** One aggregated warning per broker per this interval during an outage; default 10 000. */
  readonly connectionWarnIntervalMs?: number;
  /** Epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Group-protocol chatter kafkajs logs at ERROR or WARN while a consumer group rebalances —
 * heartbeat and join/sync responses (`REBALANCE_IN_PROGRESS`, `MEMBER_ID_REQUIRED`, …), its
 * runner re-joining — all of which kafkajs handles itself and weir reports as rebalances.
 */
const GROUP_CHATTER =
  /^Response (Heartbeat|JoinGroup|SyncGroup|LeaveGroup|OffsetCommit)\b|rebalanc|re-joining|resync group|not aware of this member/i;
/**
 * Errors kafkajs retries itself after a broker restart (a group coordinator loading, not
 * available or moved; a partition leader being elected or moved — weir reports a write that
 * still fails as the task's port error), `CONCURRENT_TRANSACTIONS` while a fenced or crashed
 * producer's transaction is completed, and its consumer's `Crash:` line, which weir reports
 * itself (the worker: `kafka consumer stopped`, the DLQ tools: the command's error).
 */
const HANDLED_ELSEWHERE =
  /coordinator is (loading|not available)|not the correct coordinator|leadership election|not the leader for that topic-partition|concurrent operation on the same transaction|^Crash: /i;
/** Messages and errors that say a broker cannot be reached. */
const CONNECTION_TROUBLE =
  /Connection error|Connection timeout|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|Closed connection|Failed to connect|KafkaJSConnection|socket hang up|not connected/i;

/** One broker's outage: when it began, and the errors since. */
interface Outage {
  readonly sinceMs: number;
  windowStartMs: number;
  /** Errors since the last warning. */
  inWindow: number;
  /** Errors since the outage began. */
  total: number;
  lastError: string;
}

/**
 * Routes kafkajs' log calls to weir's pino logger so that only real problems reach `warn`:
 *
 * - group-protocol chatter (heartbeats, rebalances, joins), the coordinator and leader errors
 *   kafkajs retries after a broker restart, and the consumer's `Crash:` line (weir reports the
 *   crash itself) go to `debug`;
 * - connection errors during a broker outage are aggregated per broker: one `warn` when the
 *   outage begins, then at most one `warn` per broker per `connectionWarnIntervalMs` with the
 *   count of errors since the last one, and one `info` (`kafka broker connection is back`, with
 *   the outage's error count and length) at the first successful response from that broker;
 * - other ERROR and WARN lines stay `warn` (kafkajs logs retried, recoverable errors at ERROR;
 *   weir reports failures that matter itself), INFO becomes `debug`, DEBUG `trace`.
 *
 * kafkajs' DEBUG lines (every request and response) are only looked at while an outage is open.
 */
export class KafkajsLogRouter {
  private readonly log: Logger;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly outages = new Map<string, Outage>();

  constructor(logger: Logger, options: KafkajsLogRouterOptions = {}) {
    this.log = logger.child({ component: 'kafkajs' });
    this.intervalMs = options.connectionWarnIntervalMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Handles one kafkajs log call (kafkajs' `logCreator` returns this, bound). */
  route(entry: KafkajsLogEntry): void {
    const { namespace, level } = entry;
    const { message: raw, timestamp: _timestamp, logger: _logger, ...rest } = entry.log;
    // kafkajs passes an Error as the message in a few places.
    const message = raw instanceof Error ? raw.message : String(raw);
    const fields: Record<string, unknown> = raw instanceof Error ? { ...rest, err: raw } : rest;
    if (level >= KAFKAJS_LEVEL.debug) {
      if (this.outages.size > 0 && message.startsWith('Response ') && fields['error'] === undefined) this.recovered(fields['broker']);
      this.emit('trace', namespace, fields, message);
      return;
    }
    if (level === KAFKAJS_LEVEL.info) return this.emit('debug', namespace, fields, message);
    const error = typeof fields['error'] === 'string' ? fields['error'] : '';
    if (GROUP_CHATTER.test(message) || GROUP_CHATTER.test(error) || HANDLED_ELSEWHERE.test(message) || HANDLED_ELSEWHERE.test(error))
      return this.emit('debug', namespace, fields, message);
    if (CONNECTION_TROUBLE.test(message) || CONNECTION_TROUBLE.test(error)) return this.connectionError(namespace, fields, message, error);
    this.emit('warn', namespace, fields, message);
  }

  private connectionError(namespace: string, fields: Record<string, unknown>, message: string, error: string): void {
    const broker = brokerOf(fields, `${message} ${error}`);
    const now = this.now();
    const problem = error === '' ? message : `${message}: ${error}`;
    const outage = this.outages.get(broker);
    this.emit('debug', namespace, fields, message);
    if (outage === undefined) {
      this.outages.set(broker, { sinceMs: now, windowStartMs: now, inWindow: 0, total: 1, lastError: problem });
      this.log.warn({ broker, error: problem }, 'kafka broker unreachable; kafkajs retries');
      return;
    }
    outage.total++;
    outage.inWindow++;
    outage.lastError = problem;
    if (now - outage.windowStartMs >= this.intervalMs) {
      this.log.warn(
        { broker, errors: outage.inWindow, outageMs: now - outage.sinceMs, error: problem },
        'kafka broker still unreachable; kafkajs retries',
      );
      outage.windowStartMs = now;
      outage.inWindow = 0;
    }
  }

  private recovered(broker: unknown): void {
    const key = typeof broker === 'string' ? broker : undefined;
    // A response from any broker also ends the outage of the unnamed seed broker.
    for (const name of key === undefined ? [] : [key, UNKNOWN_BROKER]) {
      const outage = this.outages.get(name);
      if (outage === undefined) continue;
      this.outages.delete(name);
      this.log.info(
        { broker: name === UNKNOWN_BROKER ? key : name, errors: outage.total, outageMs: this.now() - outage.sinceMs },
        'kafka broker connection is back',
      );
    }
  }

  private emit(method: 'warn' | 'debug' | 'trace', namespace: string, fields: Record<string, unknown>, message: string): void {
    if (this.log.isLevelEnabled(method)) this.log[method]({ namespace, ...fields }, message);
  }
}

/** The outage key of an error whose log call names no broker. */
const UNKNOWN_BROKER = '(bootstrap)';

/** The broker a kafkajs log call is about: its `broker` field, else a `host:port` in the text. */
function brokerOf(fields: Record<string, unknown>, text: string): string {
  if (typeof fields['broker'] === 'string') return fields['broker'];
  return /(\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9.-]+):(\d{2,5})\b/.exec(text)?.slice(1, 3).join(':') ?? UNKNOWN_BROKER;
}
