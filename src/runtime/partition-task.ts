import { WEIR_HEADERS, headerNumber } from '../record/weir-headers.js';
import { IllegalStateError } from '../errors.js';
import { taskId } from '../record/task-id.js';
import { DEFAULT_MAX_RECORD_BYTES } from '../record/record-size.js';
import type { InputRecord } from '../record/record-types.js';
import { routeOf, type DedupPolicy, type RetryTier, type Subtopology } from '../topology/compiled-topology.js';
import { DedupGate } from './dedup-gate.js';
import type { PollResult, WaitReason } from './poll-result.js';
import { TaskBuffer, type Slot } from './task-buffer.js';
import { resilienceOfSteps } from './processor-resilience.js';
import { ChainRunner } from './chain-runner.js';
import { subtopologyView, type SubtopologyView } from './subtopology-view.js';
import { assertTransition, type TaskState, type TaskStateKind } from './task-state.js';
import { TaskEvents } from './task-events.js';
import type { PartitionTaskOptions } from './partition-task-options.js';
import { PortRetry } from './port-retry.js';
import { TaskFlusher } from './task-flusher.js';
import { OrderedRetries } from './ordered-retries.js';
import { TaskAwaits } from './task-awaits.js';
export type { PartitionTaskOptions, TaskOutputPorts } from './partition-task-options.js';

/**
 * One task per input partition (source or retry tier), as in Kafka Streams: takes the
 * partition's records strictly in offset order, runs the processor, routes each outcome,
 * writes the outputs and commits — per the topology's `processing.guarantee` — and never
 * commits past a record whose outcome is not durable.
 *
 * The task is pure given its ports and clock: it never sleeps or sets timers. Its driver (the
 * worker's task runner, or the TopologyTestDriver) feeds records with `enqueue()` and calls
 * `poll()` as its {@link PollResult} asks. One `poll()` at a time. Its lifecycle is the state
 * table of {@link TaskState}; every change goes through `transition()`.
 */
export class PartitionTask {
  /** `<topic>-<partition>` (see `taskId`). */
  readonly id: string;
  readonly topic: string;
  readonly partition: number;
  private readonly sub: Subtopology;
  /** The sub-topology's per-record fields, as plain objects. */
  private readonly view: SubtopologyView;
  /** `commit.interval.ms`. */
  private readonly commitIntervalMs: number;
  private readonly tier: RetryTier | null;
  private readonly dedup: DedupGate | undefined;
  private readonly events: TaskEvents;
  /** The processor's dedup policy on a source task; null on retry tiers and without dedup. */
  private readonly dedupPolicy: DedupPolicy | null;
  /** Attempts head records through the processor chain, past each processor's circuit breaker and retry budget (shared with its other tasks in the process). */
  private readonly attempts: ChainRunner;
  private readonly maxPollRecords: number;
  private state: TaskState = { kind: 'running' };
  private readonly buffer: TaskBuffer;
  /** Writes the unit of work since the last durable point, and commits. */
  private readonly flusher: TaskFlusher;
  /** A port call failed: the task waits, and may write the same unit again first. */
  private readonly portRetry: PortRetry;
  /** `retry.order: 'key'`: the records held back per key; undefined otherwise. */
  private readonly ordered: OrderedRetries | undefined;
  /** What the task waits on now, its processor or its write: `awaits.describe(now)` says (see {@link TaskAwaits}). */
  readonly awaits: TaskAwaits;

  constructor(private readonly options: PartitionTaskOptions) {
    const { topology, topic, partition } = options;
    const route = routeOf(topology, topic);
    if (route === undefined)
      throw new IllegalStateError(`topic '${topic}' is neither a source nor a retry tier of topology '${topology.applicationId}'`);
    this.id = taskId({ topic, partition });
    this.events = new TaskEvents(this.id, options.listener);
    this.topic = topic;
    this.partition = partition;
    this.sub = route.subtopology;
    this.view = subtopologyView(this.sub, route.step.index);
    this.commitIntervalMs = topology.commitIntervalMs;
    this.tier = route.tier;
    this.attempts = new ChainRunner({
      applicationId: topology.applicationId,
      sub: this.sub,
      start: route.step.index,
      fromRetryTier: this.tier !== null,
      resilienceOf: resilienceOfSteps(this.sub, options.resilience),
      events: this.events,
      clock: options.clock,
      random: options.random ?? Math.random,
      maxRecordBytes: options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES,
      ...(options.tracer ? { tracer: options.tracer } : {}),
    });
    this.maxPollRecords = options.maxPollRecords ?? 500;
    this.buffer = new TaskBuffer(options.startOffset);
    this.portRetry = new PortRetry(options.clock, this.events);
    // Retry-tier records are weir's own copies of records whose key was confirmed when the copy
    // became durable: dedup applies to source records only.
    const policy = this.tier === null ? this.sub.processor.dedup : null;
    this.dedupPolicy = policy;
    if (policy !== null) {
      if (options.dedupStore === undefined)
        throw new IllegalStateError(`processor '${this.sub.processor.name}' uses dedup but task ${this.id} has no dedup store`);
      this.dedup = new DedupGate(options.dedupStore, policy, this.id, options.startOffset);
    }
    this.ordered = this.tier === null ? OrderedRetries.forTask(this.id, this.sub, this.attempts, this.events, options) : undefined;
    this.awaits = new TaskAwaits(options.output.guarantee);
    const { buffer, dedup, events, portRetry, ordered, awaits } = this;
    this.flusher = new TaskFlusher(options, { buffer, dedup, events, portRetry, ordered, awaits });
  }

