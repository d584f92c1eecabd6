import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { BrokerUnreachableError, IllegalStateError } from '../errors.js';
import { CappedBackoff } from '../failure/capped-backoff.js';
import type { GroupConsumer } from '../kafka/group-consumer.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient, RecordProducerClient } from '../kafka/kafka-client.js';
import type { InputRecord, TopicPartition, TopicPartitionOffset } from '../record/record-types.js';
import { taskId } from '../record/task-id.js';
import type { Clock, OffsetCommitter } from '../runtime/ports.js';
import { ResilienceRegistry } from '../runtime/processor-resilience.js';
import { consumedTopics, routeOf, type CompiledTopology } from '../topology/compiled-topology.js';
import { createDedupStores, type DedupStores } from './dedup-stores.js';
import { ensureTopics } from './ensure-topics.js';
import type { LogContext } from './logger.js';
import { createKafkaClient } from './kafka-clients.js';
import { OtelAttemptTracer } from './otel-attempt-tracer.js';
import { TaskFactory } from './task-factory.js';
import { combineTaskListeners, taskLogListener } from './task-log-listener.js';
import type { TaskRunner } from './task-runner.js';
import type { WorkerConfig } from './worker-config.js';
import { WorkerHealth, type TaskHealth, type WorkerHealthSnapshot } from './worker-health.js';
import { WorkerMetrics } from './worker-metrics.js';
import { assertWorkerTransition, type WorkerState } from './worker-state.js';

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  readonly topology: CompiledTopology;
  readonly config: WorkerConfig;
  readonly logger: Logger;
  readonly metrics?: WorkerMetrics;
  readonly clock?: Clock;
  /** Where the worker puts the fields its log lines carry (the group member id once joined); see `createLogger`. */
  readonly logContext?: LogContext;
}

