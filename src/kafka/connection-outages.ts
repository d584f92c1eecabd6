import type { Logger } from 'pino';

/** Options of {@link ConnectionOutages}. Times in ms. */
export interface ConnectionOutagesOptions {
  /** One aggregated warning per broker per this interval during an outage; default 10 000. */
  readonly connectionWarnIntervalMs?: number;
  /** Epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/** One broker's outage: when it began, and the errors since. */
interface Outage {
  readonly sinceMs: number;
  windowStartMs: number;
  /** Errors since the last warning. */
  inWindow: number;
  /** Errors since the outage began. */
  total: number;
}

/** The outage key of an error that names no broker (e.g. a seed broker's connection error). */
export const UNKNOWN_BROKER = '(bootstrap)';

/**
 * Aggregates a Kafka client's connection errors per broker, so an outage is a few lines, not
 * one per retry: one `warn` when the outage begins (`kafka broker unreachable; <client>
 * retries`), then at most one `warn` per broker per `connectionWarnIntervalMs` with the count
 * of errors since the previous one (`kafka broker still unreachable; …`), and one `info`
 * (`kafka broker connection is back`, with the outage's error count and length) when the
 * client hears from the broker again. Both client bindings' log routers use it.
 */
export class ConnectionOutages {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly outages = new Map<string, Outage>();

  /**
   * @param log the logger the aggregated lines go to (the router's, with its `component`)
   * @param client the client's name in the messages, e.g. `kafkajs`
   */
  constructor(
    private readonly log: Logger,
    private readonly client: string,
    options: ConnectionOutagesOptions = {},
  ) {
    this.intervalMs = options.connectionWarnIntervalMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Whether an outage is open (some broker failed since it was last heard from). */
  get open(): boolean {
    return this.outages.size > 0;
  }

  /**
   * A connection error with `broker` (`host:port`, or {@link UNKNOWN_BROKER}); `problem` is the
   * error text. An error that names no broker counts into an outage already open, and a named
   * broker's first error takes over the unnamed outage: one outage is one warning, whether the
   * client's errors name the broker or not.
   */
  failed(named: string, problem: string): void {
    const now = this.now();
    const open = this.outages.keys().next().value;
    const broker = named === UNKNOWN_BROKER && open !== undefined ? open : named;
    const unnamed = this.outages.get(UNKNOWN_BROKER);
    if (broker !== UNKNOWN_BROKER && unnamed !== undefined && !this.outages.has(broker)) {
      this.outages.delete(UNKNOWN_BROKER);
      this.outages.set(broker, unnamed);
    }
    const outage = this.outages.get(broker);
    if (outage === undefined) {
      this.outages.set(broker, { sinceMs: now, windowStartMs: now, inWindow: 0, total: 1 });
      this.log.warn({ broker, error: problem }, `kafka broker unreachable; ${this.client} retries`);
      return;
    }
    outage.total++;
    outage.inWindow++;
    if (now - outage.windowStartMs >= this.intervalMs) {
      this.log.warn(
        { broker, errors: outage.inWindow, outageMs: now - outage.sinceMs, error: problem },
        `kafka broker still unreachable; ${this.client} retries`,
      );
      outage.windowStartMs = now;
      outage.inWindow = 0;
    }
  }

  /**
   * The client heard from `broker` again (undefined: from the cluster, broker unknown — every
   * outage ends). A response from any broker also ends the outage of the unnamed seed broker.
   */
  recovered(broker?: string): void {
    if (this.outages.size === 0) return;
    const names = broker === undefined ? [...this.outages.keys()] : [broker, UNKNOWN_BROKER];
    for (const name of names) {
      const outage = this.outages.get(name);
      if (outage === undefined) continue;
      this.outages.delete(name);
      this.log.info(
        { broker: name === UNKNOWN_BROKER ? (broker ?? name) : name, errors: outage.total, outageMs: this.now() - outage.sinceMs },
        'kafka broker connection is back',
      );
    }
  }
}

/** The first `host:port` named in a text (a log line or an error message), else undefined. */
export function hostPortIn(text: string): string | undefined {
  return /(\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9.-]+):(\d{2,5})\b/.exec(text)?.slice(1, 3).join(':');
}
