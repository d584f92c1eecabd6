import { AtLeastOnceWriter } from './at-least-once-writer.js';
import type { DedupGate } from './dedup-gate.js';
import { ExactlyOnceWriter } from './exactly-once-writer.js';
import type { PartitionTaskOptions } from './partition-task-options.js';
import type { PollResult } from './poll-result.js';
import type { PortRetry } from './port-retry.js';
import type { TaskBuffer } from './task-buffer.js';
import type { TaskEvents } from './task-events.js';
import type { TaskWriter } from './task-writer.js';
import { UnitOfWork } from './unit-of-work.js';

/** The parts of its task a {@link TaskFlusher} works with. */
export interface TaskFlusherParts {
  readonly buffer: TaskBuffer;
  readonly dedup: DedupGate | undefined;
  readonly events: TaskEvents;
  readonly portRetry: PortRetry;
}

/**
 * The write side of a `PartitionTask`: the unit of work since the last durable point and its
 * writing through the task's {@link TaskWriter} (per `processing.guarantee`), on the commit
 * interval, with the unit's dedup claims reasserted before and confirmed after. It keeps the
 * durable and committed offsets, and turns what a write achieved into what the task does next.
 */
export class TaskFlusher {
  private readonly writer: TaskWriter;
  private unitOfWork = new UnitOfWork();
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
    const result = await this.writer.write(unit, nextOffset, commitDue);
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
        this.unitOfWork = new UnitOfWork();
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

  /** Nothing of the unit was written: its records run again from the last durable point. */
  runAgain(): PollResult {
    this.parts.buffer.rewind();
    this.unitOfWork = new UnitOfWork();
    this.parts.events.rewound();
    return { kind: 'yield' };
  }

  /** Nothing left to process: `idle`, or a wait for the commit interval when something is not committed yet. */
  idleOrCommitWait(): PollResult {
    const pending = !this.unitOfWork.isEmpty || this.parts.buffer.nextOffset() > this.writer.committedOffset;
    if (!pending) return { kind: 'idle' };
    return { kind: 'wait', untilMs: this.lastCommitAt + this.commitIntervalMs, reason: 'commit' };
  }
}