/** A task start that failed is tried again after this long, ms. */
const TASK_START_RETRY_MS = 1_000;

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
  private state: WorkerState = 'starting';
  private client: KafkaClient | undefined;
  private admin: KafkaAdmin | undefined;
  private producer: RecordProducerClient | undefined;
  private dedupStores: DedupStores | undefined;
  private consumer: GroupConsumer | undefined;
  private factory: TaskFactory | undefined;
  private readonly runners = new Map<string, TaskRunner>();
  /** The partitions assigned by the latest join, by task id. */
  private assignment = new Set<string>();
  private assigned: readonly TopicPartition[] = [];
  /** The member id of the current consumer's latest join. */
  private member: string | undefined;
  /** Counts joins; a task creation belongs to the join that asked for it. */
  private generation = 0;
  /** Tasks being created, by task id → the generation that asked for them. */
  private readonly pending = new Map<string, number>();
  /** The consumer restart under way, if any. */
  private restart: Promise<void> | undefined;
  /** Commits through whichever consumer is current (it is replaced after a crash). */
  private readonly committer: OffsetCommitter = {
    commit: async (offsets: readonly TopicPartitionOffset[]): Promise<void> => {
      if (this.consumer === undefined) throw new IllegalStateError('the worker has no consumer to commit with');
      await this.consumer.commit(offsets);
    },
  };

  constructor(private readonly options: WorkerOptions) {
    this.logger = options.logger.child({ applicationId: options.topology.applicationId });
    this.metrics = options.metrics ?? new WorkerMetrics({ application_id: options.topology.applicationId });
    this.health = new WorkerHealth(() => this.healthSnapshot(), options.config);
  }

  /** The group member id of the current consumer (undefined before it joined). */
  get memberId(): string | undefined {
    return this.member;
  }

  private healthSnapshot(): WorkerHealthSnapshot {
    return {
      state: this.state,
      consumerRestarting: this.restart !== undefined,
      groupId: this.options.topology.applicationId,
      memberId: this.memberId,
      generation: this.generation,
      tasks: this.taskViews(),
    };
  }

  /** Each assigned partition with its task's state and the next offset it will process (none while the task is created). */
  private taskViews(): Array<TaskHealth & { readonly position?: number }> {
    return this.assigned.map((tp) => {
      const id = taskId(tp);
      const task = this.runners.get(id)?.task;
      if (task === undefined) return { task: id, topic: tp.topic, partition: tp.partition, state: 'creating' };
      return { task: id, topic: tp.topic, partition: tp.partition, state: task.currentState, position: task.position - task.buffered };
    });
  }

  /** Current lifecycle state (see {@link WorkerState}). */
  get currentState(): WorkerState {
    return this.state;
  }

  /**
   * Checks and creates topics, connects, and joins the group.
   *
   * @throws MissingSourceTopicError when a source topic does not exist
   * @throws BrokerUnreachableError when no Kafka broker answers
   * @throws IllegalStateError when the worker was stopped while it was starting
   * @throws the client's or ioredis' error when a server fails otherwise
   */
  async start(): Promise<void> {
    const { topology, config } = this.options;
    // stop() may come while starting (SIGTERM during a slow join): then start no further.
    const stillStarting = (): void => {
      if (this.state === 'stopping' || this.state === 'stopped')
        throw new IllegalStateError('the worker was stopped while it was starting');
    };
    this.client = await createKafkaClient('kafkajs', {
      brokers: config.brokers,
      // Kafka's client.id of every connection: one per process, so `kafka-consumer-groups --describe` names the process.
      clientId: `weir-${topology.applicationId}-${hostname()}-${process.pid}`,
      logger: this.logger,
    });
    const admin = this.client.admin();
    this.admin = admin;
    await admin.connect().catch((error: unknown) => {
      throw new BrokerUnreachableError(config.brokers, { cause: error });
    });
    stillStarting();
    await ensureTopics(topology, admin, this.logger, config.topicPartitions);
    stillStarting();
    if (topology.processingGuarantee === 'at_least_once') {
      this.producer = this.client.recordProducer();
      await this.producer.connect();
      stillStarting();
    }
    this.dedupStores = createDedupStores(topology, config, this.options.clock);
    const listener = combineTaskListeners(this.metrics.listener(), taskLogListener(this.logger), this.health.listener());
    // One circuit breaker and retry budget per processor for the whole worker process.
    const resilience = new ResilienceRegistry(topology, (t) => listener.onCircuitTransition?.(t));
    this.metrics.watchResilience(resilience, () => (this.options.clock ?? Date).now());
    this.metrics.watchTasks({
      tasks: () => this.taskViews(),
      endOffsets: async (topics) => new Map(await Promise.all(topics.map(async (t) => [t, await admin.latestOffsets(t)] as const))),
      isRetryTier: (topic) => (routeOf(topology, topic)?.tier ?? null) !== null,
    });
    this.factory = new TaskFactory({
      topology,
      client: this.client,
      admin,
      producer: this.producer,
      dedupStores: this.dedupStores,
      config,
      logger: this.logger,
      listener,
      resilience,
      tracer: new OtelAttemptTracer(),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
    });
    await this.startConsumer();
    stillStarting();
    this.logger.info({ guarantee: topology.processingGuarantee, topics: consumedTopics(topology), host: hostname() }, 'worker started');
  }

  private async startConsumer(): Promise<void> {
    const { topology, config } = this.options;
    if (this.client === undefined) throw new IllegalStateError('the worker has no Kafka client');
    const consumer = this.client.groupConsumer(
      {
        groupId: topology.applicationId,
        topics: consumedTopics(topology),
        sessionTimeoutMs: config.sessionTimeoutMs,
        heartbeatIntervalMs: config.heartbeatIntervalMs,
        // Under both guarantees (unlike Kafka Streams' at_least_once): aborted records are never inputs.
        readCommitted: true,
      },
      {
        onBatch: (topic, partition, records, nextOffset) => this.onBatch({ topic, partition }, records, nextOffset),
        onRebalancing: () => this.onRebalancing(),
        onAssignment: (assignment, memberId) => this.onAssignment(assignment, memberId),
        onCrash: (error) => this.onCrash(error),
        onSkipped: (topic, partition, nextOffset) => {
          // The consumer fetches from the offset the task accepted up to, so nothing lies
          // between; the task only ever moves its position forward.
          const runner = this.runners.get(taskId({ topic, partition }));
          runner?.task.enqueue([], nextOffset);
          runner?.notifyRecords();
        },
      },
    );
    this.consumer = consumer;
    this.logger.info({ groupId: topology.applicationId }, 'joining the consumer group');
    await consumer.start();
  }

  private onBatch(tp: TopicPartition, records: InputRecord[], nextOffset: number): boolean {
    const runner = this.runners.get(taskId(tp));
    if (runner === undefined) {
      this.consumer?.pause(tp);
      return false;
    }
    runner.task.enqueue(records, nextOffset);
    runner.notifyRecords();
    return true;
  }

  private onRebalancing(): void {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.transition('rebalancing');
    this.metrics.rebalances.inc();
    this.logger.info({ tasks: this.runners.size }, 'group rebalancing: suspending tasks');
    // kafkajs has no revocation callback and rejoins right after this event: commit what is
    // already durable now, so partitions that move are not reprocessed from the last periodic
    // commit. If the commit loses the race with the rejoin, the new owner replays those records
    // (at_least_once allows it); the suspended tasks also flush and commit what they hold.
    const durable = [...this.runners.values()]
      .filter((r) => r.task.durableOffset > r.task.committedOffset)
      .map((r) => ({ topic: r.task.topic, partition: r.task.partition, offset: r.task.durableOffset }));
    if (durable.length > 0 && this.options.topology.processingGuarantee === 'at_least_once') {
      this.consumer?.commit(durable).catch((error: unknown) => this.logger.debug({ err: error }, 'commit at rebalance failed'));
    }
    for (const runner of this.runners.values()) runner.suspend();
  }

  private onAssignment(assignment: readonly TopicPartition[], memberId: string): void {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.options.logContext?.joined(memberId);
    this.member = memberId;
    this.transition('running');
    const generation = ++this.generation;
    this.assignment = new Set(assignment.map(taskId));
    this.assigned = assignment;
    this.logger.info({ generation, partitions: [...this.assignment] }, 'partitions assigned');
    for (const [id, runner] of this.runners) {
      if (this.assignment.has(id)) {
        this.consumer?.seek({ topic: runner.task.topic, partition: runner.task.partition }, runner.task.position);
        runner.resume();
      } else {
        this.runners.delete(id);
        void runner.stop('close');
        this.logger.info({ task: id }, 'partition revoked: task closed');
      }
    }
    const added = assignment.filter((tp) => !this.runners.has(taskId(tp)));
    for (const tp of added) this.consumer?.pause(tp);
    this.metrics.tasks.set(this.assignment.size);
    if (added.length > 0) void this.createTasks(added, generation);
  }

  /** Whether a task for `tp` asked for by `generation` is still wanted. */
  private wanted(tp: TopicPartition, generation: number): boolean {
    const id = taskId(tp);
    return this.state !== 'stopping' && this.state !== 'stopped' && this.pending.get(id) === generation && this.assignment.has(id);
  }

  private async createTasks(partitions: readonly TopicPartition[], generation: number): Promise<void> {
    const factory = this.factory;
    if (factory === undefined) throw new IllegalStateError('the worker has no task factory');
    for (const tp of partitions) this.pending.set(taskId(tp), generation);
    try {
      const created = await factory.create(partitions, {
        isCurrent: (tp) => this.wanted(tp, generation),
        setPaused: (tp, paused) => (paused ? this.consumer?.pause(tp) : this.consumer?.resume(tp)),
        onClosed: (tp, state) => this.onTaskClosed(tp, state),
        committer: this.committer,
      });
      for (const { tp, runner, startOffset } of created) {
        this.pending.delete(taskId(tp));
        this.runners.set(taskId(tp), runner);
        this.consumer?.seek(tp, startOffset);
        this.consumer?.resume(tp);
        this.logger.info({ task: taskId(tp), startOffset }, 'task started');
      }
    } catch (error) {
      if (this.state === 'stopping' || this.state === 'stopped') return;
      this.logger.error({ err: error, partitions: partitions.map(taskId) }, 'could not start tasks; retrying');
      setTimeout(() => {
        const still = partitions.filter((tp) => this.wanted(tp, generation) && !this.runners.has(taskId(tp)));
        if (still.length > 0) void this.createTasks(still, generation);
      }, TASK_START_RETRY_MS);
    }
  }

  private onTaskClosed(tp: TopicPartition, state: 'closed' | 'fenced'): void {
    if (state !== 'fenced') return;
    const id = taskId(tp);
    this.logger.warn({ task: id }, 'task fenced by a newer producer (zombie); closing it');
    if (this.runners.get(id)?.task.currentState === 'fenced') this.runners.delete(id);
    if (this.state === 'stopping' || this.state === 'stopped' || !this.assignment.has(id)) return;
    this.consumer?.pause(tp);
    const generation = this.generation;
    setTimeout(() => {
      if (this.generation !== generation || this.runners.has(id) || !this.assignment.has(id)) return;
      void this.createTasks([tp], generation);
    }, TASK_START_RETRY_MS);
  }

  private onCrash(error: unknown): void {
    if (this.state === 'stopping' || this.state === 'stopped' || this.state === 'restarting-consumer') return;
    this.transition('restarting-consumer');
    // A retriable cause (e.g. a coordinator still loading on a fresh broker) is routine.
    const routine = typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;
    this.logger[routine ? 'warn' : 'error']({ err: error }, 'kafka consumer stopped; closing tasks and rejoining the group');
    this.restart = this.restartConsumer().finally(() => {
      this.restart = undefined;
    });
  }

  private async restartConsumer(): Promise<void> {
    const runners = [...this.runners.values()];
    this.runners.clear();
    this.assignment.clear();
    this.assigned = [];
    this.member = undefined;
    await Promise.all(runners.map((r) => r.stop('close')));
    await this.consumer?.stop().catch(() => undefined);
    const backoff = new CappedBackoff(1_000, 10_000);
    while (this.state !== 'stopping' && this.state !== 'stopped') {
      try {
        await this.startConsumer();
        return;
      } catch (restartError) {
        this.logger.error({ err: restartError, attempt: backoff.failures + 1 }, 'rejoining the group failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, backoff.next()));
      }
    }
  }

  /**
   * Graceful shutdown: stop fetching, let every task finish the record in hand, flush and
   * commit, then leave the group and disconnect. Bound it with `shutdownTimeoutMs` (the CLI
   * does).
   */
  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.transition('stopping');
    await this.restart;
    const runners = [...this.runners.values()];
    for (const runner of runners) this.consumer?.pause({ topic: runner.task.topic, partition: runner.task.partition });
    await Promise.all(runners.map((r) => r.stop('stop')));
    this.runners.clear();
    await this.consumer?.stop().catch((error: unknown) => this.logger.warn({ err: error }, 'leaving the group failed'));
    await this.factory?.close();
    await this.producer?.disconnect().catch(() => undefined);
    await this.dedupStores?.close();
    await this.admin?.disconnect().catch(() => undefined);
    this.assigned = [];
    this.transition('stopped');
    this.health.close();
    this.logger.info('worker stopped');
  }

  /** The one place the worker's state changes, checked against the table of {@link WorkerState}. */
  private transition(to: WorkerState): void {
    if (this.state === to) return;
    assertWorkerTransition(this.state, to);
    this.logger.debug({ from: this.state, to }, 'worker state');
    this.state = to;
  }
}
