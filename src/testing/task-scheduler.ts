import type { PartitionTask } from '../runtime/partition-task.js';
import type { PollResult } from '../runtime/poll-result.js';
import type { DriverTask, NextStep } from './driver-task.js';
import type { HistoryRecorder } from './driver-history.js';
import type { ActiveTask, PollAction } from './fault-injector.js';
import type { ManualClock } from './manual-clock.js';
import { TestDriverError } from '../errors.js';
import { setImmediate as macrotask } from 'node:timers/promises';

/** A task as the driver sees it. */
export interface DriverTaskStatus {
  /** `<topic>-<partition>#<incarnation>`. */
  readonly name: string;
  readonly topic: string;
  readonly partition: number;
  /** What the task waits for. */
  readonly next: NextStep;
  readonly buffered: number;
  readonly committedOffset: number;
}

/** A task that stalled mid-poll and was replaced; it resumes once the live tasks are idle. */
interface Zombie {
  readonly name: string;
  readonly task: PartitionTask;
  readonly pending: Promise<PollResult>;
  readonly resume: () => void;
}

/** Polls a resumed zombie may make before the driver closes it (as a revoked partition). */
const MAX_ZOMBIE_POLLS = 20;

/** Polls one `run` may make before the driver reports a livelock. */
const MAX_POLLS_PER_RUN = 200_000;

/**
 * The TopologyTestDriver's stand-in for the worker's TaskRunners, on virtual time: polls the
 * tasks one at a time as their PollResults ask (yield → again; idle → when records arrive;
 * wait → at `untilMs`, or on records for a commit wait), fetches for them, and replaces a task
 * that crashed, was fenced or lost its partition with a new incarnation started from the
 * committed state. One poll at a time, so a fault knows which task it strikes.
 */
export class TaskScheduler {
  /** Polls made so far (poll-triggered faults count these). */
  polls = 0;
  private active: DriverTask | undefined;
  private crashActive: (() => void) | undefined;
  private stallActive: (() => Promise<void>) | undefined;
  private readonly zombies: Zombie[] = [];

  constructor(
    readonly tasks: ReadonlyMap<string, DriverTask>,
    private readonly clock: ManualClock,
    private readonly recorder: HistoryRecorder,
    private readonly takeActions: (poll: number) => PollAction[],
    private readonly applyAction: (action: PollAction) => Promise<void>,
    /** Some processor has `timeoutMs`: a poll that hangs moves virtual time to its attempt's timeout. */
    private readonly attemptTimeouts = false,
  ) {}

  /** The task whose poll is running, for the fault injector. */
  activeTask(): ActiveTask | undefined {
    if (this.active === undefined) return undefined;
    return { name: this.active.name, crash: () => this.crashActive?.(), stall: () => this.stallActive?.() ?? Promise.resolve() };
  }

  /** Polls every runnable task, round after round, until none is runnable at the current time. */
  async run(): Promise<void> {
    for (let polls = 0; ;) {
      let progressed = false;
      for (const t of this.tasks.values()) {
        const fresh = t.fetch();
        if (!t.runnable(fresh)) continue;
        if (++polls > MAX_POLLS_PER_RUN)
          throw new TestDriverError(
            `TopologyTestDriver: tasks did not settle after ${MAX_POLLS_PER_RUN} polls at ${this.clock.now()} (livelock?): ${this.describeWaits()}`,
          );
        this.polls++;
        for (const action of this.takeActions(this.polls)) await this.applyAction(action);
        await this.pollOnce(t, true);
        progressed = true;
      }
      if (!progressed && this.zombies.length === 0) return;
      if (!progressed) await this.resumeZombies();
    }
  }

  /**
   * Resumes the stalled tasks, as a paused process would wake up after its partitions moved
   * on, and drives each until it closes, finally asking it to commit what it did (as its next
   * commit interval would): under exactly_once its next transactional call finds it fenced.
   * No fault strikes a zombie.
   */
  private async resumeZombies(): Promise<void> {
    for (const zombie of this.zombies.splice(0)) {
      zombie.resume();
      let result = await zombie.pending;
      for (let i = 0; result.kind !== 'closed' && i < MAX_ZOMBIE_POLLS; i++) result = await zombie.task.poll();
      if (result.kind !== 'closed') {
        zombie.task.requestStop('stop');
        await zombie.task.poll();
      }
    }
  }

  /** Runs the tasks at each wake-up up to `target` (epoch ms), in time order, then at `target`. */
  async advanceTo(target: number): Promise<void> {
    await this.run();
    for (;;) {
      const next = this.nextWakeUp();
      if (next === undefined || next > target) break;
      this.clock.set(Math.max(next, this.clock.now()));
      await this.run();
    }
    if (target > this.clock.now()) this.clock.set(target);
    await this.run();
  }

