import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { ClientMismatchError, GroupInstanceConflictError, IllegalStateError, MemberFencedError } from '../errors.js';
import type { AssignmentEvent, RevocationEvent } from '../kafka/group-consumer.js';
import { isRetriableKafkaError } from '../kafka/retriable-kafka-error.js';
import { taskId } from '../record/task-id.js';
import { consumedTopics } from '../topology/compiled-topology.js';
import type { AssignedTasks } from './assigned-tasks.js';
import { InstanceConflictGuard } from './instance-conflict-guard.js';
import { RebalanceWatchdog } from './rebalance-watchdog.js';
import { ConsumerRestart } from './consumer-restart.js';
import { memberIdentity, type MemberIdentity } from './member-identity.js';
import type { MemberConsumer } from './member-consumer.js';
import { WorkerHealth, type WorkerHealthSnapshot } from './worker-health.js';
import { WorkerMetrics } from '../observability/worker-metrics.js';
import type { WorkerOptions } from './worker-options.js';
import { WorkerParts } from './worker-parts.js';
import { ShutdownProgress } from './shutdown-progress.js';
import { assertWorkerTransition, type WorkerState } from './worker-state.js';

/** The shutdown step in which tasks finish the record in hand, flush and commit. */
const CLOSING_TASKS = 'tasks to commit and close';
/** The share of `--shutdown-timeout-ms` the tasks' group offset commits may take (then they close without them); the rest is for leaving the group and disconnecting. */
const COMMIT_SHARE = 2 / 3;

/**
 * A weir worker process: one member of the consumer group `application.id`. It creates one
 * task per assigned partition (sources and retry tiers), closes it when the partition is
 * revoked, and on shutdown lets every task finish the record in hand and commit before it
 * leaves the group. A crashed consumer is replaced; a fenced task is rebuilt while its
 * partition stays assigned. Its lifecycle is the state table of {@link WorkerState}; every
 * change goes through `transition()`.
 */
export class Worker {
  readonly metrics: WorkerMetrics;
  /** Liveness and readiness (`/healthz`, `/readyz`). */
  readonly health: WorkerHealth;
  private readonly logger: Logger;
  private readonly identity: MemberIdentity;
  private state: WorkerState = 'starting';
  /** Its clients, group membership, dedup stores and tasks, once created. */
  private readonly parts: WorkerParts;
  /** The member id of the current consumer's latest join. */
  private member: string | undefined;
  /** Static members only: tells a restart of this worker from a second worker with its id. */
  private readonly conflictGuard: InstanceConflictGuard | undefined;
  private settleDied: (error: unknown) => void = () => undefined;
  /**
   * Settles with the error when the worker gave up for good after its start (another worker
   * runs with its `group.instance.id`, or the group's members run the other Kafka client); it
   * has shut down by then. Never settles otherwise.
   */
  readonly died: Promise<unknown>;
  /** Replaces a crashed or fenced consumer. */
  private readonly restart: ConsumerRestart;
  /** Settles when the shutdown's tasks have finished, flushed and committed. */
  private tasksClosed: Promise<void> | undefined;
  /** Says what a slow shutdown waits for. */
  private readonly shutdownProgress: ShutdownProgress;
  /** Replaces a consumer that never rejoins after an eager rebalance began, or after it lost its partitions (librdkafka). */
  private readonly watchdog: RebalanceWatchdog;

