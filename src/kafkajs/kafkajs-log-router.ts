import type { Logger } from 'pino';
import { ConnectionOutages, hostPortIn, UNKNOWN_BROKER, type ConnectionOutagesOptions } from '../kafka/connection-outages.js';

/** kafkajs' numeric log levels (`logLevel` of kafkajs): ERROR 1, WARN 2, INFO 4, DEBUG 5. */
const KAFKAJS_LEVEL = { error: 1, warn: 2, info: 4, debug: 5 } as const;

/** One kafkajs log call, as its `logCreator` receives it. */
export interface KafkajsLogEntry {
  readonly namespace: string;
  readonly level: number;
  readonly log: { readonly message: unknown; readonly [field: string]: unknown };
}

/** Options of {@link KafkajsLogRouter}. Times in ms. */
export type KafkajsLogRouterOptions = ConnectionOutagesOptions;

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
 * itself (the worker: `kafka consumer stopped`, the DLQ tools: the command's error), and a
 * failed `CreateTopics` response (most often topics another worker or stream thread created a
 * moment before; weir reports a real failure as the start's error).
 */
const HANDLED_ELSEWHERE =
  /coordinator is (loading|not available)|not the correct coordinator|leadership election|not the leader for that topic-partition|concurrent operation on the same transaction|^Crash: |^Response CreateTopics\b/i;
/** Messages and errors that say a broker cannot be reached. */
const CONNECTION_TROUBLE =
  /Connection error|Connection timeout|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|Closed connection|Failed to connect|KafkaJSConnection|socket hang up|not connected/i;

/**
 * Routes kafkajs' log calls to weir's pino logger so that only real problems reach `warn`:
 *
 * - group-protocol chatter (heartbeats, rebalances, joins), the coordinator and leader errors
 *   kafkajs retries after a broker restart, and the consumer's `Crash:` line (weir reports the
 *   crash itself) go to `debug`;
 * - connection errors during a broker outage are aggregated per broker ({@link ConnectionOutages}):
 *   one `warn` when the outage begins, then at most one `warn` per broker per
 *   `connectionWarnIntervalMs` with the count of errors since the last one, and one `info`
 *   (`kafka broker connection is back`) at the first successful response from that broker;
 * - other ERROR and WARN lines stay `warn` (kafkajs logs retried, recoverable errors at ERROR;
 *   weir reports failures that matter itself), INFO becomes `debug`, DEBUG `trace`.
 *
 * kafkajs' DEBUG lines (every request and response) are only looked at while an outage is open.
 */
export class KafkajsLogRouter {
  private readonly log: Logger;
  private readonly outages: ConnectionOutages;

  constructor(logger: Logger, options: KafkajsLogRouterOptions = {}) {
    this.log = logger.child({ component: 'kafkajs' });
    this.outages = new ConnectionOutages(this.log, 'kafkajs', options);
  }

  /** Handles one kafkajs log call (kafkajs' `logCreator` returns this, bound). */
  route(entry: KafkajsLogEntry): void {
    const { namespace, level } = entry;
    const { message: raw, timestamp: _timestamp, logger: _logger, ...rest } = entry.log;
    // kafkajs passes an Error as the message in a few places.
    const message = raw instanceof Error ? raw.message : String(raw);
    const fields: Record<string, unknown> = raw instanceof Error ? { ...rest, err: raw } : rest;
    if (level >= KAFKAJS_LEVEL.debug) {
      const broker = fields['broker'];
      if (this.outages.open && typeof broker === 'string' && message.startsWith('Response ') && fields['error'] === undefined)
        this.outages.recovered(broker);
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
    this.emit('debug', namespace, fields, message);
    this.outages.failed(brokerOf(fields, `${message} ${error}`), error === '' ? message : `${message}: ${error}`);
  }

  private emit(method: 'warn' | 'debug' | 'trace', namespace: string, fields: Record<string, unknown>, message: string): void {
    if (this.log.isLevelEnabled(method)) this.log[method]({ namespace, ...fields }, message);
  }
}

/** The broker a kafkajs log call is about: its `broker` field, else a `host:port` in the text. */
function brokerOf(fields: Record<string, unknown>, text: string): string {
  if (typeof fields['broker'] === 'string') return fields['broker'];
  return hostPortIn(text) ?? UNKNOWN_BROKER;
}
