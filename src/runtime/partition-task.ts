import { WEIR_HEADERS, headerNumber } from '../record/weir-headers.js';
import type { Random } from '../failure/backoff.js';
import { DEFAULT_MAX_RECORD_BYTES } from '../record/record-size.js';
import type { InputRecord } from '../record/record-types.js';
import { routeOf, type DedupPolicy, type RetryTier, type Subtopology } from '../topology/compiled-topology.js';
import { AtLeastOnceWriter } from './at-least-once-writer.js';
import { DedupGate } from './dedup-gate.js';
import { ExactlyOnceWriter } from './exactly-once-writer.js';
import type { PollResult, WaitReason } from './poll-result.js';
import { prepareRecord } from './prepared-record.js';
import { TaskBuffer, type Slot } from './task-buffer.js';
import { historyFromHeaders, type RetryHistory } from '../failure/retry-history.js';
import { runAttempt } from './run-attempt.js';
import { assertTransition, type TaskState } from './task-state.js';
import type { TaskWriter } from './task-writer.js';
import { UnitOfWork } from './unit-of-work.js';
import { TaskEvents } from './task-events.js';
import type { PartitionTaskOptions } from './partition-task-options.js';

export type { PartitionTaskOptions, TaskOutputPorts } from './partition-task-options.js';

/** Port failures back off from 100 ms, doubling, up to 5 s. */
const PORT_RETRY_MS = { initial: 100, max: 5_000 } as const;

/**
 * One task per input partition (source or retry tier), as in Kafka Streams: takes the
 * partition's records strictly in offset order, runs the processor, routes each outcome,
 * writes the outputs and commits — per the topology's `processing.guarantee` — and never
 * commits past a record whose outcome is not durable.
 *
 * The task is pure given its ports and clock: it never sleeps or sets timers. Its driver (the
 * worker's task runner, or the TopologyTestDriver) feeds records with `enqueue()` and calls
 * `poll()` as its {@link PollResult} asks. One `poll()` at a time.
 */
export class PartitionTask {
  /** `<topic>-<partition>`. */
  readonly id: string;
  readonly topic: string;
  readonly partition: number;
  private readonly sub: Subtopology;
  private readonly tier: RetryTier | null;
  private readonly writer: TaskWriter;
  private readonly dedup: DedupGate | undefined;
  private readonly events: TaskEvents;
  /** The processor's dedup policy on a source task; null on retry tiers and without dedup. */
  private readonly dedupPolicy: DedupPolicy | null;
  private readonly random: Random;
  private readonly maxPollRecords: number;
  private state: TaskState = 'running';
  private readonly buffer: TaskBuffer;
  /** The next offset after the records whose outcomes are durable. */
  private durable: number;
  private unit = new UnitOfWork();
  private lastCommitAt: number;
  /** The head record while it waits for a blocking retry. */
  private blocked: { readonly offset: number; readonly history: RetryHistory; readonly dueAt: number } | null = null;
  private portFailures = 0;
  private portRetryAt = 0;
  private stopping: 'stop' | 'close' | null = null;
  /** at_least_once: the last flush failed; write the unit again before processing more. */
  private unflushed = false;

  constructor(private readonly options: PartitionTaskOptions) {
    const { topology, topic, partition } = options;
    const route = routeOf(topology, topic);
    if (route === undefined) throw new Error(`topic '${topic}' is neither a source nor a retry tier of topology '${topology.applicationId}'`);
    this.id = `${topic}-${partition}`;
    this.events = new TaskEvents(this.id, options.listener);
    this.topic = topic;
    this.partition = partition;
    this.sub = route.subtopology;
    this.tier = route.tier;
    this.random = options.random ?? Math.random;
    this.maxPollRecords = options.maxPollRecords ?? 500;
    this.buffer = new TaskBuffer(options.startOffset);
    this.durable = options.startOffset;
    this.lastCommitAt = options.clock.now();
    const out = options.output;
    this.writer =
      out.guarantee === 'at_least_once'
        ? new AtLeastOnceWriter(topic, partition, out.producer, out.committer, options.startOffset)
        : new ExactlyOnceWriter(topic, partition, topology.applicationId, out.transactions, out.offsets, options.startOffset);
    // Retry-tier records are weir's own copies of records whose key was confirmed when the copy
    // became durable: dedup applies to source records only.
    const policy = this.tier === null ? this.sub.processor.dedup : null;
    this.dedupPolicy = policy;
    if (policy !== null) {
      if (options.dedupStore === undefined) throw new Error(`processor '${this.sub.processor.name}' uses dedup but task ${this.id} has no dedup store`);
      this.dedup = new DedupGate(options.dedupStore, policy, this.id, options.startOffset);
    }
  }

