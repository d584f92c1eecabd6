import { IllegalStateError } from '../errors.js';
import type { GroupConsumer, GroupConsumerHandlers, GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { TopicPartition, TopicPartitionOffset } from '../record/record-types.js';
import { AwaitedCommits } from './awaited-commits.js';
import { CommitCoalescer } from './commit-coalescer.js';
import { ConsumeLoop } from './consume-loop.js';
import { CooperativeRebalances, type MemberIdLookup } from './cooperative-rebalances.js';
import { FetchDispatcher } from './fetch-dispatcher.js';
import { GroupConsumerFailures } from './group-consumer-failures.js';
import { assertGroupConsumerTransition, type GroupConsumerState } from './group-consumer-state.js';
import { groupConsumerConfig } from './librdkafka-config.js';
import { call, type LibrdkafkaError, type NativeConsumer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';
import { PartitionFetches } from './partition-fetches.js';

/** How long `stop()` waits for librdkafka to leave the group and close, ms. */
const CLOSE_TIMEOUT_MS = 15_000;

/**
 * The worker's consumer-group member on librdkafka's `KafkaConsumer` (the binding's
 * node-rdkafka-style API, for its explicit control of assignment, seeks and EOF events):
 *
 * - cooperative-sticky assignment (KIP-429) with a rebalance callback
 *   ({@link CooperativeRebalances}): a revocation awaits `onRevoked` — its tasks finish, flush
 *   and commit through {@link commit} while the partitions are still assigned — before the
 *   partitions go;
 * - static membership (`group.instance.id`, KIP-345) when `groupInstanceId` is given;
 * - one fetch loop ({@link ConsumeLoop}): `consume` in batches, handed to `onBatch` per
 *   partition in offset order ({@link FetchDispatcher}); a refused batch is fetched again (a
 *   seek back); `onSkipped` when a partition's end (librdkafka's partition EOF event, past
 *   transaction markers and aborted records) lies beyond the last record handed over;
 * - offsets committed only by {@link commit} (auto commit off);
 * - a fatal error stops the loop and calls `onCrash` — with a `MemberFencedError` when a static
 *   member was fenced by a newer instance with the same `group.instance.id` (`FENCED_INSTANCE_ID`);
 *   so do joins the broker refused with `INCONSISTENT_GROUP_PROTOCOL` for a session timeout (the
 *   group's members run the other Kafka client), with a `ClientMismatchError` ({@link GroupConsumerFailures}).
 *
 * Its lifecycle is the table of {@link GroupConsumerState}: every change goes through `transition()`.
 */
export class LibrdkafkaGroupConsumer implements GroupConsumer {
  readonly protocol = 'cooperative' as const;
  private consumer: NativeConsumer | undefined;
  private removeProbe: (() => void) | undefined;
  private consumerState: GroupConsumerState = 'created';
  private loop: Promise<void> | undefined;
  /** The first `stop()`: later calls wait for it. */
  private leaving: Promise<void> | undefined;
  private readonly fetches = new PartitionFetches();
  private readonly dispatcher: FetchDispatcher;
  private readonly rebalances: CooperativeRebalances;
  /** What a fatal error or refused joins mean (`consume` fails with a bare `ERR__FATAL`; librdkafka logs its cause). */
  private readonly failures: GroupConsumerFailures;
  /** Commits that settle on the coordinator's answer (the fetch loop's `consume` calls serve them). */
  private awaitedCommits: AwaitedCommits | undefined;

  constructor(
    private readonly clients: NativeClients,
    private readonly options: GroupConsumerOptions,
    private readonly handlers: GroupConsumerHandlers,
    memberIdOf: MemberIdLookup,
  ) {
    this.dispatcher = new FetchDispatcher(
      this.fetches,
      handlers,
      (tp, pause) => this.pauseNatively(tp, pause),
      options.maxBufferedRecords ?? 2_000,
    );
    this.rebalances = new CooperativeRebalances({
      fetches: this.fetches,
      handlers,
      router: clients.router,
      memberIdOf: (assignment) => memberIdOf(options.groupId, clients.options.clientId, assignment),
      consumer: () => this.consumer,
      // `stopped` too: a revocation the close left behind (it timed out) finds the tasks closed as well.
      closing: () => this.consumerState === 'closing' || this.consumerState === 'stopped',
      joined: () => this.failures.joined(),
    });
    this.failures = new GroupConsumerFailures(options, clients.options.logger, clients.router);
  }

  /** Where the consumer stands (the table of {@link GroupConsumerState}). */
  get state(): GroupConsumerState {
    return this.consumerState;
  }

  /** The binding's consumer, for KIP-447 `sendOffsetsToTransaction` (its live group metadata). */
  native(): NativeConsumer {
    if (this.consumer === undefined || this.consumerState !== 'running')
      throw new IllegalStateError('the librdkafka group consumer is not running');
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
    if (consumer === undefined || this.consumerState !== 'running') return false;
    try {
      return consumer.assignmentLost();
    } catch {
      return false;
    }
  }

  /**
   * Connects, subscribes and starts the fetch loop: `created` → `connecting` → `running`.
   *
   * @throws the binding's error when the broker cannot be reached (then back to `created`)
   * @throws IllegalStateError when started before (a bug in the caller)
   */
  async start(): Promise<void> {
    this.transition('connecting');
    try {
      await this.connectAndSubscribe();
    } catch (error) {
      if (this.consumerState === 'connecting') this.transition('created');
      throw error;
    }
  }

  private async connectAndSubscribe(): Promise<void> {
    const consumer = this.clients.consumer({
      ...groupConsumerConfig(this.options),
      rebalance_cb: (err: LibrdkafkaError, partitions: TopicPartition[]) => this.rebalances.callback(err, partitions),
      offset_commit_cb: true,
    });
    const awaitedCommits = (this.awaitedCommits = new AwaitedCommits(consumer));
    consumer.on('event.log', (event) => this.failures.logged(event));
    this.removeProbe = await this.clients.connect(consumer);
    if (this.consumerState !== 'connecting') {
      // stop() came while it connected: it found no consumer to close, so this one is closed here.
      this.removeProbe();
      await call((cb) => consumer.disconnect(cb)).catch(() => undefined);
      return;
    }
    const loop = new ConsumeLoop(consumer, {
      fetches: this.fetches,
      dispatcher: this.dispatcher,
      router: this.clients.router,
      awaitedCommits,
      running: () => this.consumerState === 'running',
      failed: (error) => this.failures.consumeFailed(error, Date.now()),
      fatalSeen: () => this.failures.fatalSeen(),
      crash: (error) => this.crash(error),
    });
    consumer.subscribe([...this.options.topics]);
    this.consumer = consumer;
    this.transition('running');
    this.loop = loop.run();
  }

  /** The partition's task wants no more records for now: it is held ({@link FetchDispatcher.hold}). */
  pause(tp: TopicPartition): void {
    this.dispatcher.hold(tp);
  }

  /** The task takes records again ({@link FetchDispatcher.release}). */
  resume(tp: TopicPartition): void {
    this.dispatcher.release(tp);
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
   *
   * @throws IllegalStateError before the consumer connected
   */
  async commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    if (this.consumer === undefined) throw new IllegalStateError('the librdkafka group consumer is not started');
    await this.commits.commit(offsets);
  }

  private readonly commits = new CommitCoalescer(async (offsets) => {
    const awaited = this.awaitedCommits;
    if (awaited === undefined) throw new IllegalStateError('the librdkafka group consumer is not started');
    try {
      await awaited.commit(offsets);
    } catch (error) {
      // A fatal one ends the consumer at the fetch loop's next turn.
      this.failures.callFailed(error);
      throw error;
    }
    this.clients.router.heard();
  });

  /**
   * Ends the fetch loop and the rebalances under way, then leaves the group (unless static) and
   * closes, waiting up to {@link CLOSE_TIMEOUT_MS}: `stopping` → `closing` → `stopped`. Works in
   * every state; a second call waits for the first.
   *
   * @throws the binding's error when closing fails
   */
  stop(): Promise<void> {
    this.leaving ??= this.leave();
    return this.leaving;
  }

  private async leave(): Promise<void> {
    const consumer = this.consumer;
    this.transition('stopping');
    await this.loop;
    await this.rebalances.settled();
    this.removeProbe?.();
    if (consumer === undefined || !consumer.isConnected()) return this.transition('stopped');
    // Closing revokes the assignment once more (the rebalance callback unassigns it without
    // the handlers: the worker closed its tasks) and leaves the group, unless static.
    this.transition('closing');
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        call((cb) => consumer.disconnect(cb)),
        new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
      ]);
    } finally {
      clearTimeout(timer);
      this.transition('stopped');
    }
  }

  /** The one place the consumer's state changes, checked against the table of {@link GroupConsumerState}. */
  private transition(to: GroupConsumerState): void {
    assertGroupConsumerTransition(this.options.groupId, this.consumerState, to);
    this.consumerState = to;
  }

  /** The fetch loop ended on `error`, already in weir's terms ({@link GroupConsumerFailures}): `running` → `crashed`, then `onCrash`. */
  private async crash(error: unknown): Promise<void> {
    this.transition('crashed');
    this.handlers.onCrash(error);
  }

  /** Applies or lifts librdkafka's pause of a partition; false when it could not (the consumer is not running, or disconnected). */
  private pauseNatively(tp: TopicPartition, pause: boolean): boolean {
    const consumer = this.consumer;
    // Only while running: a pause or resume racing the binding's disconnect (the close revokes
    // the assignment, which releases held partitions) can crash the process
    // (confluent-kafka-javascript issue #34); after the loop ended nothing fetches anyway.
    if (consumer === undefined || this.consumerState !== 'running') return false;
    const list = [{ topic: tp.topic, partition: tp.partition }];
    try {
      if (pause) consumer.pause(list);
      else consumer.resume(list);
      return true;
    } catch (error) {
      // Disconnected (the consumer crashed or stops): nothing left to pause.
      this.clients.router.errorEvent(error as LibrdkafkaError);
      return false;
    }
  }
}
