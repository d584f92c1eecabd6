import { CappedBackoff } from '../failure/capped-backoff.js';
import type { PollResult } from './poll-result.js';
import type { Clock, PortName } from './ports.js';
import type { TaskEvents } from './task-events.js';

/** Port failures back off from 100 ms, doubling, up to 5 s. */
const PORT_RETRY_MS = { initial: 100, max: 5_000 } as const;

/**
 * A task's wait after a failed port call (produce, commit, transaction, dedup): the failure is
 * reported and the task waits out a capped backoff; the next success starts it over. With
 * `rewrite` (a write failed before anything became durable), the task writes the same unit
 * again before it processes more records.
 */
export class PortRetry {
  private readonly backoff = new CappedBackoff(PORT_RETRY_MS.initial, PORT_RETRY_MS.max);
  /** The failed call's retry, until a port call succeeds. */
  private pending: { readonly retryAt: number; readonly rewrite: boolean } | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly events: TaskEvents,
  ) {}

  /** The wait for the pending retry when it is due after `now`; undefined otherwise. */
  waitBefore(now: number): PollResult | undefined {
    if (this.pending === null || this.pending.retryAt <= now) return undefined;
    return { kind: 'wait', untilMs: this.pending.retryAt, reason: 'port-retry' };
  }

  /** Whether the unit must be written again before the task processes more records. */
  get rewrite(): boolean {
    return this.pending?.rewrite === true;
  }

  /** A port failed: report it and wait (capped backoff); `rewrite` the unit first when nothing of it became durable. */
  failed(port: PortName, error: unknown, rewrite = false): PollResult {
    const retryInMs = this.backoff.next();
    this.pending = { retryAt: this.clock.now() + retryInMs, rewrite };
    this.events.portError(port, error, retryInMs);
    return { kind: 'wait', untilMs: this.pending.retryAt, reason: 'port-retry' };
  }

  /** The port calls of a flush succeeded: no retry is pending, and the next failure waits the shortest delay. */
  succeeded(): void {
    this.backoff.reset();
    this.pending = null;
  }
}
