import type { Logger } from 'pino';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient, RecordProducerClient, TransactionalProducerClient } from '../kafka/kafka-client.js';
import type { TopicPartition } from '../record/record-types.js';
import { taskId, transactionalId } from '../record/task-id.js';
import { IllegalStateError } from '../errors.js';
import { PartitionTask, type TaskOutputPorts } from '../runtime/partition-task.js';
import type { Clock, OffsetCommitter } from '../runtime/ports.js';
import type { AttemptTracer } from '../runtime/attempt-tracer.js';
import type { TaskListener } from '../runtime/task-listener.js';
import type { ResilienceRegistry } from '../runtime/processor-resilience.js';
import { routeOf, type CompiledTopology } from '../topology/compiled-topology.js';
import type { SharedTransaction } from '../runtime/shared-transaction.js';
import type { DedupStores } from './dedup-stores.js';
import { TaskRunner } from './task-runner.js';
import { restoreParked } from './restore-parked.js';
import { ParkedStateError } from '../errors.js';
import type { WorkerConfig } from '../config/worker-config.js';

/** What the factory needs from the worker. */
export interface TaskFactoryOptions {
  readonly topology: CompiledTopology;
  readonly client: KafkaClient;
  readonly admin: KafkaAdmin;
  /** at_least_once: the shared idempotent producer. */
  readonly producer: RecordProducerClient | undefined;
  readonly dedupStores: DedupStores;
  readonly config: WorkerConfig;
  readonly logger: Logger;
  readonly listener: TaskListener;
  /** The processors' circuit breakers and retry budgets, shared by all tasks of the worker. */
  readonly resilience: ResilienceRegistry;
  /** Traces every attempt (OpenTelemetry: a no-op unless an SDK is registered). */
  readonly tracer?: AttemptTracer;
  readonly clock?: Clock;
  /**
   * exactly_once_v2 (a client with KIP-447): the member's one shared transaction, which every
   * task joins instead of having a producer of its own. Absent: one producer per task.
   */
  readonly sharedTransaction?: () => Promise<SharedTransaction>;
}

/** Callbacks of the tasks being created. */
export interface TaskHooks {
  /** Whether the partition is still assigned to this creation (else the task is dropped). */
  isCurrent(tp: TopicPartition): boolean;
  setPaused(tp: TopicPartition, paused: boolean): void;
  onClosed(tp: TopicPartition, state: 'closed' | 'fenced'): void;
  /** Commits group offsets (at_least_once). */
  readonly committer: OffsetCommitter;
}

const systemClock: Clock = { now: () => Date.now() };

/**
 * Builds the tasks of newly assigned partitions. Under exactly_once with one producer per task
 * (kafkajs), each task first initializes its transactional producer — fencing zombies and
 * completing their open transactions — and only then reads its committed offset, so it starts
 * after everything its predecessor committed (Kafka Streams' first EOS protocol). With a
 * client that has KIP-447 (librdkafka), every task joins the member's shared transaction
 * (exactly_once_v2): zombies are fenced by their group generation, and a start offset is read
 * only once it is stable (no transaction holding an offset for it is open).
 */
export class TaskFactory {
  private readonly producers = new Set<TransactionalProducerClient>();

  constructor(private readonly options: TaskFactoryOptions) {}

