import { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import type { TopologyBuilder } from '../dsl/topology-builder.js';
import { taskId } from '../record/task-id.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';
import type { DriverHistory } from './driver-history.js';
import { HistoryRecorder } from './driver-history.js';
import { DriverTask } from './driver-task.js';
import { FaultInjector, type PollAction } from './fault-injector.js';
import type { FaultPoint, FaultSchedule } from './fault-schedule.js';
import { InMemoryKafka } from './in-memory-kafka.js';
import { InputPipe } from './input-pipe.js';
import { ManualClock } from './manual-clock.js';
import { seededRandom } from './seeded-random.js';
import { toDeadLetter, toTestOutput, type DeadLetter, type PipedInput, type TestInput, type TestOutput } from './test-records.js';
import { TopicCatalog } from './topic-catalog.js';
import { TaskScheduler, type DriverTaskStatus } from './task-scheduler.js';
import type { TopologyTestDriverOptions } from './topology-test-driver-options.js';
import { topologyUnderTest } from './topology-under-test.js';
import { ResilienceRegistry } from '../runtime/processor-resilience.js';

/**
 * Kafka Streams' TopologyTestDriver for weir, with retry timing and faults: runs a topology
 * through the same PartitionTask code the worker runs, on an in-memory Kafka
 * ({@link InMemoryKafka}), an in-memory dedup store and a virtual clock ({@link ManualClock}).
 * There is one task per partition of every source and retry-tier topic, driven as the worker's
 * TaskRunner drives it. Time moves only through `advanceTime()` and `drain()`, which fire every
 * due wake-up in order — a one-hour backoff schedule runs in milliseconds.
 *
 * Under exactly_once, outputs become visible (read_committed) when their transaction commits,
 * once per commit interval: advance time by `commitIntervalMs` or `drain()` before reading.
 *
 * Circuit breakers, retry budgets and attempt timeouts (`timeoutMs`) run on the ManualClock,
 * one breaker and budget per processor for the whole driver (see `resilience`): an attempt
 * that has not settled when nothing else can run times out at once, virtual time moved by
 * `timeoutMs`.
 *
 * @example
 * const driver = new TopologyTestDriver(topology('app').source('in').process('p', fn).branch({ success: 'out' }));
 * await driver.pipeInput('in', [{ key: 'k1', value: { n: 1 } }]);
 * await driver.drain();
 * driver.readOutput('out'); // [{ key: 'k1', value: …, … }]
 */
export class TopologyTestDriver {
  /** The compiled topology under test (with the overrides applied). */
  readonly topology: CompiledTopology;
  /** The virtual clock; the driver moves it (`advanceTime`, `drain`). */
  readonly clock: ManualClock;
  /** The in-memory broker. Read it freely; the driver owns its `faultHook`. */
  readonly kafka: InMemoryKafka;
  /** The dedup store every task shares; it outlives task restarts, as Redis does. */
  readonly dedupStore: MemoryDedupStore;
  /** The topology's topics: role (source, retry tier, sink, DLQ), serdes, partitions. */
  readonly catalog: TopicCatalog;
  /** The processors' circuit breakers and retry budgets, on the driver's clock (one set per driver, as per worker process). */
  readonly resilience: ResilienceRegistry;
  private readonly recorder: HistoryRecorder;
  private readonly injector: FaultInjector;
  private readonly scheduler: TaskScheduler;
  private readonly input: InputPipe;

  /**
   * @param topology what a topology file default-exports (a builder), or a compiled topology
   * @throws TopologyError when the topology does not compile; RangeError for bad options or
   *   faults; TypeError when `topology` is neither
   */
  constructor(topology: TopologyBuilder | CompiledTopology, options: TopologyTestDriverOptions = {}) {
    this.topology = topologyUnderTest(topology, options.overrides);
    this.clock = options.clock ?? new ManualClock();
    this.kafka = new InMemoryKafka(this.clock);
    this.dedupStore = options.dedupStore ?? new MemoryDedupStore(this.clock);
    this.catalog = new TopicCatalog(this.topology, options.partitions);
    for (const t of this.catalog.all()) this.kafka.createTopic(t.topic, t.partitions);
    this.input = new InputPipe(this.kafka, this.catalog, this.clock);
    this.recorder = new HistoryRecorder(this.clock);
    this.resilience = new ResilienceRegistry(this.topology, (t) => this.recorder.circuitTransitions.push(t));
    this.injector = new FaultInjector(
      this.topology.processingGuarantee,
      () => this.scheduler.activeTask(),
      () => this.clock.now(),
      () => this.scheduler.polls,
    );
    this.kafka.faultHook = this.injector.hook;
    const ctx = {
      topology: this.topology,
      kafka: this.kafka,
      clock: this.clock,
      random: options.random ?? seededRandom(options.seed ?? 1),
      dedupStore: this.dedupStore,
      maxPollRecords: options.maxPollRecords,
      maxBufferedRecords: options.maxBufferedRecords ?? 2_000,
      resilience: this.resilience,
      listener: (name: string) => this.recorder.listener(name),
    };
    const tasks = new Map<string, DriverTask>();
    for (const info of this.catalog.all()) {
      if (info.role !== 'source' && info.role !== 'retry-tier') continue;
      for (let p = 0; p < info.partitions; p++) tasks.set(taskId({ topic: info.topic, partition: p }), new DriverTask(ctx, info.topic, p));
    }
    this.scheduler = new TaskScheduler(
      tasks,
      this.clock,
      this.recorder,
      (poll) => this.injector.takeActions(poll),
      (action) => this.apply(action),
      this.topology.subtopologies.some((sub) => sub.processor.timeoutMs !== null),
    );
    if (options.faults) this.injector.schedule(options.faults);
  }

  /** The driver's time, epoch ms. */
  now(): number {
    return this.clock.now();
  }

  /** Every record piped in so far, in pipe order (index = input id). */
  get inputs(): readonly PipedInput[] {
    return this.input.inputs;
  }

  /** What happened so far: record outcomes per task incarnation, flushes, port errors, restarts, faults. */
  get history(): DriverHistory {
    return this.recorder.snapshot(this.injector.fired);
  }

  /**
   * Writes records to a source (or retry-tier) topic, stamped with {@link TEST_INPUT_HEADER},
   * then runs every task as far as it goes without time passing.
   *
   * @returns where each record landed
   * @throws Error when the topic is not consumed by the topology, a partition does not exist,
   *   or a key or value cannot be serialized (naming the record)
   */
  async pipeInput<K, V>(topic: string, records: TestInput<K, V> | readonly TestInput<K, V>[]): Promise<PipedInput<K, V>[]> {
    const piped = await this.input.write(topic, records);
    await this.scheduler.run();
    return piped;
  }

  /**
   * Moves the clock forward by `ms`, stopping at every task wake-up (backoff, due time, commit
   * interval, port retry) on the way, in time order, and running the tasks there.
   *
   * @throws RangeError for a negative or non-finite `ms`
   */
  async advanceTime(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advanceTime: ms must be a finite number ≥ 0 (got ${ms})`);
    await this.scheduler.advanceTo(this.clock.now() + ms);
  }

  /**
   * Advances time from wake-up to wake-up until every task is idle: all records decided,
   * every retry done, everything committed.
   *
   * @param options.maxMs most virtual time to advance (default 30 days)
   * @throws Error listing the tasks still waiting when they do not settle within `maxMs`
   *   (e.g. the dedup store stays down under `onStoreError: 'fail'`)
   */
  async drain(options: { readonly maxMs?: number } = {}): Promise<void> {
    const maxMs = options.maxMs ?? 30 * 24 * 3_600_000;
    await this.scheduler.drain(this.clock.now() + maxMs, `${maxMs} ms`);
  }

  /** Whether every task is idle (nothing buffered, waiting or uncommitted). */
  isSettled(): boolean {
    return this.scheduler.isSettled();
  }

  /** The tasks and what each waits for. */
  taskStatus(): DriverTaskStatus[] {
    return this.scheduler.status();
  }

  /**
   * The records of a topic of the topology, deserialized with the topic's serdes.
   *
   * @param options.isolation `read_committed` (default: what a downstream consumer sees) or `read_uncommitted`
   * @throws Error naming the topic when the topology does not know it
   */
  readOutput<K = unknown, V = unknown>(
    topic: string,
    options: { readonly isolation?: 'read_committed' | 'read_uncommitted' } = {},
  ): TestOutput<K, V>[] {
    const info = this.catalog.require(topic, ['sink', 'dead-letter', 'retry-tier', 'source'], 'readOutput');
    return this.kafka.readAll(topic, options.isolation ?? 'read_committed').map((r) => toTestOutput(r, info.serdes) as TestOutput<K, V>);
  }

  /**
   * Every dead-letter record (read_committed), of every processor or of one, with its weir
   * headers decoded.
   */
  deadLetters<K = unknown, V = unknown>(
    options: { readonly processor?: string; readonly isolation?: 'read_committed' | 'read_uncommitted' } = {},
  ): DeadLetter<K, V>[] {
    return this.catalog
      .withRole('dead-letter')
      .filter((t) => options.processor === undefined || t.step.processor.name === options.processor)
      .flatMap((t) =>
        this.kafka.readAll(t.topic, options.isolation ?? 'read_committed').map((r) => toDeadLetter(r, t.serdes) as DeadLetter<K, V>),
      );
  }

  /** The group's committed offset (next offset to read) of a partition, or undefined when none. */
  committedOffset(topic: string, partition: number): number | undefined {
    return this.kafka.committedOffset(this.topology.applicationId, topic, partition);
  }

  /** Adds faults (see {@link FaultSchedule}); `nth` counts from now. */
  schedule(faults: FaultSchedule): void {
    this.injector.schedule(faults);
  }

  /** The `nth` time from now that any task reaches `point`, it dies there and restarts from committed state. */
  crashAt(point: FaultPoint, nth = 1): void {
    this.injector.schedule([{ kind: 'crash', point, nth }]);
  }

  /**
   * exactly_once: the `nth` time from now that any task reaches `point`, it freezes there; its
   * partition moves to a new task, and once the tasks are idle the frozen one resumes as a
   * zombie (it must be fenced).
   */
  stallAt(point: FaultPoint, nth = 1): void {
    this.injector.schedule([{ kind: 'stall', point, nth }]);
  }

  /** The `nth` time from now that any task reaches `point`, the broker operation fails once. */
  failAt(point: FaultPoint, nth = 1): void {
    this.injector.schedule([{ kind: 'broker-error', point, nth }]);
  }

  /** exactly_once: the `nth` transaction from now fails before its commit and is aborted. */
  abortTransaction(nth = 1): void {
    this.injector.schedule([{ kind: 'abort-transaction', nth }]);
  }

  /** Faults scheduled that have not struck yet. */
  get pendingFaults(): number {
    return this.injector.pending;
  }

  /**
   * A rebalance: the partitions (all, or those of `topic`/`partition`) move to new tasks. The
   * old task closes without committing (its uncommitted work is redone), or after a commit
   * when `graceful` (the worker's suspend on a cooperative rebalance); the new one starts
   * from the committed offset. Then the tasks run.
   */
  async rebalance(options: { readonly topic?: string; readonly partition?: number; readonly graceful?: boolean } = {}): Promise<void> {
    await this.scheduler.moveTasks(
      options.graceful === true,
      (t) =>
        (options.topic === undefined || t.topic === options.topic) &&
        (options.partition === undefined || t.partition === options.partition),
    );
    await this.scheduler.run();
  }

  /** Takes the dedup store down (every call fails, as an unreachable Redis) or brings it back. */
  setDedupStoreDown(down: boolean): void {
    this.dedupStore.down = down;
  }

  /** Shuts every task down as the worker does on SIGTERM: finish, flush, commit. */
  async close(): Promise<void> {
    await this.scheduler.close();
  }

  private async apply(action: PollAction): Promise<void> {
    if (action.kind === 'dedup-store') this.dedupStore.down = action.down;
    else await this.scheduler.moveTasks(action.graceful, () => true);
  }
}
