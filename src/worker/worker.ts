import type { Logger } from 'pino';
import { createKafka, type KafkaClient } from '../kafkajs/kafka-client.js';
import { KafkaAdminClient } from '../kafkajs/kafka-admin-client.js';
import { GroupConsumer } from '../kafkajs/group-consumer.js';
import type { TopicPartition } from '../record/record-types.js';
import { KafkajsRecordProducer } from '../kafkajs/kafkajs-record-producer.js';
import type { InputRecord, TopicPartitionOffset } from '../record/record-types.js';
import type { Clock } from '../runtime/ports.js';
import { consumedTopics, type CompiledTopology } from '../topology/compiled-topology.js';
import { createDedupStores, type DedupStores } from './dedup-stores.js';
import { ensureTopics } from './ensure-topics.js';
import { TaskFactory } from './task-factory.js';
import { combineTaskListeners, taskLogListener } from './task-log-listener.js';
import type { TaskRunner } from './task-runner.js';
import type { WorkerConfig } from './worker-config.js';
import { WorkerMetrics } from './worker-metrics.js';

const key = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`;

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  readonly topology: CompiledTopology;
  readonly config: WorkerConfig;
  readonly logger: Logger;
  readonly metrics?: WorkerMetrics;
  readonly clock?: Clock;
}

/**
 * A weir worker process: one member of the consumer group `application.id`. It creates one
 * task per assigned partition (sources and retry tiers), closes it when the partition is
 * revoked, and on shutdown lets every task finish the record in hand and commit before it
 * leaves the group. A crashed kafkajs consumer is replaced; a fenced task is rebuilt while
 * its partition stays assigned.
 */
export class Worker {
  readonly metrics: WorkerMetrics;
  private readonly logger: Logger;
  private readonly kafka: KafkaClient;
  private readonly admin: KafkaAdminClient;
  private producer: KafkajsRecordProducer | undefined;
  private dedupStores: DedupStores | undefined;
  private consumer: GroupConsumer | undefined;
  private factory: TaskFactory | undefined;
  private readonly runners = new Map<string, TaskRunner>();
  private readonly pending = new Map<string, number>();
  private assignment = new Set<string>();
  private generation = 0;
  private stopping = false;
  private restarting: Promise<void> | undefined;
  /** Commits through whichever consumer is current (it is replaced after a crash). */
  private readonly committer = {
    commit: async (offsets: readonly TopicPartitionOffset[]): Promise<void> => {
      if (this.consumer === undefined) throw new Error('no consumer');
      await this.consumer.commit(offsets);
    },
  };

  constructor(private readonly options: WorkerOptions) {
    const { topology, config } = options;
    this.logger = options.logger.child({ applicationId: topology.applicationId });
    this.metrics = options.metrics ?? new WorkerMetrics({ application_id: topology.applicationId });
    this.kafka = createKafka({ brokers: config.brokers, clientId: `weir-${topology.applicationId}`, logger: this.logger });
    this.admin = new KafkaAdminClient(this.kafka);
  }

  /**
   * Checks and creates topics, connects, and joins the group.
   *
   * @throws MissingSourceTopicError when a source topic does not exist
   * @throws the kafkajs or ioredis error when a server cannot be reached
   */
  async start(): Promise<void> {
    const { topology, config } = this.options;
    // stop() may come while starting (SIGTERM during a slow join): then start no further.
    const stillStarting = (): void => {
      if (this.stopping) throw new Error('the worker was stopped while it was starting');
    };
    await this.admin.connect().catch((error: unknown) => {
      throw new Error(`cannot reach Kafka at ${config.brokers.join(',')} (set --brokers or KAFKA_BROKERS): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    stillStarting();
    await ensureTopics(topology, this.admin, this.logger, config.topicPartitions);
    stillStarting();
    if (topology.processingGuarantee === 'at_least_once') {
      this.producer = new KafkajsRecordProducer(this.kafka);
      await this.producer.connect();
      stillStarting();
    }
    this.dedupStores = createDedupStores(topology, config, this.options.clock);
    this.factory = new TaskFactory({
      topology,
      kafka: this.kafka,
      admin: this.admin,
      producer: this.producer,
      dedupStores: this.dedupStores,
      config,
      logger: this.logger,
      listener: combineTaskListeners(this.metrics.listener(), taskLogListener(this.logger)),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
    });
    await this.startConsumer();
    stillStarting();
    this.logger.info({ guarantee: topology.processingGuarantee, topics: consumedTopics(topology) }, 'worker started');
  }

  private async startConsumer(): Promise<void> {
    const { topology, config } = this.options;
    const consumer = new GroupConsumer(
      this.kafka,
      {
        groupId: topology.applicationId,
        topics: consumedTopics(topology),
        sessionTimeoutMs: config.sessionTimeoutMs,
        heartbeatIntervalMs: config.heartbeatIntervalMs,
        readCommitted: topology.processingGuarantee === 'exactly_once',
      },
      {
        onBatch: (topic, partition, records, nextOffset) => this.onBatch({ topic, partition }, records, nextOffset),
        onRebalancing: () => this.onRebalancing(),
        onAssignment: (assignment) => this.onAssignment(assignment),
        onCrash: (error) => this.onCrash(error),
        onSkipped: (topic, partition, nextOffset) => {
          // kafkajs fetches from the offset the task accepted up to, so nothing lies between;
          // the task only ever moves its position forward.
          const runner = this.runners.get(key({ topic, partition }));
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
    const runner = this.runners.get(key(tp));
    if (runner === undefined) {
      this.consumer?.pause(tp);
      return false;
    }
    runner.task.enqueue(records, nextOffset);
    runner.notifyRecords();
    return true;
  }

  private onRebalancing(): void {
    this.metrics.rebalances.inc();
    this.logger.info({ tasks: this.runners.size }, 'group rebalancing: suspending tasks');
    // kafkajs has no revocation callback and rejoins right after this event: commit what is
    // already durable now, so partitions that move are not reprocessed from the last periodic
    // commit. If the commit loses the race with the rejoin, the new owner replays those records
    // (at_least_once allows it); the suspended tasks also flush and commit what they hold.
    const durable = [...this.runners.values()]
      .map((r) => ({ topic: r.task.topic, partition: r.task.partition, offset: r.task.durableOffset, committed: r.task.committedOffset }))
      .filter((o) => o.offset > o.committed)
      .map(({ topic, partition, offset }) => ({ topic, partition, offset }));
    if (durable.length > 0 && this.options.topology.processingGuarantee === 'at_least_once') {
      this.consumer?.commit(durable).catch((error: unknown) => this.logger.debug({ err: error }, 'commit at rebalance failed'));
    }
    for (const runner of this.runners.values()) runner.suspend();
  }

  private onAssignment(assignment: readonly TopicPartition[]): void {
    const generation = ++this.generation;
    this.assignment = new Set(assignment.map(key));
    this.logger.info({ generation, partitions: assignment.map(key) }, 'partitions assigned');
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
    const added = assignment.filter((tp) => !this.runners.has(key(tp)));
    for (const tp of added) this.consumer?.pause(tp);
    this.metrics.tasks.set(this.assignment.size);
    if (added.length > 0) void this.createTasks(added, generation);
  }

  private async createTasks(partitions: readonly TopicPartition[], generation: number): Promise<void> {
    for (const tp of partitions) this.pending.set(key(tp), generation);
    try {
      const created = await this.factory!.create(partitions, {
        isCurrent: (tp) => !this.stopping && this.pending.get(key(tp)) === generation && this.assignment.has(key(tp)),
        setPaused: (tp, paused) => (paused ? this.consumer?.pause(tp) : this.consumer?.resume(tp)),
        onClosed: (tp, state) => this.onTaskClosed(tp, state),
        committer: this.committer,
      });
      for (const { tp, runner, startOffset } of created) {
        this.pending.delete(key(tp));
        this.runners.set(key(tp), runner);
        this.consumer?.seek(tp, startOffset);
        this.consumer?.resume(tp);
        this.logger.info({ task: key(tp), startOffset }, 'task started');
      }
    } catch (error) {
      if (this.stopping) return;
      this.logger.error({ err: error, partitions: partitions.map(key) }, 'could not start tasks; retrying');
      setTimeout(() => {
        const still = partitions.filter((tp) => this.assignment.has(key(tp)) && !this.runners.has(key(tp)) && this.pending.get(key(tp)) === generation);
        if (still.length > 0 && !this.stopping) void this.createTasks(still, generation);
      }, 1_000);
    }
  }

  private onTaskClosed(tp: TopicPartition, state: 'closed' | 'fenced'): void {
    if (state !== 'fenced') return;
    this.logger.warn({ task: key(tp) }, 'task fenced by a newer producer (zombie); closing it');
    const runner = this.runners.get(key(tp));
    if (runner?.task.currentState === 'fenced') this.runners.delete(key(tp));
    if (this.stopping || !this.assignment.has(key(tp))) return;
    this.consumer?.pause(tp);
    const generation = this.generation;
    setTimeout(() => {
      if (!this.stopping && this.generation === generation && this.assignment.has(key(tp)) && !this.runners.has(key(tp))) void this.createTasks([tp], generation);
    }, 1_000);
  }

  private onCrash(error: unknown): void {
    if (this.stopping || this.restarting) return;
    // A retriable cause (e.g. a coordinator still loading on a fresh broker) is routine.
    const routine = typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;
    this.logger[routine ? 'warn' : 'error']({ err: error }, 'kafka consumer stopped; closing tasks and rejoining the group');
    this.restarting = (async () => {
      const runners = [...this.runners.values()];
      this.runners.clear();
      this.assignment.clear();
      await Promise.all(runners.map((r) => r.stop('close')));
      await this.consumer?.stop().catch(() => undefined);
      for (let attempt = 1; !this.stopping; attempt++) {
        try {
          await this.startConsumer();
          return;
        } catch (restartError) {
          this.logger.error({ err: restartError, attempt }, 'rejoining the group failed; retrying');
          await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * 2 ** attempt)));
        }
      }
    })().finally(() => {
      this.restarting = undefined;
    });
  }

  /**
   * Graceful shutdown: stop fetching, let every task finish the record in hand, flush and
   * commit, then leave the group and disconnect. Bound it with `shutdownTimeoutMs` (the CLI
   * does).
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.restarting;
    const runners = [...this.runners.values()];
    for (const runner of runners) this.consumer?.pause({ topic: runner.task.topic, partition: runner.task.partition });
    await Promise.all(runners.map((r) => r.stop('stop')));
    this.runners.clear();
    await this.consumer?.stop().catch((error: unknown) => this.logger.warn({ err: error }, 'leaving the group failed'));
    await this.factory?.close();
    await this.producer?.disconnect().catch(() => undefined);
    await this.dedupStores?.close();
    await this.admin.disconnect().catch(() => undefined);
    this.logger.info('worker stopped');
  }
}