  /**
   * @returns the started runners and the offset each must be fetched from
   * @throws the kafkajs error when producers or offsets cannot be had (the caller retries)
   *   A task whose `order: 'key'` changelog cannot be read back (a `ParkedStateError`, logged
   *   here) is left out: its partition is not processed, and the caller tries it again. A task
   *   that restored parked records logs how many (info `restored the parked records of the task`).
   */
  async create(
    partitions: readonly TopicPartition[],
    hooks: TaskHooks,
  ): Promise<Array<{ tp: TopicPartition; runner: TaskRunner; startOffset: number }>> {
    const { topology, config } = this.options;
    const exactlyOnce = topology.processingGuarantee === 'exactly_once';
    const producers = new Map<TopicPartition, TransactionalProducerClient>();
    const shared = exactlyOnce && this.options.sharedTransaction !== undefined ? await this.options.sharedTransaction() : undefined;
    if (exactlyOnce && shared === undefined) {
      await Promise.all(
        partitions.map(async (tp) => {
          const producer = this.options.client.transactionalProducer({
            transactionalId: transactionalId(topology.applicationId, tp),
            transactionTimeoutMs: config.transactionTimeoutMs,
          });
          producers.set(tp, producer);
          await producer.init();
        }),
      ).catch(async (error: unknown) => {
        await Promise.all([...producers.values()].map((p) => p.disconnect().catch(() => undefined)));
        throw error;
      });
    }
    const startOffsets = await this.startOffsets(partitions, shared !== undefined);
    // `order: 'key'`: after the producers' init and the stable offsets, so no predecessor's
    // transaction can still add to a changelog partition.
    const parked = await restoreParked(topology, this.options.client, this.options.admin, partitions).catch(async (error: unknown) => {
      await Promise.all([...producers.values()].map((p) => p.disconnect().catch(() => undefined)));
      throw error;
    });
    const created: Array<{ tp: TopicPartition; runner: TaskRunner; startOffset: number }> = [];
    for (const tp of partitions) {
      const producer = producers.get(tp);
      if (!hooks.isCurrent(tp)) {
        await producer?.disconnect().catch(() => undefined);
        continue;
      }
      const startOffset = startOffsets.get(taskId(tp)) ?? 0;
      const output: TaskOutputPorts =
        shared !== undefined
          ? { guarantee: 'exactly_once', transactions: shared.participant(taskId(tp)), offsets: this.options.admin }
          : this.outputPorts(producer, hooks.committer);
      const processor = routeOf(topology, tp.topic)?.subtopology.processor.name;
      const dedupStore = processor === undefined ? undefined : this.options.dedupStores.forProcessor(processor);
      const parkedRecords = parked.get(taskId(tp));
      if (parkedRecords instanceof ParkedStateError) {
        // The task does not start (its partition is not processed); the caller tries again.
        this.options.logger.error(
          { err: parkedRecords, task: taskId(tp) },
          'cannot restore the parked records of the task; it does not start',
        );
        await producer?.disconnect().catch(() => undefined);
        continue;
      }
      if (parkedRecords !== undefined && parkedRecords.records > 0)
        this.options.logger.info(
          {
            task: taskId(tp),
            changelog: routeOf(topology, tp.topic)?.subtopology.parkedTopic,
            keys: parkedRecords.keys,
            records: parkedRecords.records,
          },
          'restored the parked records of the task',
        );
      const task = new PartitionTask({
        topology,
        topic: tp.topic,
        partition: tp.partition,
        startOffset,
        output,
        clock: this.options.clock ?? systemClock,
        listener: this.options.listener,
        maxRecordBytes: config.maxRecordBytes,
        // exactly_once: process on while the last interval's transaction commits.
        overlapCommits: true,
        ...(dedupStore ? { dedupStore } : {}),
        ...(parkedRecords ? { parked: parkedRecords } : {}),
        resilience: this.options.resilience,
        ...(this.options.tracer ? { tracer: this.options.tracer } : {}),
      });
      if (producer) this.producers.add(producer);
      const runner = new TaskRunner(task, {
        maxBufferedRecords: config.maxBufferedRecords,
        pauseAfterMs: Math.max(1_000, Math.floor(config.sessionTimeoutMs / 10)),
        setPaused: (paused) => hooks.setPaused(tp, paused),
        logger: this.options.logger,
        onClosed: (state) => {
          if (producer) {
            this.producers.delete(producer);
            void producer.disconnect().catch(() => undefined);
          }
          hooks.onClosed(tp, state);
        },
      });
      created.push({ tp, runner, startOffset });
    }
    return created;
  }

  /** A task's output ports: its transactional producer under exactly_once, else the worker's producer and committer. */
  private outputPorts(producer: TransactionalProducerClient | undefined, committer: OffsetCommitter): TaskOutputPorts {
    if (producer !== undefined) return { guarantee: 'exactly_once', transactions: producer, offsets: this.options.admin };
    if (this.options.producer === undefined) throw new IllegalStateError("an at_least_once task needs the worker's producer");
    return { guarantee: 'at_least_once', producer: this.options.producer, committer };
  }

  /** Committed offset of each partition (`stable`: once no transaction holds it), else its earliest offset. */
  private async startOffsets(partitions: readonly TopicPartition[], stable: boolean): Promise<Map<string, number>> {
    const { admin, topology } = this.options;
    const result = new Map<string, number>();
    for (const topic of new Set(partitions.map((tp) => tp.topic))) {
      const wanted = partitions.filter((tp) => tp.topic === topic);
      // Only these partitions: another partition's offsets may sit in the member's open transaction.
      // Under exactly_once_v2, stable ones only: a zombie's transaction still holding offsets of
      // them may yet commit (KIP-447; the member's own producer was initialized before, which
      // ended its predecessor's transaction).
      const committed = await admin.committedOffsets(
        topology.applicationId,
        topic,
        wanted.map((tp) => tp.partition),
        { requireStable: stable },
      );
      const earliest = wanted.some((tp) => !committed.has(tp.partition)) ? await admin.earliestOffsets(topic) : new Map<number, number>();
      for (const tp of wanted) result.set(taskId(tp), committed.get(tp.partition) ?? earliest.get(tp.partition) ?? 0);
    }
    return result;
  }

  /** Disconnects the transactional producers of tasks still open. */
  async close(): Promise<void> {
    await Promise.all([...this.producers].map((p) => p.disconnect().catch(() => undefined)));
    this.producers.clear();
  }
}
