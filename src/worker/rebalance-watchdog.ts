import { RebalanceStalledError } from '../errors.js';
import { rebalanceTimeoutMs } from '../kafka/group-consumer.js';
import type { Clock } from '../runtime/ports.js';
import { runAfter } from '../runtime/run-after.js';

/**
 * Longest a healthy eager rebalance keeps a member without an assignment, ms: the group
 * coordinator waits up to the rebalance timeout (`max.poll.interval.ms`, see
 * {@link rebalanceTimeoutMs}) for the members to rejoin, and evicts a member that stopped
 * heartbeating after the session timeout (`session.timeout.ms`).
 */
export function rebalanceDeadlineMs(sessionTimeoutMs: number): number {
  return rebalanceTimeoutMs(sessionTimeoutMs) + sessionTimeoutMs;
}

/**
 * The error of a consumer with no assignment {@link rebalanceDeadlineMs} after `since` (what began
 * the wait, e.g. "the group began rebalancing").
 */
export function rebalanceStalled(sessionTimeoutMs: number, since: string): RebalanceStalledError {
  return new RebalanceStalledError(
    `no partitions assigned within ${rebalanceDeadlineMs(sessionTimeoutMs)} ms after ${since} (rebalance timeout ` +
      `${rebalanceTimeoutMs(sessionTimeoutMs)} ms + session timeout ${sessionTimeoutMs} ms): the consumer is stuck in its join`,
  );
}

/**
 * Turns a consumer that never rejoins its group into a crash the worker recovers from. Armed
 * when the worker suspends its tasks for an eager rebalance, or when its member lost its
 * partitions (cooperative: its session timed out, or it was fenced) (`began`), disarmed by the
 * next assignment, even an empty one, or any other way out of the wait (`ended`); when
 * {@link rebalanceDeadlineMs} passes in between, `onStalled` gets a {@link RebalanceStalledError}
 * and the worker replaces its consumer, as after a crash.
 *
 * Why: kafkajs 2.2 can stay in its join for good after a broker restart ("Failed to find group
 * coordinator" retried inside nested retries, kafkajs issue #1630), emitting neither a join nor
 * a crash, while the member's partitions sit idle. librdkafka 2.15 was seen doing the same after
 * a broker restart, on a machine so loaded that the KRaft controller fenced the broker again and
 * again: a member that lost its partitions kept failing its
 * commits with "Waiting for coordinator" and was out of the group for ten minutes (fault
 * campaign seed 640928). The Java consumer has no such state: its `poll` rejoins or throws.
 */
export class RebalanceWatchdog {
  /** Cancels the armed deadline; undefined while none is armed. */
  private cancel: (() => void) | undefined;

  /** `clock`: whose timer runs the deadline (tests pass a ManualClock); default the system timer, unref'd. */
  constructor(
    private readonly sessionTimeoutMs: number,
    private readonly onStalled: (error: RebalanceStalledError) => void,
    private readonly clock?: Pick<Clock, 'after'>,
  ) {}

  /**
   * The member waits for an assignment: it suspended its tasks for a rebalance, or (`since`
   * `'the member lost its partitions'`) lost them. Armed once: a repeated call keeps the first
   * deadline.
   */
  began(since = 'the group began rebalancing'): void {
    if (this.cancel !== undefined) return;
    this.cancel = runAfter(
      this.clock,
      rebalanceDeadlineMs(this.sessionTimeoutMs),
      () => {
        this.cancel = undefined;
        this.onStalled(rebalanceStalled(this.sessionTimeoutMs, since));
      },
      { unref: true },
    );
  }

  /** The wait is over: an assignment came, the consumer crashed, or the worker stops. */
  ended(): void {
    this.cancel?.();
    this.cancel = undefined;
  }
}
