import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { PartitionTask } from '../runtime/partition-task.js';
import { wakesOnRecords, type PollResult } from '../runtime/poll-result.js';
import { CappedBackoff } from '../failure/capped-backoff.js';
import { MAX_TIMER_MS } from '../dsl/options-schema.js';

/** Flow control of one runner. Record counts are per partition. */
export interface TaskRunnerOptions {
  /** Pause fetching when this many records are buffered; resume below half of it. */
  readonly maxBufferedRecords: number;
  /** A wait (backoff, due time, port retry) at least this long pauses fetching, ms; a wait for an open circuit breaker always does. */
  readonly pauseAfterMs: number;
  /** Pauses or resumes the partition's fetching. */
  readonly setPaused: (paused: boolean) => void;
  readonly logger: Logger;
  /** Called once when the task ends. */
  readonly onClosed: (state: 'closed' | 'fenced') => void;
}

/**
 * Drives a {@link PartitionTask} with real time: polls it, sleeps when it asks to wait (a
 * timer, never blocking kafkajs' heartbeats), wakes up when records arrive or on stop, and
 * pauses the partition's fetching while the task waits long or its buffer is full.
 */
export class TaskRunner {
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private paused = false;
  private readonly done: Promise<void>;

  constructor(
    readonly task: PartitionTask,
    private readonly options: TaskRunnerOptions,
  ) {
    this.done = this.loop();
  }

  /** New records were buffered: wake the loop if it waits for them. */
  notifyRecords(): void {
    if (this.task.buffered >= this.options.maxBufferedRecords) this.setPaused(true);
    this.interruptWait('records');
  }

  /** A rebalance began: the task flushes and commits, then idles until `resume()`. */
  suspend(): void {
    this.task.suspend();
    this.interruptWait('control');
  }

  resume(): void {
    this.task.resume();
    this.interruptWait('control');
  }

  /**
   * Stops the task and waits for its loop to end: `'stop'` commits what is durable
   * (shutdown), `'close'` drops what is not (revoked).
   */
  async stop(mode: 'stop' | 'close'): Promise<void> {
    this.task.requestStop(mode);
    this.interruptWait('control');
    await this.done;
  }

  private waitingFor: 'records' | 'timer' | undefined;
  /**
   * A wake-up that came while the loop was not sleeping (it was polling): the next sleep
   * returns at once instead of missing it (records or a stop that arrived mid-poll).
   */
  private pendingWake: 'records' | 'control' | undefined;

  private interruptWait(cause: 'records' | 'control'): void {
    if (this.wake === undefined) {
      if (this.pendingWake !== 'control') this.pendingWake = cause;
      return;
    }
    if (cause === 'records' && this.waitingFor === 'timer') return;
    const wake = this.wake;
    this.wake = undefined;
    clearTimeout(this.timer);
    wake();
  }

  private sleep(untilMs: number | undefined, wakeOnRecords: boolean): Promise<void> {
    const pending = this.pendingWake;
    this.pendingWake = undefined;
    if (pending === 'control' || (pending === 'records' && wakeOnRecords)) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.waitingFor = wakeOnRecords ? 'records' : 'timer';
      // setTimeout fires at once past 2³¹ − 1 ms: wait at most that long, then poll again.
      if (untilMs !== undefined)
        this.timer = setTimeout(() => this.interruptWait('control'), Math.min(MAX_TIMER_MS, Math.max(0, untilMs - Date.now())));
    });
  }

  private setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    this.options.setPaused(paused);
  }

  private async loop(): Promise<void> {
    const backoff = new CappedBackoff(400, 10_000);
    for (;;) {
      let result: PollResult;
      try {
        result = await this.task.poll();
        backoff.reset();
      } catch (error) {
        // A bug: ports report their failures as values. Keep the partition safe (nothing is
        // committed past the failure) and try again.
        this.options.logger.error({ err: error, task: this.task.id }, 'task poll failed; retrying');
        await this.sleep(Date.now() + backoff.next(), false);
        continue;
      }
      if (result.kind === 'closed') {
        this.setPaused(false);
        this.options.onClosed(result.state);
        return;
      }
      const full = this.task.buffered >= this.options.maxBufferedRecords;
      // An open circuit breaker pauses at once: its dependency is down, fetching more only fills memory.
      const longWait =
        result.kind === 'wait' &&
        !wakesOnRecords(result.reason) &&
        (result.reason === 'circuit-open' || result.untilMs - Date.now() >= this.options.pauseAfterMs);
      if (full || longWait) this.setPaused(true);
      else if (this.task.buffered < this.options.maxBufferedRecords / 2) this.setPaused(false);

      // Suspended (a rebalance): the task flushed and committed; idle until resume() or stop().
      if (this.task.currentState === 'suspended') await this.sleep(undefined, false);
      else if (result.kind === 'yield') await yieldToEventLoop();
      else if (result.kind === 'idle') await this.sleep(undefined, true);
      else await this.sleep(result.untilMs, wakesOnRecords(result.reason));
      if (longWait) this.setPaused(this.task.buffered >= this.options.maxBufferedRecords);
    }
  }
}
