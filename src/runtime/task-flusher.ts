import { AtLeastOnceWriter } from './at-least-once-writer.js';
import type { DedupGate } from './dedup-gate.js';
import { ExactlyOnceWriter } from './exactly-once-writer.js';
import type { PartitionTaskOptions } from './partition-task-options.js';
import type { PollResult } from './poll-result.js';
import type { PortRetry } from './port-retry.js';
import type { TaskBuffer } from './task-buffer.js';
import type { DecidedTimestamps, TaskEvents } from './task-events.js';
import type { TaskWriter, WriteResult } from './task-writer.js';
import { UnitOfWork } from './unit-of-work.js';
import type { OrderedRetries } from './ordered-retries.js';
import type { TaskAwaits } from './task-awaits.js';

/** The parts of its task a {@link TaskFlusher} works with. */
export interface TaskFlusherParts {
  readonly buffer: TaskBuffer;
  /** An `order: 'key'` task's parked records: each unit snapshots them, an aborted unit restores them. */
  readonly ordered: OrderedRetries | undefined;
  readonly dedup: DedupGate | undefined;
  readonly events: TaskEvents;
  readonly portRetry: PortRetry;
  /** What the task waits on: each write the flusher waits for is said there. */
  readonly awaits: TaskAwaits;
}

/**
 * An exactly_once unit whose transaction is committing while its task processes on: the first
 * `processed` records of the task's buffer, and what to report when it lands.
 */
interface InFlightWrite {
  readonly result: Promise<WriteResult>;
  settled: boolean;
  /** When the write ended (epoch ms), for the commit duration reported. */
  settledAt?: number;
  readonly unit: UnitOfWork;
  readonly nextOffset: number;
  readonly processed: number;
  readonly decided: DecidedTimestamps;
  readonly startedAt: number;
}

/**
 * The write side of a `PartitionTask`: the unit of work since the last durable point and its
 * writing through the task's {@link TaskWriter} (per `processing.guarantee`), on the commit
 * interval, with the unit's dedup claims reasserted before and confirmed after. It keeps the
 * durable and committed offsets, and turns what a write achieved into what the task does next.
 *
 * Under exactly_once without dedup, the write due at the end of a commit interval runs while the
 * task goes on processing into the next unit (`overlapCommits`): the task does not sit idle
 * while its transaction commits, as Kafka Streams' stream thread does not (KIP-447 lets the
 * next transaction begin as soon as one commits). At most one write is in flight; the next one
 * waits for it, and so does every forced commit (a rebalance, a shutdown, a wait). Its outcome
 * lands at the next flush: durable, the unit's records are dropped; aborted, both units' records
 * run again; in doubt and not yet resolved, the next unit is discarded and the unit in doubt is
 * the one written again.
 */
export class TaskFlusher {
  private readonly writer: TaskWriter;
  private unitOfWork: UnitOfWork;
  /** Whether a due write may run while the task processes on (see the class comment). */
  private readonly overlap: boolean;
  private inFlight: InFlightWrite | undefined;
  /** The next offset after the records whose outcomes are durable. */
  private durable: number;
  private lastCommitAt: number;
  /** `commit.interval.ms`. */
  private readonly commitIntervalMs: number;

  constructor(
    private readonly options: PartitionTaskOptions,
    private readonly parts: TaskFlusherParts,
  ) {
    const { topology, topic, partition, output: out, startOffset } = options;
    this.writer =
      out.guarantee === 'at_least_once'
        ? new AtLeastOnceWriter(topic, partition, out.producer, out.committer, startOffset)
        : new ExactlyOnceWriter(topic, partition, topology.applicationId, out.transactions, out.offsets, startOffset);
    this.durable = startOffset;
    this.commitIntervalMs = topology.commitIntervalMs;
    this.lastCommitAt = options.clock.now();
    this.overlap = out.guarantee === 'exactly_once' && parts.dedup === undefined && options.overlapCommits === true;
    this.unitOfWork = this.newUnit();
  }

  /** A unit of work that begins now (with the parked records as they are, to go back to if it is aborted). */
  private newUnit(): UnitOfWork {
    return new UnitOfWork(this.parts.ordered?.snapshot());
  }

  /** The records processed since the last durable point, and their outputs. */
  get unit(): UnitOfWork {
    return this.unitOfWork;
  }

  /** The last committed offset (next offset to read). */
  get committedOffset(): number {
    return this.writer.committedOffset;
  }

  /** Every record below this offset has a durable outcome (see `PartitionTask.durableOffset`). */
  get durableOffset(): number {
    return Math.max(this.durable, this.writer.committedOffset);
  }

  /** Whether the commit interval has passed since the last commit. */
  commitDue(): boolean {
    return this.options.clock.now() - this.lastCommitAt >= this.commitIntervalMs;
  }