  /** Current lifecycle state (see {@link TaskState}). */
  get currentState(): TaskStateKind {
    return this.state.kind;
  }

  /** Records buffered and not yet processed. */
  get buffered(): number {
    return this.buffer.unprocessed;
  }

  /** `retry.order: 'key'`: the keys and records it holds back (see `OrderedRetries`); undefined otherwise. */
  get parked(): { readonly keys: number; readonly records: number; readonly full: boolean } | undefined {
    return this.ordered?.counts;
  }

  /** The next offset the task expects from its fetcher. */
  get position(): number {
    return this.buffer.position;
  }

  /** The last committed offset (next offset to read). */
  get committedOffset(): number {
    return this.flusher.committedOffset;
  }

  /**
   * Every record below this offset has a durable outcome (acknowledged by the broker), though
   * its offset may not be committed yet: committing it is always safe. Under exactly_once it
   * equals the committed offset.
   */
  get durableOffset(): number {
    return this.flusher.durableOffset;
  }

  /**
   * Buffers fetched records. Records below the task's position (re-delivered after a
   * rebalance or a seek) are dropped, so no record is processed twice by one task.
   *
   * @param nextOffset the offset after the fetched batch (it can be past the last record when
   *   the batch ended with transaction markers)
   * @returns how many records were accepted
   */
  enqueue(records: readonly InputRecord[], nextOffset?: number): number {
    if (this.state.kind === 'closed' || this.state.kind === 'fenced') return 0;
    return this.buffer.enqueue(records, nextOffset);
  }

  /** A rebalance began: finish the record in hand, flush and commit, then take no records until `resume()`. */
  suspend(): void {
    if (this.state.kind === 'running') this.transition({ kind: 'suspended' });
  }

  /** The rebalance kept this task's partition: continue. */
  resume(): void {
    if (this.state.kind === 'suspended') this.transition({ kind: 'running' });
  }

  /**
   * Asks the task to finish: after the record in hand, `'stop'` flushes and commits (shutdown);
   * `'close'` drops everything not yet durable (partition revoked). The next `poll()` returns
   * `closed`. A `'close'` wins over an earlier `'stop'`.
   */
  requestStop(mode: 'stop' | 'close'): void {
    const { kind } = this.state;
    if (kind === 'running' || kind === 'suspended' || (kind === 'stopping' && mode === 'close'))
      this.transition({ kind: 'stopping', mode });
  }

  /** Runs the task as far as it can go without waiting, then reports the outcomes it counted. See {@link PollResult}. */
  async poll(): Promise<PollResult> {
    const result = await this.step();
    this.events.report(this.topic, this.partition);
    this.ordered?.report(this.topic, this.partition);
    return result;
  }

