import type { WeirError } from '../errors.js';
import type { OffsetReader, TransactionalProducer } from './ports.js';
import type { TaskWriter, WriteResult } from './task-writer.js';
import type { UnitOfWork } from './unit-of-work.js';

/** A `ProducerFencedError` (matched by code, so copies of weir agree). */
function isFenced(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as WeirError).code === 'WEIR_PRODUCER_FENCED';
}

/**
 * exactly_once: once per commit interval, one Kafka transaction holds every output of the
 * unit (sink, retry-tier and DLQ records alike) and the input offset:
 * begin → send → sendOffsets → commit. This is Kafka Streams' first exactly-once design
 * (one producer per task, KIP-98/KIP-129; kafkajs has no KIP-447).
 *
 * Any failure before the commit aborts the transaction, and the task re-runs the unit's
 * records, so outputs of a failed attempt are never committed. A failed commit (or abort)
 * is in doubt — the broker may have committed before the connection broke — so the writer
 * resets the producer, which completes the transaction either way, and reads the group's
 * committed offset back: the offsets were part of the transaction, so they tell its fate.
 */
export class ExactlyOnceWriter implements TaskWriter {
  private committed: number;
  /** The next offset of a transaction whose commit failed and whose outcome is not yet known. */
  private inDoubt: number | null = null;

  constructor(
    private readonly topic: string,
    private readonly partition: number,
    private readonly groupId: string,
    private readonly producer: TransactionalProducer,
    private readonly offsets: OffsetReader,
    startOffset: number,
  ) {
    this.committed = startOffset;
  }

  get committedOffset(): number {
    return this.committed;
  }

  async write(unit: UnitOfWork, nextOffset: number, commitDue: boolean): Promise<WriteResult> {
    if (this.inDoubt !== null) return this.resolveDoubt(this.inDoubt);
    if (!commitDue) return { durable: false, committed: false };
    if (unit.isEmpty && nextOffset <= this.committed) return { durable: true, committed: false };
    let stage: 'begin' | 'send' | 'commit' = 'begin';
    try {
      await this.producer.begin();
      stage = 'send';
      if (unit.outputs.length > 0) await this.producer.send(unit.outputs);
      await this.producer.sendOffsets(this.groupId, [{ topic: this.topic, partition: this.partition, offset: nextOffset }]);
      stage = 'commit';
      await this.producer.commit();
    } catch (error) {
      if (isFenced(error)) return fenced(error);
      if (stage === 'commit') {
        this.inDoubt = nextOffset;
        return this.resolveDoubt(nextOffset);
      }
      return this.abort(stage, error);
    }
    this.committed = nextOffset;
    return { durable: true, committed: true };
  }

  /** A failure before the commit: abort, and have the task re-run the unit. */
  private async abort(stage: 'begin' | 'send', error: unknown): Promise<WriteResult> {
    try {
      if (stage === 'send') await this.producer.abort();
      else await this.producer.reset();
    } catch (abortError) {
      if (isFenced(abortError)) return fenced(abortError);
      // The producer is stuck in ABORTING: throw it away. Its transaction is aborted by the
      // reset (or by the broker's transaction timeout); its outputs are never committed.
      await this.producer.reset().catch(() => undefined);
    }
    return { durable: false, committed: false, rewind: true, error: { port: 'transaction', error } };
  }

  /**
   * Finds out whether the in-doubt transaction committed: reset the producer (which completes
   * it), then read the committed offset back. Until that succeeds the unit stays as it is,
   * neither durable nor re-run, and the task calls again after a backoff.
   */
  private async resolveDoubt(nextOffset: number): Promise<WriteResult> {
    try {
      await this.producer.reset();
      const committed = await this.offsets.committedOffset(this.groupId, this.topic, this.partition);
      this.inDoubt = null;
      if (committed === nextOffset) {
        this.committed = nextOffset;
        return { durable: true, committed: true };
      }
      return { durable: false, committed: false, rewind: true, error: { port: 'transaction', error: new Error(`transaction for offset ${nextOffset} was aborted`) } };
    } catch (error) {
      if (isFenced(error)) {
        this.inDoubt = null;
        return fenced(error);
      }
      return { durable: false, committed: false, error: { port: 'transaction', error } };
    }
  }
}

function fenced(error: unknown): WriteResult {
  return { durable: false, committed: false, fenced: true, error: { port: 'transaction', error } };
}