  /**
   * Writes the unit (if due) and reports; returns a PollResult when the task must stop here:
   * `closed` (`fenced`) when a newer producer owns the transactional id.
   */
  async flush(forceCommit: boolean): Promise<PollResult | undefined> {
    const { clock } = this.options;
    const { buffer, dedup, events, portRetry } = this.parts;
    if (this.inFlight !== undefined) {
      if (!this.inFlight.settled && !forceCommit && !this.commitDue()) return undefined;
      const landed = await this.land(this.inFlight);
      if (landed !== undefined) return landed;
    }
    const now = clock.now();
    const commitDue = forceCommit || this.commitDue();
    const unit = this.unitOfWork;
    const nextOffset = buffer.nextOffset();
    if (unit.isEmpty && (!commitDue || nextOffset <= this.writer.committedOffset)) return undefined;
    // exactly_once sends a unit only when its commit is due; at_least_once at every flush. A
    // transaction in doubt is not sent again, but its claims are renewed while it is resolved
    // (its fate is the transaction's, whatever the claims say).
    const inDoubt = this.writer.resolvingInDoubt === true;
    if (dedup !== undefined && !unit.isEmpty && (inDoubt || commitDue || this.options.output.guarantee === 'at_least_once')) {
      const claims = await dedup.reassert(buffer.processed(), events.listener);
      if (claims === 'failed' && !inDoubt) return portRetry.failed('dedup', dedup.lastError);
      if (claims === 'lost' && !inDoubt) return this.runAgain();
    }
    if (this.overlap && commitDue && !forceCommit && !inDoubt && !unit.isEmpty) {
      this.startInFlight(unit, nextOffset, now);
      return undefined;
    }
    const result = await this.parts.awaits.on('write', now, this.writer.write(unit, nextOffset, commitDue));
    const durationMs = clock.now() - now;
    switch (result.kind) {
      case 'fenced':
        return { kind: 'closed', state: 'fenced' };
      case 'failed':
        return portRetry.failed(result.port, result.error, true);
      case 'rewind':
        this.runAgain();
        return portRetry.failed('transaction', result.error);
      case 'durable': {
        this.durable = nextOffset;
        const confirmed = dedup ? await dedup.confirm(unit.dedupKeys, buffer.waiting(), events.listener) : 0;
        buffer.dropProcessed();
        this.unitOfWork = this.newUnit();
        events.flushed(this.options.topic, this.options.partition, unit, confirmed, result.committed ? nextOffset : undefined, durationMs);
        if (result.committed || nextOffset <= this.writer.committedOffset) this.lastCommitAt = now;
        if (result.commitError !== undefined) return portRetry.failed('commit', result.commitError);
        break;
      }
      case 'deferred':
        break;
    }
    portRetry.succeeded();
    return undefined;
  }

  /** Starts writing `unit` and lets the task process on into a new unit (see the class comment). */
  private startInFlight(unit: UnitOfWork, nextOffset: number, now: number): void {
    const write: InFlightWrite = {
      result: this.writer.write(unit, nextOffset, true),
      settled: false,
      unit,
      nextOffset,
      processed: this.parts.buffer.processedCount,
      decided: this.parts.events.takeDecided(),
      startedAt: now,
    };
    const settled = (): void => {
      write.settled = true;
      write.settledAt = this.options.clock.now();
    };
    write.result.then(settled, settled);
    this.inFlight = write;
    this.unitOfWork = this.newUnit();
    // The next commit is due one interval after this one began, as without the overlap.
    this.lastCommitAt = now;
  }

  /**
   * Waits for the write in flight and applies its outcome (see the class comment); returns a
   * PollResult when the task must stop or wait here.
   */
  private async land(write: InFlightWrite): Promise<PollResult | undefined> {
    const { buffer, events, portRetry } = this.parts;
    const { topic, partition, clock } = this.options;
    let result: WriteResult;
    try {
      result = await this.parts.awaits.on('write', write.startedAt, write.result);
    } finally {
      this.inFlight = undefined;
    }
    switch (result.kind) {
      case 'fenced':
        return { kind: 'closed', state: 'fenced' };
      case 'durable':
        this.durable = write.nextOffset;
        buffer.dropProcessed(write.processed);
        events.flushed(
          topic,
          partition,
          write.unit,
          0,
          result.committed ? write.nextOffset : undefined,
          (write.settledAt ?? clock.now()) - write.startedAt,
          write.decided,
        );
        portRetry.succeeded();
        return undefined;
      case 'rewind':
        // Both units run again: from the state before the one in flight.
        this.runAgain(write.unit);
        return portRetry.failed('transaction', result.error);
      case 'failed':
        // In doubt and not resolved yet: the unit in doubt is the one to write again (the writer
        // resolves it first), so the records processed since run again after it.
        buffer.rewindTo(write.processed);
        this.restoreParked(this.unitOfWork);
        this.unitOfWork = write.unit;
        events.restoreDecided(write.decided);
        return portRetry.failed(result.port, result.error, true);
      case 'deferred':
        return undefined;
    }
  }

  /**
   * Waits for a write in flight to end, whatever its outcome (a task closing without a commit:
   * nothing of it is reported, as nothing of an unfinished unit is).
   *
   * @returns `true` when that write found the producer fenced
   */
  async settle(): Promise<boolean> {
    const write = this.inFlight;
    this.inFlight = undefined;
    if (write === undefined) return false;
    const result = await this.parts.awaits.on('write', write.startedAt, write.result).catch(() => undefined);
    return result?.kind === 'fenced';
  }

  /**
   * Nothing of the unit was written: its records run again from the last durable point, and the
   * parked records go back to what they were then (`from`: the first unit not durable).
   */
  runAgain(from: UnitOfWork = this.unitOfWork): PollResult {
    this.parts.buffer.rewind();
    this.restoreParked(from);
    this.unitOfWork = this.newUnit();
    this.parts.events.rewound();
    return { kind: 'yield' };
  }

  /** The parked records go back to what they were when `unit` began. */
  private restoreParked(unit: UnitOfWork): void {
    if (unit.parked !== undefined) this.parts.ordered?.restore(unit.parked);
  }

  /** Nothing left to process: `idle`, or a wait for the commit interval when something is not committed yet. */
  idleOrCommitWait(): PollResult {
    const pending = this.inFlight !== undefined || !this.unitOfWork.isEmpty || this.parts.buffer.nextOffset() > this.writer.committedOffset;
    if (!pending) return { kind: 'idle' };
    return { kind: 'wait', untilMs: this.lastCommitAt + this.commitIntervalMs, reason: 'commit' };
  }
}
