import type { PortName } from './ports.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * What a {@link TaskWriter} achieved:
 * - `deferred`: nothing written yet (exactly_once between commits);
 * - `durable`: the unit's outputs are durable in Kafka (acknowledged, or in a committed
 *   transaction); `committed` says whether the offset was committed too, and `commitError` why
 *   not when committing it failed (at_least_once: the outputs stay durable, the commit is
 *   retried);
 * - `rewind`: the unit's outputs were discarded (an aborted transaction): re-run its records;
 * - `fenced`: exactly_once: a newer producer owns the transactional id; the task must close;
 * - `failed`: a port failed before anything became durable; write the same unit again later.
 */
export type WriteResult =
  | { readonly kind: 'deferred' }
  | { readonly kind: 'durable'; readonly committed: boolean; readonly commitError?: unknown }
  | { readonly kind: 'rewind'; readonly error: unknown }
  | { readonly kind: 'fenced'; readonly error: unknown }
  | { readonly kind: 'failed'; readonly port: Extract<PortName, 'produce' | 'transaction'>; readonly error: unknown };

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
  /**
   * exactly_once: a transaction of the unit is in doubt (its commit failed) and the next
   * `write()` resolves it rather than sending the unit again. Absent or false otherwise.
   */
  readonly resolvingInDoubt?: boolean;
}
