import type { Logger } from 'pino';
import { ClientMismatchError, IllegalStateError } from '../errors.js';
import type { GroupConsumer, GroupConsumerHandlers } from '../kafka/group-consumer.js';
import { JoinRefusals } from '../kafka/join-refusals.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import type { TopicPartition, TopicPartitionOffset } from '../record/record-types.js';
import type { Clock, OffsetCommitter } from '../runtime/ports.js';
import type { SharedTransaction } from '../runtime/shared-transaction.js';
import { consumedTopics, type CompiledTopology } from '../topology/compiled-topology.js';
import type { TaskFetcher } from './assigned-tasks.js';
import type { MemberIdentity } from './member-identity.js';
import { MemberTransaction } from './member-transaction.js';
import { withinTimeout } from '../failure/within-timeout.js';
import type { WorkerConfig } from '../config/worker-config.js';
import { runAfter } from '../runtime/run-after.js';

/**
 * How often a member that has no assignment yet says it is still joining its group, ms. A
 * member that stopped without leaving (a crash, a shutdown that timed out) keeps its partitions
 * until its session timeout, and the group's next rebalance waits for it: without this, the new
 * member's log says nothing for that long.
 */
export const JOIN_PROGRESS_INTERVAL_MS = 10_000;

/** What a {@link MemberConsumer} is built from. */
export interface MemberConsumerOptions {
  readonly client: KafkaClient;
  readonly topology: CompiledTopology;
  readonly config: WorkerConfig;
  readonly identity: MemberIdentity;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The worker's side of the group: batches, revocations, assignments, crashes. */
  readonly handlers: GroupConsumerHandlers;
  /** The member's shared producer was fenced (exactly_once_v2): the worker rejoins. */
  readonly onFenced: (error: unknown) => void;
}

/**
 * A worker's membership of its consumer group: the current group consumer — replaced after a
 * crash — and, under exactly_once on a client with KIP-447, the one transactional producer
 * bound to it ({@link MemberTransaction}). Tasks fetch and commit through it, whichever
 * consumer is current.
 *
 * It also keeps count, across consumers, of joins the broker refused because the group's members
 * run the other Kafka client (a retriable `ClientMismatchError` from a client whose consumer
 * stops at each refusal: kafkajs): once the refusals lasted a session timeout with no join
 * between, the worker gets the final, non-retriable one, and stops (exit 2).
 */
export class MemberConsumer implements TaskFetcher, OffsetCommitter {
  private consumer: GroupConsumer | undefined;
  private transaction: MemberTransaction | undefined;
  private readonly refusals: JoinRefusals;
  /** Ends the "still joining" lines of the current consumer (its first assignment or a stop does). */
  private endJoinProgress: (() => void) | undefined;

  constructor(private readonly options: MemberConsumerOptions) {
    this.refusals = new JoinRefusals(options.topology.applicationId, options.client.name, options.config.sessionTimeoutMs);
  }

  /**
   * exactly_once with a client that has KIP-447 (librdkafka): one transactional producer for the
   * member, shared by its tasks (Kafka Streams' `exactly_once_v2`); kafkajs: one per task.
   */
  get sharesTransactions(): boolean {
    const { topology, client } = this.options;
    return topology.processingGuarantee === 'exactly_once' && client.features.groupMetadataInTransactions;
  }

  /** The current consumer's shared transaction. @throws IllegalStateError without one; the client's error when its producer cannot be initialized */
  sharedTransaction(): Promise<SharedTransaction> {
    if (this.transaction === undefined) return Promise.reject(new IllegalStateError('the worker has no consumer to transact with'));
    return this.transaction.get();
  }

  /** Builds a consumer (and its shared producer) and joins the group. @throws the client's error when the broker cannot be reached */
  async start(): Promise<void> {
    const { client, topology, config, identity, handlers, logger } = this.options;
    // A consumer the worker gave up on (stuck in its join) may still report a join, a batch or
    // a crash later: only the current one reaches the worker.
    const made: { consumer?: GroupConsumer } = {};
    const current = (): boolean => made.consumer !== undefined && this.consumer === made.consumer;
    const consumer = (made.consumer = client.groupConsumer(
      {
        groupId: topology.applicationId,
        topics: consumedTopics(topology),
        sessionTimeoutMs: config.sessionTimeoutMs,
        heartbeatIntervalMs: config.heartbeatIntervalMs,
        // Under both guarantees (unlike Kafka Streams' at_least_once): aborted records are never inputs.
        readCommitted: true,
        maxBufferedRecords: config.maxBufferedRecords,
        ...(identity.groupInstanceId !== undefined ? { groupInstanceId: identity.groupInstanceId } : {}),
      },
      {
        onBatch: (topic, partition, records, nextOffset) => current() && handlers.onBatch(topic, partition, records, nextOffset),
        onSkipped: (topic, partition, nextOffset) => {
          if (current()) handlers.onSkipped(topic, partition, nextOffset);
        },
        onRevoked: (event) => (current() ? handlers.onRevoked(event) : Promise.resolve()),
        onAssigned: (event) => {
          if (!current()) return;
          this.endJoinProgress?.();
          this.refusals.joined();
          handlers.onAssigned(event);
        },
        onCrash: (error) => {
          if (current()) handlers.onCrash(this.judged(error));
        },
      },
    ));
    this.consumer = consumer;
    if (this.sharesTransactions) {
      this.transaction = new MemberTransaction({
        client,
        consumer,
        transactionalId: identity.transactionalId,
        transactionTimeoutMs: config.transactionTimeoutMs,
        commitIntervalMs: topology.commitIntervalMs,
        clock: this.options.clock,
        onFenced: this.options.onFenced,
      });
    }
    logger.info({ groupId: topology.applicationId }, 'joining the consumer group');
    this.reportJoinProgress();
    try {
      await consumer.start();
    } catch (error) {
      // It will not join: no "still joining" for it while the worker backs off.
      if (this.consumer === consumer) this.endJoinProgress?.();
      throw error;
    }
  }