  constructor(private readonly options: WorkerOptions) {
    this.logger = options.logger.child({ applicationId: options.topology.applicationId });
    this.metrics =
      options.metrics ??
      new WorkerMetrics({ application_id: options.topology.applicationId }, { recordingLevel: options.config.metricsRecordingLevel });
    this.health = new WorkerHealth(() => this.healthSnapshot(), options.config);
    this.identity = memberIdentity(options.topology.applicationId, options.config, options.thread);
    this.died = new Promise((resolve) => (this.settleDied = resolve));
    this.shutdownProgress = new ShutdownProgress(this.logger, (step) => (step === CLOSING_TASKS ? (this.tasks?.unclosed() ?? []) : []));
    this.parts = new WorkerParts({
      worker: options,
      identity: this.identity,
      logger: this.logger,
      metrics: this.metrics,
      health: this.health,
      handlers: {
        onRevoked: (event) => this.onRevoked(event),
        onAssigned: (event) => this.onAssigned(event),
        onCrash: (error) => this.onCrash(error),
      },
      onFenced: (error) => this.onCrash(error, true),
      // stop() may come while starting (SIGTERM during a slow join): then start no further.
      stillStarting: () => {
        if (this.state === 'stopping' || this.state === 'stopped')
          throw new IllegalStateError('the worker was stopped while it was starting');
      },
      active: () => this.state !== 'stopping' && this.state !== 'stopped',
    });
    this.conflictGuard =
      this.identity.groupInstanceId === undefined ? undefined : InstanceConflictGuard.forGroupTimings(Date.now(), options.config);
    this.watchdog = new RebalanceWatchdog(options.config.sessionTimeoutMs, (error) => this.onCrash(error));
    this.restart = new ConsumerRestart({
      tasks: () => this.tasks,
      membership: () => this.membership,
      sessionTimeoutMs: options.config.sessionTimeoutMs,
      logger: this.logger,
      shuttingDown: () => this.shuttingDown(),
    });
  }

  /** Ends the hold of {@link WorkerOptions.holdTasks}: the tasks of the current and later assignments start. */
  releaseTasks(): void {
    this.parts.releaseTasks();
  }

  /** The group member id of the current consumer (undefined before it joined). */
  get memberId(): string | undefined {
    return this.member;
  }

  private healthSnapshot(): WorkerHealthSnapshot {
    return {
      state: this.state,
      consumerRestarting: this.restart.underway,
      groupId: this.options.topology.applicationId,
      memberId: this.memberId,
      generation: this.tasks?.generation ?? 0,
      tasks: this.tasks?.views() ?? [],
    };
  }

  /** Current lifecycle state (see {@link WorkerState}). */
  get currentState(): WorkerState {
    return this.state;
  }

  /** The member's tasks, once the worker has its task factory. */
  private get tasks(): AssignedTasks | undefined {
    return this.parts.tasks;
  }

  /** The group membership: current consumer (replaced after a crash) and shared producer. */
  private get membership(): MemberConsumer | undefined {
    return this.parts.membership;
  }

  /**
   * Checks and creates topics, connects, and joins the group.
   *
   * @throws MissingSourceTopicError when a source topic does not exist
   * @throws BrokerUnreachableError when no Kafka broker answers (a retriable error after the
   *   first connection — a broker restarting, a topic not known yet — is retried; see
   *   {@link retryWhileRetriable})
   * @throws IllegalStateError when the worker was stopped while it was starting
   * @throws the client's or ioredis' error when a server fails otherwise
   */
  async start(): Promise<void> {
    await this.parts.open();
    const { topology } = this.options;
    this.logger.info({ guarantee: topology.processingGuarantee, topics: consumedTopics(topology), host: hostname() }, 'worker started');
  }

  private async onRevoked(event: RevocationEvent): Promise<void> {
    // Stopping: the partitions go once the shutdown's tasks have committed (cooperative: the
    // consumer gives them up when this settles), so their new owner does not replay them.
    if (this.state === 'stopping' || this.state === 'stopped') return this.tasksClosed;
    if (event.partitions.length === 0) return;
    this.metrics.countRebalance();
    if (event.protocol === 'eager') {
      // Every partition may move: tasks suspend until the new assignment.
      this.transition('rebalancing');
      this.logger.info({ tasks: this.tasks?.size ?? 0 }, 'group rebalancing: suspending tasks');
    } else {
      this.logger.info(
        { partitions: event.partitions.map(taskId), lost: event.lost },
        event.lost ? 'partitions lost: closing their tasks' : 'partitions revoked: their tasks commit and close',
      );
    }
    await this.tasks?.revoke(event);
    // librdkafka rejoins a member that lost its partitions by itself; one that never does is
    // replaced like a stalled rebalance (RebalanceWatchdog). Only while running: a crash during
    // the revoke began a consumer restart, which must not be cut short by this deadline.
    if (event.lost && this.state === 'running') this.watchdog.began('the member lost its partitions');
  }