  private async step(): Promise<PollResult> {
    if (this.state.kind === 'closed' || this.state.kind === 'fenced') return { kind: 'closed', state: this.state.kind };
    if (this.state.kind === 'stopping') return this.finish(this.state.mode);
    const retryWait = this.portRetry.waitBefore(this.options.clock.now());
    if (retryWait !== undefined) return retryWait;
    if (this.dedup && !(await this.dedup.recover(this.events.listener))) return this.portRetry.failed('dedup', this.dedup.lastError);
    if (this.portRetry.rewrite) {
      const flushed = await this.flush(false);
      if (flushed !== undefined) return flushed;
    }

    let processed = 0;
    while (processed < this.maxPollRecords && this.state.kind === 'running') {
      // Commit on time even in the middle of a poll: a slow processor must not hold back
      // commit.interval.ms (Kafka Streams checks it between records too).
      if (processed > 0 && this.flusher.commitDue()) {
        const flushed = await this.flush(false);
        if (flushed !== undefined) return flushed;
      }
      const t = this.options.clock.now();
      const ordered = this.ordered;
      if (ordered?.isDue(t) === true && (await this.awaits.on('processor', t, ordered.attemptDue(t, this.flusher.unit)))) {
        processed++;
        continue;
      }
      const slot = this.buffer.head;
      // At maxParkedKeys no new record is taken: the buffer fills and the partition pauses.
      if (slot === undefined || ordered?.full === true) break;
      if (slot.retry !== undefined && slot.retry.dueAt > t)
        return this.waitAfterFlush(slot.retry.dueAt, slot.retry.held ? 'circuit-open' : 'backoff');
      if (this.tier !== null) {
        const due = headerNumber(slot.raw.headers, WEIR_HEADERS.retryDueMs);
        if (due !== undefined && due > t) return this.waitAfterFlush(due, 'due');
      }
      const { prepared, claim } = slot;
      if (prepared === undefined || claim === undefined) {
        if (!(await this.prepareWindow())) return this.portRetry.failed('dedup', this.dedup?.lastError);
        continue;
      }
      if (claim === 'busy' && this.dedup !== undefined) {
        slot.prepared = undefined;
        slot.claim = undefined;
        return this.waitAfterFlush(t + this.dedup.busyRetryMs(), 'dedup-busy');
      }
      const key = prepared.dedupKey;
      if (claim === 'duplicate' || (key !== null && this.flusher.unit.hasKey(key))) {
        this.flusher.unit.addDuplicate();
        this.events.outcome(slot.raw, 'duplicate', 0, t);
        this.buffer.advance();
        processed++;
        continue;
      }
      if (this.ordered?.follow(slot, prepared, this.flusher.unit) === true) {
        this.buffer.advance();
        processed++;
        continue;
      }
      const attempted = this.attempts.attempt(slot, prepared, t);
      const step = attempted instanceof Promise ? await this.awaits.on('processor', t, attempted, slot.raw.offset) : attempted;
      if (step.kind === 'wait') return this.waitAfterFlush(step.untilMs, step.reason);
      if (step.park !== undefined) this.ordered!.park(slot, step.park, prepared.dedupKey, this.flusher.unit);
      else this.flusher.unit.add(step.outputs, prepared.dedupKey);
      this.buffer.advance();
      processed++;
    }

    const state = this.state as TaskState;
    if (state.kind === 'stopping') return this.finish(state.mode);
    if (state.kind === 'suspended') {
      await this.flush(true);
      return this.closedOr({ kind: 'idle' });
    }
    const flushed = await this.flush(false);
    if (flushed !== undefined) return flushed;
    if (this.buffer.unprocessed > 0 && this.ordered?.full !== true) return { kind: 'yield' };
    const idle = this.flusher.idleOrCommitWait();
    return this.ordered?.waitOr(idle) ?? idle;
  }

  /** Deserializes the next window of records and claims their dedup keys in one round trip. */
  private async prepareWindow(): Promise<boolean> {
    const window: Slot[] = [];
    for (const slot of this.buffer.window(this.maxPollRecords)) {
      if (slot.prepared === undefined) this.attempts.prepare(slot, this.view.source, this.dedupPolicy);
      if (slot.claim === undefined) window.push(slot);
    }
    if (this.dedup === undefined) {
      for (const slot of window) slot.claim = 'claimed';
      return true;
    }
    return this.dedup.claimWindow(window, this.events.listener);
  }

  /** Writes the unit (if due) through the flusher; a fenced write closes the task (state `fenced`). */
  private async flush(forceCommit: boolean): Promise<PollResult | undefined> {
    const result = await this.flusher.flush(forceCommit);
    if (result?.kind === 'closed') this.transition({ kind: 'fenced' });
    return result;
  }

  private async waitAfterFlush(untilMs: number, reason: WaitReason): Promise<PollResult> {
    const longWait = untilMs - this.options.clock.now() >= this.commitIntervalMs;
    const flushed = await this.flush(longWait || this.options.output.guarantee === 'exactly_once');
    return flushed ?? { kind: 'wait', untilMs, reason };
  }

  private async finish(mode: 'stop' | 'close'): Promise<PollResult> {
    if (mode === 'stop') {
      const flushed = await this.flush(true);
      if (flushed?.kind === 'closed') return flushed;
    } else if (await this.flusher.settle()) {
      // A transaction in flight ends before the task does (nothing of it may outlive its
      // task); when it found the producer fenced, the task closes as fenced.
      this.transition({ kind: 'fenced' });
      return { kind: 'closed', state: 'fenced' };
    }
    this.transition({ kind: 'closed' });
    return { kind: 'closed', state: 'closed' };
  }

  private closedOr(result: PollResult): PollResult {
    return this.state.kind === 'fenced' ? { kind: 'closed', state: 'fenced' } : result;
  }

  /** The one place the task's state changes, checked against {@link TASK_TRANSITIONS}. */
  private transition(to: TaskState): void {
    const from = this.state.kind;
    if (from === to.kind && to.kind !== 'stopping') return;
    assertTransition(this.id, from, to.kind);
    this.state = to;
    if (to.kind === 'closed' || to.kind === 'fenced') this.events.closed(to.kind);
  }
}
