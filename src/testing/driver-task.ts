import type { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import type { Random } from '../failure/backoff.js';
import { PartitionTask, type TaskOutputPorts } from '../runtime/partition-task.js';
import { wakesOnRecords, type PollResult, type WaitReason } from '../runtime/poll-result.js';
import type { TaskListener } from '../runtime/task-listener.js';
import { routeOf, type CompiledTopology } from '../topology/compiled-topology.js';
import { ParkedRecords } from '../runtime/parked-records.js';
import { readParkedChangelog } from '../runtime/parked-changelog.js';
import type { InMemoryKafka } from './in-memory-kafka.js';
import type { ManualClock } from './manual-clock.js';
import { taskId, transactionalId } from '../record/task-id.js';
import type { ResilienceRegistry } from '../runtime/processor-resilience.js';

/** What the driver does with a task next, from its last {@link PollResult} (as the worker's TaskRunner). */
export type NextStep =
  | { readonly kind: 'poll' }
  | { readonly kind: 'idle' }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly reason: WaitReason }
  | { readonly kind: 'closed'; readonly state: 'closed' | 'fenced' };

/** What every task of a driver shares. */
export interface DriverTaskContext {
  readonly topology: CompiledTopology;
  readonly kafka: InMemoryKafka;
  readonly clock: ManualClock;
  readonly random: Random;
  readonly dedupStore: MemoryDedupStore;
  readonly maxPollRecords: number | undefined;
  readonly maxBufferedRecords: number;
  /** The processors' circuit breakers and retry budgets, shared by every task (as in one worker process). */
  readonly resilience: ResilienceRegistry;
  /** The listener of one task incarnation (`<topic>-<partition>#<n>`). */
  listener(name: string): TaskListener;
}

/**
 * One partition (source or retry tier) in the TopologyTestDriver and its current task. A new
 * incarnation starts as the worker's TaskFactory starts a task: under exactly_once it first
 * creates the transactional producer (`<application.id>-<topic>-<partition>`, fencing every
 * earlier one and aborting its open transaction), then reads the group's committed offset.
 */
export class DriverTask {
  /** `<topic>-<partition>`. */
  readonly id: string;
  incarnation = 0;
  task!: PartitionTask;
  next: NextStep = { kind: 'poll' };

  constructor(
    private readonly ctx: DriverTaskContext,
    readonly topic: string,
    readonly partition: number,
  ) {
    this.id = taskId({ topic, partition });
    this.start();
  }

  /** `<topic>-<partition>#<incarnation>`. */
  get name(): string {
    return `${this.id}#${this.incarnation}`;
  }

  /** Starts a new incarnation from the committed state; the old task object is dropped. */
  start(): void {
    const { topology, kafka, clock } = this.ctx;
    this.incarnation++;
    const appId = topology.applicationId;
    const output: TaskOutputPorts =
      topology.processingGuarantee === 'exactly_once'
        ? {
            guarantee: 'exactly_once',
            transactions: kafka.transactionalProducer(transactionalId(appId, { topic: this.topic, partition: this.partition })),
            offsets: kafka.offsetReader(),
          }
        : { guarantee: 'at_least_once', producer: kafka.producer(), committer: kafka.committer(appId) };
    const parked = this.parkedRecords();
    this.task = new PartitionTask({
      topology,
      topic: this.topic,
      partition: this.partition,
      ...(parked ? { parked } : {}),
      startOffset: kafka.committedOffset(appId, this.topic, this.partition) ?? 0,
      output,
      clock,
      random: this.ctx.random,
      dedupStore: this.ctx.dedupStore,
      listener: this.ctx.listener(this.name),
      ...(this.ctx.maxPollRecords !== undefined ? { maxPollRecords: this.ctx.maxPollRecords } : {}),
      resilience: this.ctx.resilience,
    });
    this.next = { kind: 'poll' };
  }

  /**
   * An `order: 'key'` source task's parked records, rebuilt from its partition of the changelog
   * (read_committed, after its producer fenced any zombie), as the worker's TaskFactory does.
   *
   * @throws ParkedStateError when a changelog record cannot be read back
   */
  private parkedRecords(): ParkedRecords | undefined {
    const route = routeOf(this.ctx.topology, this.topic);
    const changelog = route?.tier === null ? route.subtopology.parkedTopic : null;
    if (changelog === null || changelog === undefined) return undefined;
    const { records } = this.ctx.kafka.read(changelog, this.partition, 0, Infinity, 'read_committed');
    return ParkedRecords.rebuild(readParkedChangelog(records));
  }

  /**
   * Fetches what the partition has past the task's position (read_committed under
   * exactly_once), up to the buffer limit, as the worker's consumer does.
   *
   * @returns whether new records were buffered
   */
  fetch(): boolean {
    if (this.next.kind === 'closed') return false;
    const room = this.ctx.maxBufferedRecords - this.task.buffered;
    if (room <= 0) return false;
    // As the worker: read_committed under both guarantees.
    const { records, nextOffset } = this.ctx.kafka.read(this.topic, this.partition, this.task.position, room, 'read_committed');
    if (records.length === 0 && nextOffset <= this.task.position) return false;
    return this.task.enqueue(records, nextOffset) > 0;
  }

  /** Whether the worker's TaskRunner would poll now: asked to, records arrived, or its wait is over. */
  runnable(fresh: boolean): boolean {
    const next = this.next;
    switch (next.kind) {
      case 'poll':
        return true;
      case 'idle':
        return fresh;
      case 'wait':
        return this.ctx.clock.now() >= next.untilMs || (wakesOnRecords(next.reason) && fresh);
      case 'closed':
        return false;
    }
  }

  /** Records the result of a poll. */
  settle(result: PollResult): void {
    this.next = result.kind === 'yield' ? { kind: 'poll' } : result;
  }
}