  private onAssigned(event: AssignmentEvent): void {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.options.logContext?.joined(event.memberId);
    this.conflictGuard?.joined(Date.now());
    this.member = event.memberId;
    this.watchdog.ended();
    this.transition('running');
    this.tasks?.assign(event);
    this.metrics.setTasks(event.assignment.length);
    this.options.onJoined?.(event);
  }

  /**
   * The consumer gave up, or (`fenced`) the member's shared producer was fenced — a newer
   * producer took its transactional id, or the group moved on from its generation: either way
   * its tasks close and it rejoins with a new consumer (and producer).
   */
  private onCrash(error: unknown, fenced = false): void {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    // Live members of the other Kafka client hold the group: no rejoin can help (exit 2).
    if (error instanceof ClientMismatchError && !error.retriable) {
      this.fail(error);
      return;
    }
    // The consumer being started now gave up (kafkajs reports a failed join after its connect
    // as a crash): the restart under way starts another one.
    if (this.restart.underway) {
      this.restart.startFailed(error);
      return;
    }
    if (error instanceof MemberFencedError && this.conflictGuard?.fenced(Date.now()) === 'conflict') {
      this.fail(new GroupInstanceConflictError(error.groupInstanceId, { cause: error }));
      return;
    }
    this.transition('restarting-consumer');
    // A retriable cause (a coordinator still loading, a broker outage that outlasted kafkajs' retries) is routine.
    const routine = isRetriableKafkaError(error);
    this.logger[routine || fenced || error instanceof MemberFencedError ? 'warn' : 'error'](
      { err: error },
      error instanceof MemberFencedError
        ? 'another consumer took this group.instance.id; rejoining to take it back (that one stops if it just started)'
        : fenced
          ? "the member's transactional producer was fenced (zombie); closing tasks and rejoining the group"
          : 'kafka consumer stopped; closing tasks and rejoining the group',
    );
    this.member = undefined;
    this.restart.begin();
  }

  /** Whether a shutdown began (a method, so a check after an await is not narrowed away). */
  private shuttingDown(): boolean {
    return this.state === 'stopping' || this.state === 'stopped';
  }

  /**
   * Graceful shutdown: stop fetching, let every task finish the record in hand, flush and commit
   * (a group offset commit unanswered after two thirds of `shutdownTimeoutMs` fails: its task
   * closes dirty, see {@link AssignedTasks.closeAll}), leave the group and disconnect.
   * `StreamProcess` bounds the whole by `shutdownTimeoutMs`.
   */
  async stop(): Promise<void> {
    await this.shutdown('stop');
  }

  /** `'stop'`: tasks commit what they did; `'close'`: the member was fenced, so they cannot. */
  private async shutdown(mode: 'stop' | 'close'): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.transition('stopping');
    const progress = this.shutdownProgress;
    progress.begin();
    try {
      // A restart closed the tasks when it began, and its consumer owns nothing until its slow
      // join (a JoinGroup held; kafkajs disconnects once answered): stop it without waiting.
      const restarting = this.restart.underway;
      if (restarting) {
        this.restart.interrupt();
        void this.membership?.stop().catch(() => undefined);
      }
      progress.step(CLOSING_TASKS);
      this.tasksClosed = this.tasks?.closeAll(mode, this.options.config.shutdownTimeoutMs * COMMIT_SHARE) ?? Promise.resolve();
      await this.tasksClosed;
      await this.parts.close({ step: (what) => progress.step(what), leave: !restarting });
    } finally {
      progress.end();
    }
    this.transition('stopped');
    this.health.close();
    this.logger.info('worker stopped');
  }

  /** The worker gives up for good: it shuts down without a commit, and {@link died} settles with `error`. */
  private fail(error: unknown): void {
    this.logger.error({ err: error }, 'worker stopping: it cannot go on');
    void this.shutdown('close').then(() => this.settleDied(error));
  }

  /** The one place the worker's state changes, checked against the table of {@link WorkerState}. */
  private transition(to: WorkerState): void {
    if (this.state === to) return;
    assertWorkerTransition(this.state, to);
    this.logger.debug({ from: this.state, to }, 'worker state');
    this.state = to;
    if (to === 'rebalancing') this.watchdog.began();
    else this.watchdog.ended();
  }
}
