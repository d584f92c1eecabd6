import type { Level, Logger } from 'pino';
import { ConnectionOutages, hostPortIn, UNKNOWN_BROKER, type ConnectionOutagesOptions } from '../kafka/connection-outages.js';
import { ERR, threadOf, withoutThreadPrefix } from './librdkafka-errors.js';
import type { LibrdkafkaError, NativeLogEvent } from './librdkafka-native.js';

/** Options of {@link LibrdkafkaLogRouter}. Times in ms. */
export interface LibrdkafkaLogRouterOptions extends ConnectionOutagesOptions {
  /** How often an open outage asks a client whether the broker answers again; default 2 000. */
  readonly probeIntervalMs?: number;
}

/**
 * librdkafka's syslog severities (0 emerg … 7 debug) as pino levels: emerg, alert and crit are
 * `fatal`, err `error`, warning `warn`, notice `info`, info `debug`, debug `trace`.
 */
export function pinoLevelOf(severity: number): Level {
  if (severity <= 2) return 'fatal';
  if (severity === 3) return 'error';
  if (severity === 4) return 'warn';
  if (severity === 5) return 'info';
  if (severity === 6) return 'debug';
  return 'trace';
}

/** Messages and errors that say a broker cannot be reached. */
const CONNECTION_TROUBLE =
  /Connect to .* failed|Connection refused|Disconnected|brokers are down|broker connections are down|transport failure|Failed to resolve|Receive failed|Send failed|ECONNREFUSED|ECONNRESET|Connection setup timed out|timed out in state CONNECT|ApiVersionRequest failed/i;
/** Error codes that say a broker cannot be reached. */
const CONNECTION_CODES = new Set<number>([ERR.TRANSPORT, ERR.ALL_BROKERS_DOWN, -193 /* ERR__RESOLVE */]);
/**
 * What librdkafka retries or weir reports itself: a group coordinator loading, moving or not
 * available; group membership chatter while the group rebalances; a leader being elected; a
 * transaction's `CONCURRENT_TRANSACTIONS`; a failed commit or transaction (the task reports its
 * port error and retries); a producer fenced by a newer one or a static member fenced by a newer
 * instance (weir reports both: a zombie task, a consumer crash); topics
 * another worker created a moment before; a request that timed out because a broker went away.
 */
const HANDLED_ELSEWHERE =
  /Offset commit .*failed|generation id is not valid|Unknown member|transaction error|Failed to end transaction|invalid state|coordinator|rebalanc|REBALANCE_IN_PROGRESS|UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION|leader|NOT_LEADER|CONCURRENT_TRANSACTIONS|fenced|FENCED|TOPIC_ALREADY_EXISTS|already exists|timed out|Timed out|Required feature not supported by broker|heartbeat|JoinGroup|SyncGroup|LeaveGroup|OffsetCommit|FindCoordinator|Unknown topic or partition/i;

/**
 * Routes librdkafka's log events (`event.log`) and error events (`event.error`) to weir's pino
 * logger under `component: 'librdkafka'`, like the kafkajs binding's router, so only real
 * problems reach `warn`:
 *
 * - log events at their syslog severity mapped to pino ({@link pinoLevelOf});
 * - connection errors aggregated per broker ({@link ConnectionOutages}: one `warn` when an outage
 *   begins, at most one per 10 s after, one `info` when the broker answers again — noticed from
 *   any client's successful call ({@link heard}) or from a probe every `probeIntervalMs`);
 * - what librdkafka retries or weir reports itself (rebalance and coordinator chatter, fencing,
 *   concurrent transactions) at `debug`; other error events at `warn`.
 */
export class LibrdkafkaLogRouter {
  private readonly log: Logger;
  private readonly outages: ConnectionOutages;
  private readonly probes = new Set<() => Promise<void>>();
  private readonly probeIntervalMs: number;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(logger: Logger, options: LibrdkafkaLogRouterOptions = {}) {
    this.log = logger.child({ component: 'librdkafka' });
    this.outages = new ConnectionOutages(this.log, 'librdkafka', options);
    this.probeIntervalMs = options.probeIntervalMs ?? 2_000;
  }

  /** Handles one `event.log` event of a client. */
  logEvent(event: NativeLogEvent): void {
    const level = pinoLevelOf(event.severity);
    const fields = { facility: event.fac, severity: event.severity };
    if (event.severity <= 4 && CONNECTION_TROUBLE.test(event.message)) {
      this.emit('debug', fields, event.message);
      this.failed(event.message);
      return;
    }
    if (event.severity <= 4 && HANDLED_ELSEWHERE.test(event.message)) return this.emit('debug', fields, event.message);
    this.emit(level, fields, event.message);
  }

  /** Handles one `event.error` event of a client (errors librdkafka reports and retries itself). */
  errorEvent(error: LibrdkafkaError): void {
    const fields = { code: error.code, fatal: error.isFatal === true };
    if (CONNECTION_CODES.has(error.code) || CONNECTION_TROUBLE.test(error.message)) {
      this.emit('debug', fields, error.message);
      this.failed(error.message);
      return;
    }
    // Fatal errors end the client that raised them; its owner reports them (a fenced producer, a crashed consumer).
    if (error.isFatal === true || HANDLED_ELSEWHERE.test(error.message)) return this.emit('debug', fields, error.message);
    this.emit('warn', fields, error.message);
  }

  /** What weir does about a client's error (e.g. replacing a client that failed fatally): a `warn` under `component: 'librdkafka'`. */
  warn(fields: Record<string, unknown>, message: string): void {
    this.emit('warn', fields, message);
  }

  /** A client's call succeeded: the cluster answers, so an open outage is over. */
  heard(): void {
    if (this.outages.open) this.recovered();
  }

  /**
   * Registers a client that can probe the cluster (e.g. a metadata request) while an outage is
   * open. @returns a function that removes it
   */
  addProbe(probe: () => Promise<void>): () => void {
    this.probes.add(probe);
    return () => {
      this.probes.delete(probe);
      if (this.probes.size === 0) this.stopProbing();
    };
  }

  private failed(logged: string): void {
    const message = withoutThreadPrefix(logged);
    // The broker the text names, else the broker thread that logged it.
    this.outages.failed(hostPortIn(message) ?? hostPortIn(threadOf(logged) ?? '') ?? UNKNOWN_BROKER, message);
    if (this.probeTimer === undefined && this.probes.size > 0) {
      this.probeTimer = setInterval(() => void this.probe(), this.probeIntervalMs);
      this.probeTimer.unref();
    }
  }

  private async probe(): Promise<void> {
    const probe = this.probes.values().next().value;
    if (probe === undefined) return this.stopProbing();
    if (this.probing) return;
    this.probing = true;
    try {
      await probe();
      this.heard();
    } catch {
      // Still down: the next interval probes again.
    } finally {
      this.probing = false;
    }
  }

  private recovered(): void {
    this.outages.recovered();
    this.stopProbing();
  }

  private stopProbing(): void {
    clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  private emit(level: Level, fields: Record<string, unknown>, message: string): void {
    if (this.log.isLevelEnabled(level)) this.log[level](fields, message);
  }
}