  /** Logs every {@link JOIN_PROGRESS_INTERVAL_MS} until the current consumer's first assignment. */
  private reportJoinProgress(): void {
    const { logger, topology, config, clock } = this.options;
    this.endJoinProgress?.();
    const since = clock.now();
    let cancel = (): void => undefined;
    const next = (): void => {
      cancel = runAfter(
        clock,
        JOIN_PROGRESS_INTERVAL_MS,
        () => {
          logger.info(
            { groupId: topology.applicationId, waitedMs: clock.now() - since, sessionTimeoutMs: config.sessionTimeoutMs },
            'still joining the consumer group, no assignment yet (a member that stopped without leaving the group keeps its partitions until its session timeout)',
          );
          next();
        },
        { unref: true },
      );
    };
    next();
    this.endJoinProgress = () => {
      cancel();
      this.endJoinProgress = undefined;
    };
  }

  /** A crash as the worker hears it: a refused join counts toward the session timeout ({@link JoinRefusals}). */
  private judged(error: unknown): unknown {
    if (!(error instanceof ClientMismatchError) || !error.retriable) return error;
    return this.refusals.refused(this.options.clock.now(), error.cause);
  }

  /**
   * Closes the shared producer and leaves the group (best effort when the consumer crashed);
   * `abandoned`: see `GroupConsumer.stop` ({@link stopWithin} passes it).
   * Stops the consumer and producer current at the call: a `start` while a slow stop is under
   * way (the worker bounds the wait for a stuck consumer) gets its own, which this leaves alone.
   */
  async stop(options?: { readonly abandoned?: boolean }): Promise<void> {
    const { transaction, consumer } = this;
    this.endJoinProgress?.();
    await transaction?.close();
    if (this.transaction === transaction) this.transaction = undefined;
    await consumer?.stop(options);
  }

  /**
   * Flow control of a task's partition. A consumer that stopped (it crashed, and the worker is
   * replacing it) refuses these calls — kafkajs throws "Consumer group was not initialized" —
   * and has nothing to pause any more: the worker closes its tasks and the next consumer's tasks
   * start paused and seek afresh. So a refusal is logged at debug and goes no further (it was
   * thrown into a task's loop and ended the process during a broker outage).
   */
  pause(tp: TopicPartition): void {
    this.flowControl('pause', tp, (c) => c.pause(tp));
  }

  resume(tp: TopicPartition): void {
    this.flowControl('resume', tp, (c) => c.resume(tp));
  }

  seek(tp: TopicPartition, offset: number): void {
    this.flowControl('seek', tp, (c) => c.seek(tp, offset));
  }

  /**
   * {@link start}, waiting for it at most `ms`: false when it has not finished by then (a kafkajs
   * consumer's start includes its first join, which can hang); it goes on in the background, and
   * a failure after the bound is ignored ({@link stop} it).
   *
   * @throws what {@link start} throws, when it fails within `ms`
   */
  async startWithin(ms: number): Promise<boolean> {
    return (await withinTimeout(this.start(), ms, { unref: true })) === 'done';
  }

  /**
   * {@link stop} (as `abandoned`), waiting for it at most `ms`: what is left finishes in the
   * background. Never throws (the consumer being replaced may have crashed).
   */
  async stopWithin(ms: number): Promise<void> {
    const stopped = this.stop({ abandoned: true }).catch(() => undefined);
    // Given up on: whatever it still reports no longer reaches the worker.
    this.consumer = undefined;
    await withinTimeout(stopped, ms, { unref: true });
  }

  private flowControl(call: 'pause' | 'resume' | 'seek', tp: TopicPartition, action: (consumer: GroupConsumer) => void): void {
    const consumer = this.consumer;
    if (consumer === undefined) return;
    try {
      action(consumer);
    } catch (error) {
      this.options.logger.debug(
        { err: error, topic: tp.topic, partition: tp.partition },
        `consumer ${call} refused (the consumer stopped)`,
      );
    }
  }

  /** Commits through whichever consumer is current. @throws IllegalStateError without one; the client's error */
  async commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    if (this.consumer === undefined) throw new IllegalStateError('the worker has no consumer to commit with');
    await this.consumer.commit(offsets);
  }
}
