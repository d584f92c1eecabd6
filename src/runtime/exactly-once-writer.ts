import { ProducerFencedError, type WeirError } from '../errors.js';
import { taskId } from '../record/task-id.js';
import { randomUUID } from 'node:crypto';
import type { CommittedPosition, OffsetReader, TransactionalProducer } from './ports.js';
import type { TaskWriter, WriteResult } from './task-writer.js';
import type { UnitOfWork } from './unit-of-work.js';

/** A `ProducerFencedError` (matched by code, so copies of weir agree). */
function isFenced(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as WeirError).code === 'WEIR_PRODUCER_FENCED';
}

/** A failed transaction whose producer must be reset: what it was for, and why it failed. */
interface Recovery {
  /** The offset and token the transaction would have committed when its commit was in doubt, else null. */
  readonly inDoubt: { readonly offset: number; readonly token: string } | null;
  readonly cause: unknown;
}

/**
 * exactly_once: once per commit interval, one Kafka transaction holds every output of the
 * unit (sink, retry-tier and DLQ records alike) and the input offset:
 * begin → send → sendOffsets → commit. This is Kafka Streams' first exactly-once design
 * (one producer per task, KIP-98/KIP-129; kafkajs has no KIP-447).
 *
 * Any failure before the commit aborts the transaction, and the task re-runs the unit's
 * records, so outputs of a failed attempt are never committed. A failed commit is in doubt —
 * the broker may have committed before the connection broke — and a failed begin or abort
 * leaves the kafkajs producer stuck; either way the writer resets the producer (a new
 * `InitProducerId`, which completes the open transaction) and reads the group's committed
 * offset back. The offsets were part of the transaction, so they tell its fate:
 * - the in-doubt transaction's offset: it committed, the unit is durable;
 * - the writer's own last committed offset: it was aborted, re-run the unit;
 * - anything else: another instance of this task committed since — this one is a zombie
 *   (and its reset fenced the other): it closes as fenced, and the other is rebuilt.
 *
 * A unit may not move the offset: an `order: 'key'` task's unit can hold only the outcomes of
 * parked records, whose offsets were committed when they were parked. So every transaction also
 * commits a token unique to it as the offset's metadata (`weir:<writer>:<n>`, in
 * `TxnOffsetCommit`, as Kafka Streams commits its own metadata there): when the offset cannot
 * tell, the token read back does.
 */
export class ExactlyOnceWriter implements TaskWriter {
  private committed: number;
  /** This writer's part of its commit tokens: unique per writer (a task incarnation). */
  private readonly writerId = randomUUID().slice(0, 8);
  private commits = 0;
  /** Set when the producer must be reset: what the failed transaction was for. */
  private recovery: Recovery | null = null;

  constructor(
    private readonly topic: string,
    private readonly partition: number,
    private readonly groupId: string,
    private readonly producer: TransactionalProducer,
    private readonly offsets: OffsetReader,
    /** The group's committed offset when the task started (or the log start without one). */
    private readonly startOffset: number,
  ) {
    this.committed = startOffset;
  }

  get committedOffset(): number {
    return this.committed;
  }

  get resolvingInDoubt(): boolean {
    return this.recovery !== null;
  }

  async write(unit: UnitOfWork, nextOffset: number, commitDue: boolean): Promise<WriteResult> {
    if (this.recovery !== null) return this.recover(this.recovery);
    if (!commitDue) return { kind: 'deferred' };
    if (unit.isEmpty && nextOffset <= this.committed) return { kind: 'durable', committed: false };
    let stage: 'begin' | 'send' | 'commit' = 'begin';
    const token = `weir:${this.writerId}:${++this.commits}`;
    try {
      await this.producer.begin();
      stage = 'send';
      if (unit.outputs.length > 0) await this.producer.send(unit.outputs);
      await this.producer.sendOffsets(this.groupId, [
        { topic: this.topic, partition: this.partition, offset: nextOffset, metadata: token },
      ]);
      stage = 'commit';
      await this.producer.commit();
    } catch (error) {
      if (isFenced(error)) return fenced(error);
      if (stage === 'send') {
        try {
          await this.producer.abort();
          return { kind: 'rewind', error };
        } catch (abortError) {
          if (isFenced(abortError)) return fenced(abortError);
          // The producer is stuck in ABORTING: reset it below.
        }
      }
      this.recovery = { inDoubt: stage === 'commit' ? { offset: nextOffset, token } : null, cause: error };
      return this.recover(this.recovery);
    }
    this.committed = nextOffset;
    return { kind: 'durable', committed: true };
  }

  /**
   * Resets the producer and reads the committed offset back (see the class comment). Until
   * that succeeds the unit stays as it is, neither durable nor re-run, and the task calls
   * again after a backoff.
   */
  private async recover(recovery: Recovery): Promise<WriteResult> {
    const { inDoubt, cause } = recovery;
    let read: CommittedPosition | undefined;
    try {
      await this.producer.reset();
      read = await this.offsets.committedPosition(this.groupId, this.topic, this.partition);
    } catch (error) {
      if (isFenced(error)) {
        this.recovery = null;
        return fenced(error);
      }
      return { kind: 'failed', port: 'transaction', error };
    }
    this.recovery = null;
    const actual = read?.offset ?? this.startOffset;
    // Where the offset did not move, only the token tells whether the transaction committed.
    const committed =
      inDoubt !== null && actual === inDoubt.offset && (inDoubt.offset !== this.committed || read?.metadata === inDoubt.token);
    if (committed) {
      this.committed = inDoubt.offset;
      return { kind: 'durable', committed: true };
    }
    if (actual === this.committed) {
      const error = inDoubt === null ? cause : new Error(`transaction for offset ${inDoubt.offset} was aborted`, { cause });
      return { kind: 'rewind', error };
    }
    const zombie = new Error(
      `committed offset of ${taskId({ topic: this.topic, partition: this.partition })} is ${actual}, not ${this.committed}: another instance of the task committed`,
      { cause },
    );
    return fenced(new ProducerFencedError(this.producer.transactionalId, { cause: zombie }));
  }
}

function fenced(error: unknown): WriteResult {
  return { kind: 'fenced', error };
}
