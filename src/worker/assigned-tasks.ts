import type { Logger } from 'pino';
import type { AssignmentEvent, RevocationEvent } from '../kafka/group-consumer.js';
import type { InputRecord, TopicPartition } from '../record/record-types.js';
import { taskId } from '../record/task-id.js';
import type { OffsetCommitter } from '../runtime/ports.js';
import { AbandonableCommits } from './abandonable-commits.js';
import type { TaskFactory } from './task-factory.js';
import type { TaskRunner } from './task-runner.js';
import type { TaskHealth } from './worker-health.js';
import type { TaskMetricsView } from '../observability/lag-source.js';

/** A task start that failed is tried again after this long, ms. */
const TASK_START_RETRY_MS = 1_000;
/** A task the factory left out (its parked records cannot be restored) is tried again after this long, ms. */
const LEFT_OUT_RETRY_MS = 10_000;

/** The consumer the tasks fetch through (the worker's current one; it is replaced after a crash). */
export interface TaskFetcher {
  pause(tp: TopicPartition): void;
  resume(tp: TopicPartition): void;
  seek(tp: TopicPartition, offset: number): void;
}

/** What {@link AssignedTasks} needs from its worker. */
export interface AssignedTasksOptions {
  readonly factory: TaskFactory;
  readonly fetcher: TaskFetcher;
  /** Commits group offsets (at_least_once), through the current consumer. */
  readonly committer: OffsetCommitter;
  readonly logger: Logger;
  /** Whether the worker still takes new tasks (false once it stops). */
  readonly active: () => boolean;
  /** Under at_least_once a suspended task's durable offsets are committed at once (eager rebalances). */
  readonly atLeastOnce: boolean;
  /** The stream thread the worker is, for the idle message; undefined in a one-thread process. */
  readonly thread?: number;
  /** Start held: assignments create no task (their partitions stay paused) until {@link AssignedTasks.release}. */
  readonly held?: boolean;
}

/**
 * The tasks of one group member: one {@link TaskRunner} per assigned partition, created when a
 * partition is assigned and closed when it is revoked, as in Kafka Streams' `TaskManager`.
 *
 * - eager rebalances (kafkajs): every task is suspended when the rebalance begins; the new
 *   assignment resumes the tasks it keeps and closes the others;
 * - cooperative rebalances (librdkafka): only the revoked tasks stop — each finishes the record
 *   in hand, flushes and commits before the revocation callback returns — and tasks of
 *   partitions that stay never stop; lost partitions are closed without a commit.
 *
 * A fenced task (a zombie under exactly_once) is rebuilt while its partition stays assigned.
 */
export class AssignedTasks {
  private readonly runners = new Map<string, TaskRunner>();
  /** The partitions assigned now, by task id. */
  private assignment = new Set<string>();
  private partitions: readonly TopicPartition[] = [];
  /** Counts assignments; a task creation belongs to the assignment that asked for it. */
  private generationCount = 0;
  /** Tasks being created, by task id → the generation that asked for them. */
  private readonly pending = new Map<string, number>();
  /** Assignments create no task yet (a stream thread's start gate). */
  private held: boolean;
  /** Tasks {@link closeAll} is ending and that have not ended yet, each with its stop. */
  private readonly closing = new Map<TaskRunner, Promise<void>>();
  /** What the tasks commit through: a shutdown's commit limit gives up on it (see {@link closeAll}). */
  private readonly committer: AbandonableCommits;

  constructor(private readonly options: AssignedTasksOptions) {
    this.held = options.held === true;
    this.committer = new AbandonableCommits(options.committer);
  }

  /**
   * Ends the hold: tasks are created for the partitions assigned now, and for every later
   * assignment. Does nothing when not held.
   */
  release(): void {
    if (!this.held) return;
    this.held = false;
    const waiting = this.partitions.filter((tp) => !this.runners.has(taskId(tp)) && !this.pending.has(taskId(tp)));
    if (waiting.length > 0 && this.options.active()) void this.create(waiting, this.generationCount);
  }

  /** Assignments so far (0 before the first). */
  get generation(): number {
    return this.generationCount;
  }

  /** Tasks running now. */
  get size(): number {
    return this.runners.size;
  }

  /** Each assigned partition with its task's state and the next offset it will process (none while the task is created). */
  views(): Array<Omit<TaskHealth, 'portRetry'> & Partial<Pick<TaskMetricsView, 'position' | 'parked'>>> {
    return this.partitions.map((tp) => {
      const id = taskId(tp);
      const task = this.runners.get(id)?.task;
      if (task === undefined) return { task: id, topic: tp.topic, partition: tp.partition, state: 'creating' };
      const { parked } = task;
      const position = task.position - task.buffered;
      return { task: id, topic: tp.topic, partition: tp.partition, state: task.currentState, position, ...(parked ? { parked } : {}) };
    });
  }

