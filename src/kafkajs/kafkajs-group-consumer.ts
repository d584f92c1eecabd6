import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { rebalanceTimeoutMs, type GroupConsumer, type GroupConsumerHandlers, type GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { TopicPartition, TopicPartitionOffset } from '../record/record-types.js';
import { ClientMismatchError, IllegalStateError } from '../errors.js';
import { isInconsistentGroupProtocol } from '../kafka/join-refusals.js';
import { toInputRecord } from './kafkajs-messages.js';

/**
 * The worker's consumer group member over kafkajs: `eachBatch` with explicit offset
 * resolution and commits, never throwing into kafkajs. kafkajs only fetches here; each
 * partition's task runs its own loop, so a long backoff never blocks heartbeats. Records are
 * resolved (fetched past) when a task accepts them, and committed only by the task.
 * kafkajs restarts after a crash are off: the worker decides what to do. A join the broker
 * refused with `INCONSISTENT_GROUP_PROTOCOL` (the group's members run the other Kafka client)
 * ends kafkajs' consumer too: it is reported as a retriable `ClientMismatchError`.
 */
export class KafkajsGroupConsumer implements GroupConsumer {
  /** kafkajs rebalances eagerly: every member gives up every partition at each rebalance. */
  readonly protocol = 'eager' as const;
  private readonly consumer: Consumer;
  private readonly removers: Array<() => void> = [];
  /** The assignment of the latest join. */
  private assignment: readonly TopicPartition[] = [];
  /**
   * Set by {@link stop}: a consumer the worker gave up on while its join hung may finish that
   * join later and fetch; its batches must not reach the worker's tasks.
   */
  private stopped = false;
  /** kafkajs' `run`, which settles once the first join ended (it holds the join). */
  private running: Promise<void> | undefined;

  constructor(
    kafka: Kafka,
    private readonly options: GroupConsumerOptions,
    private readonly handlers: GroupConsumerHandlers,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      rebalanceTimeout: rebalanceTimeoutMs(options.sessionTimeoutMs),
      heartbeatInterval: options.heartbeatIntervalMs,
      readUncommitted: !options.readCommitted,
      maxBytesPerPartition: options.maxBytesPerPartition ?? 1_048_576,
      maxWaitTimeInMs: 250,
      allowAutoTopicCreation: false,
      retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => false },
    });
    if (options.groupInstanceId !== undefined) throw new IllegalStateError('kafkajs has no static membership (group.instance.id)');
    const { GROUP_JOIN, REBALANCING, CRASH, START_BATCH_PROCESS } = this.consumer.events;
    this.removers.push(
      // kafkajs has no revocation callback: this event says a rejoin is under way, and every
      // partition may move.
      this.consumer.on(REBALANCING, () => void handlers.onRevoked({ partitions: this.assignment, protocol: 'eager', lost: false })),
      this.consumer.on(GROUP_JOIN, (event) => {
        const assignment = Object.entries(event.payload.memberAssignment).flatMap(([topic, partitions]) =>
          (partitions as number[]).map((partition) => ({ topic, partition })),
        );
        this.assignment = assignment;
        handlers.onAssigned({ assignment, added: assignment, protocol: 'eager', memberId: event.payload.memberId });
      }),
      this.consumer.on(CRASH, (event) => handlers.onCrash(this.crashError(event.payload.error))),
      // kafkajs resolves batches emptied by filtering itself and never passes them to
      // eachBatch; this event is the only sign of them (its batchSize counts what is left).
      this.consumer.on(START_BATCH_PROCESS, ({ payload }) => {
        if (payload.batchSize === 0) handlers.onSkipped(payload.topic, payload.partition, Number(payload.lastOffset) + 1);
      }),
    );
  }

  /** What `onCrash` gets: a retriable `ClientMismatchError` for a join refused with `INCONSISTENT_GROUP_PROTOCOL`, else kafkajs' error. */
  private crashError(error: Error): unknown {
    return isInconsistentGroupProtocol(error)
      ? new ClientMismatchError(this.options.groupId, 'kafkajs', { cause: error, retriable: true })
      : error;
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    if (this.stopped) return;
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: true });
    if (this.stopped) return;
    this.running = this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.eachBatch(payload),
    });
    await this.running;
  }

  private async eachBatch({ batch, resolveOffset, isStale }: EachBatchPayload): Promise<void> {
    if (this.stopped || isStale() || batch.messages.length === 0) return;
    const records = batch.messages.map((m) => toInputRecord(batch.topic, batch.partition, m));
    const last = batch.messages[batch.messages.length - 1]!.offset;
    const nextOffset = Math.max(Number(batch.lastOffset()), Number(last)) + 1;
    if (this.handlers.onBatch(batch.topic, batch.partition, records, nextOffset)) resolveOffset(last);
  }

  pause(tp: TopicPartition): void {
    this.consumer.pause([{ topic: tp.topic, partitions: [tp.partition] }]);
  }

  resume(tp: TopicPartition): void {
    this.consumer.resume([{ topic: tp.topic, partitions: [tp.partition] }]);
  }

  seek(tp: TopicPartition, offset: number): void {
    this.consumer.seek({ topic: tp.topic, partition: tp.partition, offset: String(offset) });
  }

  /** Commits group offsets (next offset to read), with the member's generation. */
  async commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    await this.consumer.commitOffsets(offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })));
  }

  /**
   * Mutes the consumer and leaves the group. `abandoned`: a first join still under way is waited
   * for, since while it lasts kafkajs' `disconnect` finds no running consumer to stop and forgets
   * it, and the consumer would fetch and hold its partitions once the join ends (the worker bounds
   * its wait for a stuck consumer; this stop then ends in the background). A shutdown disconnects
   * at once: the process ends.
   */
  async stop(options?: { readonly abandoned?: boolean }): Promise<void> {
    this.stopped = true;
    for (const remove of this.removers.splice(0)) remove();
    if (options?.abandoned === true) await this.running?.catch(() => undefined);
    await this.consumer.disconnect();
  }
}
