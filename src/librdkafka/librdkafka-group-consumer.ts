import { IllegalStateError } from '../errors.js';
import type { GroupConsumer, GroupConsumerHandlers, GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { TopicPartition, TopicPartitionOffset } from '../record/record-types.js';
import { AwaitedCommits } from './awaited-commits.js';
import { CommitCoalescer } from './commit-coalescer.js';
import { groupConsumerConfig } from './librdkafka-config.js';
import { ERR } from './librdkafka-errors.js';
import { GroupConsumerFailures } from './group-consumer-failures.js';
import {
  call,
  type LibrdkafkaError,
  type NativeConsumer,
  type NativeMessage,
  type NativeTopicPartitionOffset,
} from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';
import { FetchDispatcher } from './fetch-dispatcher.js';
import { PartitionFetches, type PartitionFetch } from './partition-fetches.js';

/**
 * Most records one `consume` call returns: about what librdkafka prefetched, so a fetched batch
 * reaches its task whole (as kafkajs hands over a whole fetch). Pausing a partition makes
 * librdkafka drop what it prefetched for it, to fetch it again on resume; smaller calls left
 * more behind (1 000: 21 k records/s in bench/run.ts at 100 B, 5 000: 30 k).
 */
const CONSUME_BATCH = 5_000;
/** How long one `consume` call waits for a first record, ms (also the longest a seek or a stop waits for the loop). */
const CONSUME_WAIT_MS = 100;
/** How long `seek` lets librdkafka apply a seek, ms. */
const SEEK_TIMEOUT_MS = 5_000;
/** How long `stop()` waits for librdkafka to leave the group and close, ms. */
const CLOSE_TIMEOUT_MS = 15_000;

/** Finds the member id the group coordinator gave a consumer (librdkafka's binding does not expose it). */
export type MemberIdLookup = (groupId: string, clientId: string, assigned: readonly TopicPartition[]) => Promise<string | undefined>;

/**
 * The worker's consumer-group member on librdkafka's `KafkaConsumer` (the binding's
 * node-rdkafka-style API, for its explicit control of assignment, seeks and EOF events):
 *
 * - cooperative-sticky assignment (KIP-429) with a rebalance callback: on revocation it awaits
 *   `onRevoked` — its tasks finish, flush and commit through {@link commit} while the partitions
 *   are still assigned — before `incrementalUnassign`; on assignment it calls `onAssigned` with
 *   the whole assignment and what was added;
 * - static membership (`group.instance.id`, KIP-345) when `groupInstanceId` is given;
 * - one fetch loop: `consume` in batches, handed to `onBatch` per partition in offset order;
 *   a refused batch is fetched again (a seek back); seeks run between `consume` calls, so no
 *   record fetched before a seek is ever handed over after it; `onSkipped` when a partition's
 *   end (librdkafka's partition EOF event, past transaction markers and aborted records) lies
 *   beyond the last record handed over;
 * - offsets committed only by {@link commit} (auto commit off);
 * - a fatal error stops the loop and calls `onCrash` — with a `MemberFencedError` when a static
 *   member was fenced by a newer instance with the same `group.instance.id` (`FENCED_INSTANCE_ID`);
 *   so do joins the broker refused with `INCONSISTENT_GROUP_PROTOCOL` for a session timeout (the
 *   group's members run the other Kafka client), with a `ClientMismatchError` ({@link GroupConsumerFailures}).
 */
export class LibrdkafkaGroupConsumer implements GroupConsumer {
  readonly protocol = 'cooperative' as const;
  private consumer: NativeConsumer | undefined;
  private removeProbe: (() => void) | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly fetches = new PartitionFetches();
  private readonly dispatcher: FetchDispatcher;
  /** Rebalance callbacks run one after the other. */
  private rebalances: Promise<void> = Promise.resolve();
  private closing = false;
  /** stop() was called (perhaps while start() connected). */
  private stopped = false;
  private memberId: string | undefined;
  /** What a fatal error or refused joins mean (`consume` fails with a bare `ERR__FATAL`; librdkafka logs its cause). */
  private readonly failures: GroupConsumerFailures;
  /** Commits that settle on the coordinator's answer (the fetch loop's `consume` calls serve them). */
  private awaitedCommits: AwaitedCommits | undefined;
  /** Partition EOF events of the `consume` call in hand. */
  private eofs: NativeTopicPartitionOffset[] = [];

  constructor(
    private readonly clients: NativeClients,
    private readonly options: GroupConsumerOptions,
    private readonly handlers: GroupConsumerHandlers,
    private readonly memberIdOf: MemberIdLookup,
  ) {
    this.dispatcher = new FetchDispatcher(
      this.fetches,
      handlers,
      (fetch, pause) => this.pauseNatively(fetch, pause),
      options.maxBufferedRecords ?? 2_000,
    );
    this.failures = new GroupConsumerFailures(options, clients.options.logger, clients.router);
  }

  /** The binding's consumer, for KIP-447 `sendOffsetsToTransaction` (its live group metadata). */
  native(): NativeConsumer {
    if (this.consumer === undefined || !this.running) throw new IllegalStateError('the librdkafka group consumer is not running');
    return this.consumer;
  }

  /**
   * Whether librdkafka considers the member's assignment lost (its session timed out, or the
   * coordinator no longer knows it) and has not assigned partitions since. librdkafka resets
   * the member's generation to -1 then, and the group coordinator accepts transactional offsets
   * of generation -1 without checking membership: offsets must not be sent for such a member.
   */
  assignmentLost(): boolean {
    const consumer = this.consumer;
    if (consumer === undefined || !this.running) return false;
    try {
      return consumer.assignmentLost();
    } catch {
      return false;
    }
  }

  /** @throws the binding's error when the broker cannot be reached */
  async start(): Promise<void> {
    const consumer = this.clients.consumer({
      ...groupConsumerConfig(this.options),
      rebalance_cb: (err: LibrdkafkaError, partitions: TopicPartition[]) => this.rebalance(err, partitions),
      offset_commit_cb: true,
    });
    this.awaitedCommits = new AwaitedCommits(consumer);
    consumer.on('partition.eof', (eof) => this.eofs.push(eof));
    consumer.on('event.log', (event) => this.failures.logged(event));
    this.removeProbe = await this.clients.connect(consumer);
    if (this.stopped) {
      // stop() came while it connected: it found no consumer to close, so this one is closed here.
      this.removeProbe();
      await call((cb) => consumer.disconnect(cb)).catch(() => undefined);
      return;
    }
    consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
    consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
    consumer.subscribe([...this.options.topics]);
    this.consumer = consumer;
    this.running = true;
    this.loop = this.fetchLoop(consumer);
  }

  /** The partition's task wants no more records for now: it is held ({@link FetchDispatcher.hold}). */
  pause(tp: TopicPartition): void {
    this.dispatcher.hold(tp);
  }

  /** The task takes records again ({@link FetchDispatcher.release}). */
  resume(tp: TopicPartition): void {
    this.dispatcher.release(tp);
  }

  private pauseNatively(fetch: PartitionFetch, pause: boolean): void {
    const consumer = this.consumer;
    if (consumer === undefined) return;
    const list = [{ topic: fetch.topic, partition: fetch.partition }];
    try {
      if (pause) consumer.pause(list);
      else consumer.resume(list);
      fetch.nativelyPaused = pause;
    } catch (error) {
      // Disconnected (the consumer crashed or stops): nothing left to pause.
      this.clients.router.errorEvent(error as LibrdkafkaError);
    }
  }

  /** The next record handed over from `tp` is at `offset` or after it (the seek runs before the next `consume`). */
  seek(tp: TopicPartition, offset: number): void {
    this.fetches.requestSeek(tp, offset);
  }

  /**
   * Commits group offsets (next offset to read) with the member's generation, and settles when
   * the group coordinator answered ({@link AwaitedCommits}); works inside `onRevoked` (the fetch
   * loop keeps polling, which serves the answer). One commit is in flight at a time; commits
   * asked for meanwhile go together in the next ({@link CommitCoalescer}).
   */
  async commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    if (this.consumer === undefined) throw new IllegalStateError('the librdkafka group consumer is not started');
    await this.commits.commit(offsets);
  }

  private readonly commits = new CommitCoalescer(async (offsets) => {
    const awaited = this.awaitedCommits;
    if (awaited === undefined) throw new IllegalStateError('the librdkafka group consumer is not started');
    await awaited.commit(offsets);
    this.clients.router.heard();
  });

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.stopped = true;
    this.running = false;
    await this.loop;
    await this.rebalances;
    this.removeProbe?.();
    if (consumer === undefined || !consumer.isConnected()) return;
    // Closing revokes the assignment once more (the rebalance callback unassigns it without
    // the handlers: the worker closed its tasks) and leaves the group, unless static.
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      call((cb) => consumer.disconnect(cb)),
      new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
    ]).finally(() => clearTimeout(timer));
  }

  /** The fetch loop, and when it ends: commits waiting for an answer it would have served fail. */
  private async fetchLoop(consumer: NativeConsumer): Promise<void> {
    try {
      await this.fetchUntilStopped(consumer);
    } finally {
      this.awaitedCommits?.abandon(new IllegalStateError('the librdkafka group consumer stopped fetching: its commits get no answer'));
    }
  }

  private async fetchUntilStopped(consumer: NativeConsumer): Promise<void> {
    while (this.running) {
      await this.applySeeks(consumer);
      let messages: NativeMessage[];
      this.eofs = [];
      try {
        messages = await call<NativeMessage[]>((cb) => consumer.consume(CONSUME_BATCH, cb));
      } catch (error) {
        if (!this.running) return;
        const crash = await this.failures.consumeFailed(error, Date.now());
        if (crash !== undefined) {
          this.running = false;
          this.handlers.onCrash(crash.error);
          return;
        }
        // An error librdkafka retries itself (e.g. a broker connection lost): the loop goes on
        // after a short pause rather than spinning on the same error.
        await new Promise((resolve) => setTimeout(resolve, CONSUME_WAIT_MS));
        continue;
      }
      if (messages.length > 0) this.clients.router.heard();
      this.dispatcher.dispatch(messages, this.eofs);
    }
  }

  /** Applies the requested seeks, one partition at a time, while no `consume` call is in flight. */
  private async applySeeks(consumer: NativeConsumer): Promise<void> {
    for (const [fetch, offset] of this.fetches.seeks()) {
      try {
        await call((cb) => consumer.seek({ topic: fetch.topic, partition: fetch.partition, offset }, SEEK_TIMEOUT_MS, cb));
        // A newer seek may have come meanwhile: it runs on the next turn.
        if (fetch.seekTo === offset) fetch.seekTo = undefined;
        fetch.next = offset;
      } catch (error) {
        // Still requested: tried again on the next turn (a partition still being set up answers ERR__STATE).
        if ((error as LibrdkafkaError).code !== ERR.STATE) this.clients.router.errorEvent(error as LibrdkafkaError);
      }
    }
  }

  /** librdkafka's rebalance callback (cooperative): assignments and revocations, one at a time. */
  private rebalance(err: LibrdkafkaError, partitions: TopicPartition[]): void {
    const consumer = this.consumer;
    if (consumer === undefined) return;
    const tps = partitions.map((p) => ({ topic: p.topic, partition: p.partition }));
    let step: () => Promise<void>;
    if (err?.code === ERR.ASSIGN_PARTITIONS) step = () => this.assigned(consumer, tps);
    else if (err?.code === ERR.REVOKE_PARTITIONS) {
      const lost = consumer.assignmentLost();
      step = () => this.revoked(consumer, tps, lost);
    } else return this.clients.router.errorEvent(err);
    this.rebalances = this.rebalances.then(step).catch((error: unknown) => this.clients.router.errorEvent(error as LibrdkafkaError));
  }

  private async assigned(consumer: NativeConsumer, added: TopicPartition[]): Promise<void> {
    this.failures.joined();
    consumer.incrementalAssign(added);
    for (const tp of added) this.fetches.add(tp);
    if (this.closing) return;
    const assignment = this.fetches.partitions();
    this.memberId ??= await this.memberIdOf(this.options.groupId, this.clients.options.clientId, assignment).catch(() => undefined);
    this.handlers.onAssigned({ assignment, added, protocol: 'cooperative', memberId: this.memberId ?? '' });
  }

  private async revoked(consumer: NativeConsumer, partitions: TopicPartition[], lost: boolean): Promise<void> {
    for (const tp of partitions) this.fetches.markRevoking(tp);
    try {
      if (!this.closing) await this.handlers.onRevoked({ partitions, protocol: 'cooperative', lost });
    } finally {
      for (const tp of partitions) this.fetches.remove(tp);
      // A member that lost its partitions may have lost its member id too.
      if (lost) this.memberId = undefined;
      try {
        consumer.incrementalUnassign(partitions);
      } catch (error) {
        this.clients.router.errorEvent(error as LibrdkafkaError);
      }
    }
  }
}