  /** A fetched batch: buffered by its task, or refused (and the partition paused) when it has none yet. */
  batch(tp: TopicPartition, records: InputRecord[], nextOffset: number): boolean {
    const runner = this.runners.get(taskId(tp));
    if (runner === undefined) {
      this.options.fetcher.pause(tp);
      return false;
    }
    runner.task.enqueue(records, nextOffset);
    runner.notifyRecords();
    return true;
  }

  /** The consumer moved past a batch with no records for weir (markers, aborted records). */
  skipped(tp: TopicPartition, nextOffset: number): void {
    // The consumer fetches from the offset the task accepted up to, so nothing lies between;
    // the task only ever moves its position forward.
    const runner = this.runners.get(taskId(tp));
    runner?.task.enqueue([], nextOffset);
    runner?.notifyRecords();
  }

  /** Partitions are taken from the member (see `GroupConsumerHandlers.onRevoked`). */
  async revoke(event: RevocationEvent): Promise<void> {
    if (event.protocol === 'eager') {
      this.suspendAll();
      return;
    }
    const ids = new Set(event.partitions.map(taskId));
    for (const id of ids) {
      this.assignment.delete(id);
      this.pending.delete(id);
    }
    this.partitions = this.partitions.filter((tp) => !ids.has(taskId(tp)));
    const leaving = [...this.runners].filter(([id]) => ids.has(id));
    for (const [id] of leaving) this.runners.delete(id);
    const mode = event.lost ? 'close' : 'stop';
    await Promise.all(
      leaving.map(async ([id, runner]) => {
        await runner.stop(mode);
        this.options.logger.info(
          { task: id },
          event.lost ? 'partition lost: task closed without a commit' : 'partition revoked: task committed and closed',
        );
      }),
    );
  }

  /**
   * eager: every task suspends; under at_least_once what is already durable is committed at
   * once, so partitions that move are not reprocessed from the last periodic commit (kafkajs
   * rejoins right after the rebalance event: if the commit loses that race, the new owner
   * replays those records, which at_least_once allows).
   */
  private suspendAll(): void {
    const durable = [...this.runners.values()]
      .filter((r) => r.task.durableOffset > r.task.committedOffset)
      .map((r) => ({ topic: r.task.topic, partition: r.task.partition, offset: r.task.durableOffset }));
    if (durable.length > 0 && this.options.atLeastOnce) {
      this.committer.commit(durable).catch((error: unknown) => this.options.logger.debug({ err: error }, 'commit at rebalance failed'));
    }
    for (const runner of this.runners.values()) runner.suspend();
  }

  /** The member's assignment after a rebalance: tasks for new partitions are created; eager: kept tasks resume, others close. */
  assign(event: AssignmentEvent): void {
    const generation = ++this.generationCount;
    const { assignment } = event;
    const { logger } = this.options;
    this.assignment = new Set(assignment.map(taskId));
    this.partitions = assignment;
    logger.info({ generation, partitions: [...this.assignment] }, 'partitions assigned');
    if (assignment.length === 0)
      logger.info(
        { generation },
        `no partitions assigned: this ${this.options.thread === undefined ? 'worker' : 'stream thread'} is idle (the group has more members than partitions)`,
      );
    for (const [id, runner] of this.runners) {
      if (this.assignment.has(id)) {
        if (event.protocol === 'eager') {
          this.options.fetcher.seek({ topic: runner.task.topic, partition: runner.task.partition }, runner.task.position);
          runner.resume();
        }
      } else {
        this.runners.delete(id);
        void runner.stop('close');
        logger.info({ task: id }, 'partition revoked: task closed');
      }
    }
    // A partition whose task is still being created for an earlier assignment is created again
    // for this one (the earlier creation sees it is no longer wanted and drops its task).
    const added = assignment.filter((tp) => !this.runners.has(taskId(tp)));
    for (const tp of added) this.options.fetcher.pause(tp);
    if (added.length > 0 && !this.held) void this.create(added, generation);
  }

  /** Whether a task for `tp` asked for by `generation` is still wanted. */
  private wanted(tp: TopicPartition, generation: number): boolean {
    const id = taskId(tp);
    return this.options.active() && this.pending.get(id) === generation && this.assignment.has(id);
  }