  /**
   * Runs the tasks from wake-up to wake-up until none waits.
   *
   * @throws Error listing the waiting tasks when the next wake-up is past `deadline` (epoch ms)
   */
  async drain(deadline: number, budget: string): Promise<void> {
    await this.run();
    for (;;) {
      const next = this.nextWakeUp();
      if (next === undefined) return;
      if (next > deadline)
        throw new TestDriverError(`drain: tasks did not settle within ${budget} of virtual time: ${this.describeWaits()}`);
      this.clock.set(Math.max(next, this.clock.now()));
      await this.run();
    }
  }

  /**
   * Moves partitions to new task incarnations: the old task closes without committing (or
   * commits first when `graceful`), the new one starts from the committed offset.
   */
  async moveTasks(graceful: boolean, which: (t: DriverTask) => boolean): Promise<void> {
    for (const t of this.tasks.values()) {
      if (!which(t) || t.next.kind === 'closed') continue;
      const incarnation = t.incarnation;
      if (graceful) {
        t.task.suspend();
        await this.pollOnce(t, false);
      }
      if (t.incarnation !== incarnation) continue; // it crashed meanwhile and was restarted
      t.task.requestStop('close');
      await this.pollOnce(t, false);
      if (t.incarnation === incarnation) this.restart(t, 'rebalance');
    }
  }

  /** Stops every task as the worker does on SIGTERM: finish, flush, commit. */
  async close(): Promise<void> {
    for (const t of this.tasks.values()) {
      for (let i = 0; t.next.kind !== 'closed' && i < 100; i++) {
        t.task.requestStop('stop');
        await this.pollOnce(t, false);
      }
    }
  }

  /** Whether every task is idle (nothing buffered, waiting or uncommitted). */
  isSettled(): boolean {
    return [...this.tasks.values()].every((t) => t.next.kind === 'idle' || t.next.kind === 'closed');
  }

  status(): DriverTaskStatus[] {
    return [...this.tasks.values()].map((t) => ({
      name: t.name,
      topic: t.topic,
      partition: t.partition,
      next: t.next,
      buffered: t.task.buffered,
      committedOffset: t.task.committedOffset,
    }));
  }

  /** `orders-0#2 waits (backoff) until …; …`, for error messages. */
  describeWaits(): string {
    const waiting = this.status().filter((s) => s.next.kind !== 'idle' && s.next.kind !== 'closed');
    return (
      waiting
        .map((s) =>
          s.next.kind === 'wait'
            ? `${s.name} waits (${s.next.reason}) until ${new Date(s.next.untilMs).toISOString()}`
            : `${s.name} ${s.next.kind}`,
        )
        .join('; ') || 'no task waits'
    );
  }

  /**
   * One poll. A crash (the poll never returns) or a fenced task is replaced by a new
   * incarnation; so is a stalled one, which is kept to resume later as a zombie.
   */
  private async pollOnce(t: DriverTask, restartFenced: boolean): Promise<void> {
    let resume: () => void = () => undefined;
    const interrupted = new Promise<'crashed' | 'stalled'>((resolve) => {
      this.crashActive = () => resolve('crashed');
      this.stallActive = () =>
        new Promise<void>((wake) => {
          resume = wake;
          resolve('stalled');
        });
    });
    const { task, name } = t;
    this.active = t;
    const pending = task.poll();
    let result;
    try {
      result = await this.settle(Promise.race([pending, interrupted]));
    } finally {
      this.active = undefined;
      this.crashActive = undefined;
      this.stallActive = undefined;
    }
    if (result === 'crashed') {
      this.restart(t, 'crash');
      return;
    }
    if (result === 'stalled') {
      this.zombies.push({ name, task, pending, resume });
      this.recorder.markZombie(name);
      this.restart(t, 'stall');
      return;
    }
    t.settle(result);
    if (restartFenced && result.kind === 'closed' && result.state === 'fenced') this.restart(t, 'fenced');
  }

  /**
   * Waits for a poll. With attempt timeouts, a poll still pending once the event loop has run
   * everything else (its processor awaits what never comes in virtual time) moves the clock to
   * the earliest attempt timeout, which ends the attempt as `AttemptTimeoutError`.
   */
  private async settle<T>(poll: Promise<T>): Promise<T> {
    if (!this.attemptTimeouts) return poll;
    let done = false;
    const tracked = poll.finally(() => {
      done = true;
    });
    for (;;) {
      await macrotask();
      if (done) return tracked;
      const at = this.clock.nextTimerAt();
      if (at === undefined) return tracked;
      this.clock.set(Math.max(at, this.clock.now()));
    }
  }

  private restart(t: DriverTask, reason: 'crash' | 'stall' | 'rebalance' | 'fenced'): void {
    const from = t.name;
    t.start();
    this.recorder.restarts.push({ task: t.id, from, to: t.name, reason, atMs: this.clock.now() });
  }

  /** The earliest time a waiting task wakes up. */
  private nextWakeUp(): number | undefined {
    let next: number | undefined;
    for (const t of this.tasks.values()) if (t.next.kind === 'wait' && (next === undefined || t.next.untilMs < next)) next = t.next.untilMs;
    return next;
  }
}