  /** Current lifecycle state. */
  get currentState(): TaskState {
    return this.state;
  }

  /** Records buffered and not yet processed. */
  get buffered(): number {
    return this.buffer.unprocessed;
  }

  /** The next offset the task expects from its fetcher. */
  get position(): number {
    return this.buffer.position;
  }

  /** The last committed offset (next offset to read). */
  get committedOffset(): number {
    return this.writer.committedOffset;
  }

  /**
   * Every record below this offset has a durable outcome (acknowledged by the broker), though
   * its offset may not be committed yet: committing it is always safe. Under exactly_once it
   * equals the committed offset.
   */
  get durableOffset(): number {
    return Math.max(this.durable, this.writer.committedOffset);
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
    if (this.state === 'closed' || this.state === 'fenced') return 0;
    return this.buffer.enqueue(records, nextOffset);
  }

  /** A rebalance began: finish the record in hand, flush and commit, then take no records until `resume()`. */
  suspend(): void {
    if (this.state !== 'running') return;
    assertTransition(this.id, this.state, 'suspended');
    this.state = 'suspended';
  }

  /** The rebalance kept this task's partition: continue. */
  resume(): void {
    if (this.state !== 'suspended') return;
    assertTransition(this.id, this.state, 'running');
    this.state = 'running';
  }

  /**
   * Asks the task to finish: after the record in hand, `'stop'` flushes and commits (shutdown);
   * `'close'` drops everything not yet durable (partition revoked). The next `poll()` returns
   * `closed`.
   */
  requestStop(mode: 'stop' | 'close'): void {
    if (this.stopping !== 'close') this.stopping = mode;
  }

  /** Runs the task as far as it can go without waiting. See {@link PollResult}. */
  async poll(): Promise<PollResult> {
    if (this.state === 'closed' || this.state === 'fenced') return { kind: 'closed', state: this.state };
    if (this.stopping !== null) return this.finish();
    const now = this.options.clock.now();
    if (this.portRetryAt > now) return { kind: 'wait', untilMs: this.portRetryAt, reason: 'port-retry' };
    if (this.dedup && !(await this.dedup.recover(this.events.listener))) return this.portFailed('dedup', this.dedup.lastError);
    if (this.unflushed) {
      const flushed = await this.flush(false);
      if (flushed !== undefined) return flushed;
    }

    let processed = 0;
    while (processed < this.maxPollRecords && this.state === 'running' && this.stopping === null) {
      const slot = this.buffer.head;
      if (slot === undefined) break;
      const t = this.options.clock.now();
      if (this.blocked !== null && this.blocked.offset === slot.raw.offset && this.blocked.dueAt > t) {
        return this.waitAfterFlush(this.blocked.dueAt, 'backoff');
      }
      if (this.tier !== null) {
        const due = headerNumber(slot.raw.headers, WEIR_HEADERS.retryDueMs);
        if (due !== undefined && due > t) return this.waitAfterFlush(due, 'due');
      }
      if (slot.claim === undefined) {
        const ok = await this.prepareWindow();
        if (!ok) return this.portFailed('dedup', this.dedup?.lastError);
      }
      if (slot.claim === 'busy') {
        slot.prepared = undefined;
        slot.claim = undefined;
        return this.waitAfterFlush(t + this.dedup!.busyRetryMs(), 'dedup-busy');
      }
      const key = slot.prepared!.dedupKey;
      if (slot.claim === 'duplicate' || (key !== null && this.unit.hasKey(key))) {
        this.unit.addDuplicate();
        this.events.outcome(slot.raw, 'duplicate', 0, t);
        this.buffer.advance();
        processed++;
        continue;
      }
      const retry = await this.process(slot, t);
      if (retry !== undefined) return this.waitAfterFlush(retry, 'backoff');
      this.buffer.advance();
      processed++;
    }

    if (this.stopping !== null) return this.finish();
    if (this.state === 'suspended') {
      await this.flush(true);
      return this.closedOr({ kind: 'idle' });
    }
    const flushed = await this.flush(false);
    if (flushed !== undefined) return flushed;
    if (this.buffer.unprocessed > 0) return { kind: 'yield' };
    return this.idleOrCommitWait();
  }

