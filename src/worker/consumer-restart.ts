import type { Logger } from 'pino';
import { CappedBackoff } from '../failure/capped-backoff.js';
import type { AssignedTasks } from './assigned-tasks.js';
import type { MemberConsumer } from './member-consumer.js';
import type { Clock } from '../runtime/ports.js';
import { runAfter } from '../runtime/run-after.js';
import { rebalanceDeadlineMs, rebalanceStalled } from './rebalance-watchdog.js';

/** What a {@link ConsumerRestart} works with: its worker's parts, read when it needs them. */
export interface ConsumerRestartParts {
  /** The member's tasks, once the worker has its task factory. */
  readonly tasks: () => AssignedTasks | undefined;
  /** The group membership whose consumer is replaced. */
  readonly membership: () => MemberConsumer | undefined;
  /** `session.timeout.ms`: the longest a stop may take, and the base of a start's deadline. */
  readonly sessionTimeoutMs: number;
  readonly logger: Logger;
  /** Whether the worker's shutdown began: the restart then starts no further consumer. */
  readonly shuttingDown: () => boolean;
  /** Whose timer runs the backoff between two joins (tests pass a ManualClock); default the system timer. */
  readonly clock?: Pick<Clock, 'after'>;
}

/**
 * Replaces a group member's consumer after it crashed, was fenced, or never came back from a
 * rebalance: its tasks close without a commit (`'close'`), the old consumer gets at most
 * `session.timeout.ms` to stop (a kafkajs consumer stuck in its join disconnects only once the
 * join ends; by then the coordinator has evicted it anyway), and a new one joins the group. A
 * new consumer that crashes while it joins, or that has not joined within the rebalance
 * deadline (`rebalanceDeadlineMs`: the rebalance timeout plus the session timeout), is given
 * up and another started, after a capped backoff (1 s doubling to 10 s), until one joins or the
 * worker shuts down. Kafka Streams' stream thread does the like for a `TaskMigratedException` (a
 * fenced producer, a member out of its group): it closes its tasks dirty and rejoins; after other
 * errors it can replace the whole thread, when the application's handler asks for KIP-671's
 * `REPLACE_THREAD`.
 */
export class ConsumerRestart {
  /** The restart under way, if any. */
  private running: Promise<void> | undefined;
  /** A crash of the consumer the restart is starting (it starts another). */
  private crashedWhileStarting: unknown;
  /** Ends the wait between two joins (a shutdown does). */
  private endBackOff: (() => void) | undefined;

  constructor(private readonly parts: ConsumerRestartParts) {}

  /** Whether a restart is under way: from {@link begin} until a new consumer joined, a shutdown ended it, or it failed. */
  get underway(): boolean {
    return this.running !== undefined;
  }

  /** Starts a restart. Does nothing while one is under way. */
  begin(): void {
    this.running ??= this.replace().finally(() => {
      this.running = undefined;
    });
  }

  /** The consumer being started gave up (`error`): the restart under way starts another. */
  startFailed(error: unknown): void {
    this.crashedWhileStarting = error ?? new Error('the consumer stopped while it was joining');
  }

  /**
   * A shutdown began: the wait between two joins ends now. (No further consumer starts because
   * `shuttingDown` says so from then on.)
   */
  interrupt(): void {
    this.endBackOff?.();
  }

  private async replace(): Promise<void> {
    const { tasks, membership, sessionTimeoutMs, logger, shuttingDown } = this.parts;
    await tasks()?.closeAll('close');
    await membership()?.stopWithin(sessionTimeoutMs);
    const backoff = new CappedBackoff(1_000, 10_000);
    while (!shuttingDown()) {
      this.crashedWhileStarting = undefined;
      try {
        const joined = (await membership()?.startWithin(rebalanceDeadlineMs(sessionTimeoutMs))) ?? true;
        // A shutdown came meanwhile: it stops the consumer.
        if (shuttingDown()) return;
        if (!joined) this.crashedWhileStarting ??= rebalanceStalled(sessionTimeoutMs, 'the new consumer began joining');
        if (this.crashedWhileStarting === undefined) return;
        logger.warn({ err: this.crashedWhileStarting }, 'the new consumer stopped while joining; rejoining again');
        await tasks()?.closeAll('close');
        await membership()?.stopWithin(sessionTimeoutMs);
        await this.backOff(backoff.next());
      } catch (restartError) {
        logger.error({ err: restartError, attempt: backoff.failures + 1 }, 'rejoining the group failed; retrying');
        await this.backOff(backoff.next());
      }
    }
  }

  /** Waits `ms` before the next join, or until {@link interrupt} ends the wait. */
  private backOff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = runAfter(this.parts.clock, ms, resolve);
      this.endBackOff = () => {
        cancel();
        resolve();
      };
    });
  }
}
