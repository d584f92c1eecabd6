import type { Logger } from 'pino';
import type { CircuitTransition } from '../failure/circuit-breaker.js';
import { errorClassOf, errorMessageOf } from '../failure/classify-error.js';

/** While a breaker stays open, its failed probes are summed in one line at most this often, ms. */
export const OPEN_SUMMARY_EVERY_MS = 60_000;

/** One processor's breaker as the log has told it since it opened from closed. */
interface OpenSpell {
  /** When it first opened (epoch ms, the tasks' clock). */
  readonly since: number;
  /** When the last `warn` line about it was written. */
  lastLineAt: number;
  /** Failed probes (half-open → open) since that line. */
  reopenedSinceLine: number;
  /** Failed probes since it first opened. */
  reopened: number;
  lastError?: unknown;
}

/**
 * Logs a circuit breaker's transitions without flooding the log during an outage: the first
 * `opened` line in full (`warn`: failure rate, calls, last error), then, while failed probes
 * keep opening it again (half-open → open, every `openMs`…`maxOpenMs`), one summary per
 * {@link OPEN_SUMMARY_EVERY_MS} with their count and the last error (`warn`); `closed` says how
 * long it was open and how many probes failed (`info`). Event-driven on the transitions' own
 * times (`atMs`), so it needs no timer: a breaker that stays open keeps probing.
 */
export class CircuitOpenLog {
  private readonly spells = new Map<string, OpenSpell>();

  constructor(private readonly logger: Logger) {}

  /** Logs (or counts) one transition. */
  transition(t: CircuitTransition): void {
    const spell = this.spells.get(t.processor);
    if (t.to === 'open') {
      if (spell === undefined) {
        this.spells.set(t.processor, { since: t.atMs, lastLineAt: t.atMs, reopenedSinceLine: 0, reopened: 0 });
        this.logger.warn(
          {
            processor: t.processor,
            from: t.from,
            failureRate: t.failureRate,
            calls: t.calls,
            openForMs: t.openForMs,
            ...errorFields(t.lastError),
          },
          `circuit breaker of '${t.processor}' opened: its tasks stop calling it for ${t.openForMs} ms; records wait in place`,
        );
        return;
      }
      spell.reopened++;
      spell.reopenedSinceLine++;
      spell.lastError = t.lastError;
      if (t.atMs - spell.lastLineAt < OPEN_SUMMARY_EVERY_MS) return;
      this.logger.warn(
        {
          processor: t.processor,
          failedProbes: spell.reopenedSinceLine,
          openedForMs: t.atMs - spell.since,
          openForMs: t.openForMs,
          ...errorFields(spell.lastError),
        },
        `circuit breaker of '${t.processor}' still open: ${spell.reopenedSinceLine} failed probe(s) in the last ${Math.round((t.atMs - spell.lastLineAt) / 1000)} s, open for ${Math.round((t.atMs - spell.since) / 1000)} s`,
      );
      spell.lastLineAt = t.atMs;
      spell.reopenedSinceLine = 0;
    } else if (t.to === 'closed') {
      this.spells.delete(t.processor);
      this.logger.info(
        { processor: t.processor, openedForMs: t.openedForMs, failedProbes: spell?.reopened ?? 0 },
        `circuit breaker of '${t.processor}' closed after ${t.openedForMs} ms (${spell?.reopened ?? 0} failed probe(s))`,
      );
    } else if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug({ processor: t.processor }, `circuit breaker of '${t.processor}' half-open: probing`);
    }
  }
}

function errorFields(error: unknown): { errorClass?: string; error?: string } {
  return error === undefined ? {} : { errorClass: errorClassOf(error), error: errorMessageOf(error) };
}