  private async create(partitions: readonly TopicPartition[], generation: number): Promise<void> {
    const { factory, fetcher, logger } = this.options;
    for (const tp of partitions) this.pending.set(taskId(tp), generation);
    try {
      const created = await factory.create(partitions, {
        isCurrent: (tp) => this.wanted(tp, generation),
        setPaused: (tp, paused) => (paused ? fetcher.pause(tp) : fetcher.resume(tp)),
        onClosed: (tp, state) => this.closed(tp, state),
        committer: this.committer,
      });
      for (const { tp, runner, startOffset } of created) {
        this.pending.delete(taskId(tp));
        this.runners.set(taskId(tp), runner);
        fetcher.seek(tp, startOffset);
        fetcher.resume(tp);
        logger.info({ task: taskId(tp), startOffset }, 'task started');
      }
      // Tasks the factory left out (it logged why: parked records it cannot restore, which an
      // operator must fix) are tried again, less often.
      this.retryLater(partitions, generation, LEFT_OUT_RETRY_MS);
    } catch (error) {
      if (!this.options.active()) return;
      logger.error({ err: error, partitions: partitions.map(taskId) }, 'could not start tasks; retrying');
      this.retryLater(partitions, generation, TASK_START_RETRY_MS);
    }
  }

  /** Creates again, after a pause, those of `partitions` still wanted that have no task. */
  private retryLater(partitions: readonly TopicPartition[], generation: number, delayMs: number): void {
    const missing = (): TopicPartition[] => partitions.filter((tp) => this.wanted(tp, generation) && !this.runners.has(taskId(tp)));
    if (missing().length === 0) return;
    setTimeout(() => {
      const still = missing();
      if (still.length > 0) void this.create(still, generation);
    }, delayMs);
  }

  /** A task ended: a fenced one (a zombie) is rebuilt while its partition stays assigned. */
  private closed(tp: TopicPartition, state: 'closed' | 'fenced'): void {
    if (state !== 'fenced') return;
    const id = taskId(tp);
    this.options.logger.warn({ task: id }, 'task fenced by a newer producer (zombie); closing it');
    if (this.runners.get(id)?.task.currentState === 'fenced') this.runners.delete(id);
    if (!this.options.active() || !this.assignment.has(id)) return;
    this.options.fetcher.pause(tp);
    const generation = this.generationCount;
    setTimeout(() => {
      if (this.generationCount !== generation || this.runners.has(id) || !this.assignment.has(id)) return;
      void this.create([tp], generation);
    }, TASK_START_RETRY_MS);
  }

  /**
   * Ends every task and forgets the assignment: `'stop'` lets each finish the record in hand,
   * flush and commit (shutdown); `'close'` drops what is not durable (the consumer crashed),
   * and fails the group offset commits still waiting for an answer, which it has no use for.
   * Resolves once they, and the tasks an earlier call is still ending, have ended.
   *
   * Given `commitLimitMs`, a group offset commit (at_least_once) still without an answer that
   * long after the call fails, and so does every later one: its task closes without it, and a
   * `warn` names the tasks (Kafka Streams' dirty close of a task whose commit fails on
   * shutdown; their next owner processes again what they processed since their last commit;
   * see {@link AbandonableCommits}). A task stuck in its processor is still waited for.
   */
  async closeAll(mode: 'stop' | 'close', commitLimitMs?: number): Promise<void> {
    const runners = [...this.runners.values()];
    if (mode === 'stop')
      for (const runner of runners) this.options.fetcher.pause({ topic: runner.task.topic, partition: runner.task.partition });
    this.runners.clear();
    this.pending.clear();
    this.assignment.clear();
    this.partitions = [];
    for (const runner of runners)
      this.closing.set(
        runner,
        runner.stop(mode).finally(() => this.closing.delete(runner)),
      );
    // Closed without a commit (the consumer stopped or was fenced): a commit still in its
    // client's retries is moot, and must not hold up the close.
    if (mode === 'close') this.committer.failWaiting(new Error('the task closes without a commit (its consumer stopped)'));
    const limit = commitLimitMs === undefined ? undefined : setTimeout(() => this.abandonCommits(commitLimitMs), commitLimitMs);
    try {
      // Also the tasks an earlier call is still ending (a consumer restart's, when a shutdown comes).
      await Promise.all(this.closing.values());
    } finally {
      clearTimeout(limit);
    }
  }

  /** The shutdown's commit limit passed: the commits still waiting for an answer fail, and every later one. */
  private abandonCommits(limitMs: number): void {
    const tasks = this.committer.abandon(new Error(`the offset commit got no answer within the shutdown's ${limitMs} ms`));
    if (tasks.length === 0) return;
    this.options.logger.warn(
      { tasks, limitMs },
      'offset commits got no answer in time: their tasks close without them (dirty close; what they processed since their last commit is processed again by the next owner)',
    );
  }

  /**
   * The tasks {@link closeAll} still waits for, as `<task id> (<state>[, waiting on <call> for N s])`
   * (see `TaskAwaits`): what a slow shutdown waits on.
   */
  unclosed(): string[] {
    const now = Date.now();
    return [...this.closing.keys()].map((r) => {
      const awaiting = r.task.awaits.describe(now);
      return `${r.task.id} (${r.task.currentState}${awaiting === undefined ? '' : `, waiting on ${awaiting}`})`;
    });
  }
}
