import type { UnitOfWork } from './unit-of-work.js';

/** What a {@link TaskWriter} achieved. */
export interface WriteResult {
  /** The unit's outputs are durable in Kafka (acked, or in a committed transaction). */
  readonly durable: boolean;
  /** The offset was committed. */
  readonly committed: boolean;
  /** A port failed; the task backs off and tries again. */
  readonly error?: { readonly port: 'produce' | 'commit' | 'transaction'; readonly error: unknown };
  /** The unit's outputs were discarded (aborted transaction): re-run its records. */
  readonly rewind?: boolean;
  /** exactly_once: a newer producer owns the transactional id; the task must close. */
  readonly fenced?: boolean;
}

/**
 * Makes a task's unit of work durable and commits its offset, per `processing.guarantee`.
 * Implementations: `AtLeastOnceWriter` and `ExactlyOnceWriter`.
 */
export interface TaskWriter {
  /**
   * @param unit the outputs and records since the last durable point
   * @param nextOffset the next offset to read once the unit is durable
   * @param commitDue whether the commit interval has elapsed (or a commit is forced)
   */
  write(unit: UnitOfWork, nextOffset: number, commitDue: boolean): Promise<WriteResult>;
  /** The last committed offset (next offset to read). */
  readonly committedOffset: number;
}