  /** Processes one record; returns the due time when it must be retried in place. */
  private async process(slot: Slot, now: number): Promise<number | undefined> {
    const prepared = slot.prepared!;
    const history = this.blocked?.offset === slot.raw.offset ? this.blocked.history : historyFromHeaders(slot.raw, this.tier !== null);
    const outcome = await runAttempt({
      applicationId: this.options.topology.applicationId,
      sub: this.sub,
      prepared,
      history,
      now,
      random: this.random,
      maxRecordBytes: this.options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES,
      onLateForward: () => this.events.lateForward(slot.raw, this.sub.processor.name),
    });
    const attempt = prepared.record === undefined ? history.attempts : history.attempts + 1;
    if (outcome.kind === 'retry' && outcome.output === undefined) {
      const dueAt = now + outcome.delayMs;
      this.blocked = { offset: slot.raw.offset, history: { ...history, attempts: attempt, firstFailureMs: history.firstFailureMs ?? now }, dueAt };
      this.events.outcome(slot.raw, outcome, attempt, now);
      return dueAt;
    }
    this.blocked = null;
    this.unit.add(outcome.kind === 'success' ? outcome.outputs : [outcome.output!], prepared.dedupKey);
    this.events.outcome(slot.raw, outcome, attempt, now);
    return undefined;
  }

  /** Deserializes the next window of records and claims their dedup keys in one round trip. */
  private async prepareWindow(): Promise<boolean> {
    const window: Slot[] = [];
    for (const slot of this.buffer.window(this.maxPollRecords)) {
      if (slot.prepared === undefined) slot.prepared = prepareRecord(slot.raw, this.sub.source, this.dedupPolicy);
      if (slot.claim === undefined) window.push(slot);
    }
    if (this.dedup === undefined) {
      for (const slot of window) slot.claim = 'claimed';
      return true;
    }
    return this.dedup.claimWindow(window, this.events.listener);
  }

  /** Writes the unit (if due) and reports; returns a PollResult when the task must stop here. */
  private async flush(forceCommit: boolean): Promise<PollResult | undefined> {
    const now = this.options.clock.now();
    const commitDue = forceCommit || now - this.lastCommitAt >= this.options.topology.commitIntervalMs;
    const unit = this.unit;
    const nextOffset = this.buffer.nextOffset();
    if (unit.isEmpty && (!commitDue || nextOffset <= this.writer.committedOffset)) return undefined;
    const result = await this.writer.write(unit, nextOffset, commitDue);
    if (result.fenced) {
      this.transition('fenced');
      return { kind: 'closed', state: 'fenced' };
    }
    if (result.durable) {
      this.durable = nextOffset;
      const confirmed = this.dedup ? await this.dedup.confirm(unit.dedupKeys, this.buffer.waiting(), this.events.listener) : 0;
      this.buffer.dropProcessed();
      this.unit = new UnitOfWork();
      this.events.flushed(this.topic, this.partition, unit, confirmed, result.committed ? nextOffset : undefined);
    } else if (result.rewind) {
      this.buffer.rewind();
      this.blocked = null;
      this.unit = new UnitOfWork();
    }
    if (result.committed || (result.durable && nextOffset <= this.writer.committedOffset)) this.lastCommitAt = now;
    this.unflushed = !result.durable && !result.rewind && result.error !== undefined;
    if (result.error !== undefined) return this.portFailed(result.error.port, result.error.error);
    this.portFailures = 0;
    return undefined;
  }

  private async waitAfterFlush(untilMs: number, reason: WaitReason): Promise<PollResult> {
    const longWait = untilMs - this.options.clock.now() >= this.options.topology.commitIntervalMs;
    const flushed = await this.flush(longWait || this.options.output.guarantee === 'exactly_once');
    return flushed ?? { kind: 'wait', untilMs, reason };
  }

  private idleOrCommitWait(): PollResult {
    const pending = !this.unit.isEmpty || this.buffer.nextOffset() > this.writer.committedOffset;
    if (!pending) return { kind: 'idle' };
    return { kind: 'wait', untilMs: this.lastCommitAt + this.options.topology.commitIntervalMs, reason: 'commit' };
  }

  private portFailed(port: 'produce' | 'commit' | 'transaction' | 'dedup', error: unknown): PollResult {
    const retryInMs = Math.min(PORT_RETRY_MS.max, PORT_RETRY_MS.initial * 2 ** this.portFailures);
    this.portFailures++;
    this.portRetryAt = this.options.clock.now() + retryInMs;
    this.events.portError(port, error, retryInMs);
    return { kind: 'wait', untilMs: this.portRetryAt, reason: 'port-retry' };
  }

  private async finish(): Promise<PollResult> {
    if (this.stopping === 'stop') {
      const flushed = await this.flush(true);
      if (flushed?.kind === 'closed') return flushed;
    }
    this.transition('closed');
    return { kind: 'closed', state: 'closed' };
  }

  private closedOr(result: PollResult): PollResult {
    return this.state === 'fenced' ? { kind: 'closed', state: 'fenced' } : result;
  }

  private transition(to: TaskState): void {
    if (this.state === to) return;
    assertTransition(this.id, this.state, to);
    this.state = to;
    if (to === 'closed' || to === 'fenced') this.events.closed(to);
  }

}

