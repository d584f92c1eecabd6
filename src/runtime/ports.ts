import type { OutputRecord, TopicPartitionOffset } from '../record/record-types.js';

/**
 * The ports a PartitionTask talks to. The worker binds them to kafkajs and ioredis; the
 * TopologyTestDriver binds them to in-memory fakes and a ManualClock. The runtime never
 * imports kafkajs or ioredis.
 */

/** The ports whose failures a task reports and backs off from (`weir_port_errors_total{port}`). */
export type PortName = 'produce' | 'commit' | 'transaction' | 'dedup';

/** Wall-clock time, injected so backoff and due times are testable. */
export interface Clock {
  /** Current time, epoch ms. */
  now(): number;
  /**
   * Calls `fn` once `delayMs` have passed on this clock (attempt timeouts); returns a function
   * that cancels it. Absent: the system timer (`setTimeout`). The ManualClock fires it when
   * virtual time gets there.
   */
  after?(delayMs: number, fn: () => void): () => void;
}

/**
 * at_least_once output port: an idempotent producer with `acks=-1`.
 * `send` resolves only when every record is acknowledged by the broker; it rejects when any
 * record could not be written (the caller sends the same records again later).
 */
export interface RecordProducer {
  send(records: readonly OutputRecord[]): Promise<void>;
}

/** at_least_once offset port: commits consumer-group offsets (next offset to read). */
export interface OffsetCommitter {
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void>;
}

/**
 * exactly_once output port: one transactional producer per task, with
 * `transactional.id = <application.id>-<topic>-<partition>`.
 *
 * Errors: any method may reject. A rejection whose error is a `ProducerFencedError` (code
 * `WEIR_PRODUCER_FENCED`) means a newer instance owns the transactional id: the task is a
 * zombie and must close.
 */
export interface TransactionalProducer {
  readonly transactionalId: string;
  begin(): Promise<void>;
  /**
   * Adds records to the open transaction. It may resolve before the broker acknowledged them
   * (librdkafka queues them): `sendOffsets` and `commit` wait for every acknowledgement first,
   * and reject when a record was not delivered, so a committed transaction holds every record
   * sent in it.
   */
  send(records: readonly OutputRecord[]): Promise<void>;
  /** Adds the consumer offsets to the transaction (Kafka's `sendOffsetsToTransaction`). */
  sendOffsets(groupId: string, offsets: readonly TopicPartitionOffset[]): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
  /**
   * Throws away the producer's transaction state and initializes the transactional id again
   * (`InitProducerId`). When it resolves, every earlier transaction of this id is complete —
   * committed or aborted — so its outcome can be read back. Used after a failed `commit` or
   * `abort`, whose outcome is in doubt (kafkajs leaves its producer stuck there).
   */
  reset(): Promise<void>;
}

/** Reads a consumer group's committed offsets. */
export interface OffsetReader {
  /** The committed offset (next offset to read) of a partition, or undefined when none. */
  committedOffset(groupId: string, topic: string, partition: number): Promise<number | undefined>;
  /**
   * The committed offset of a partition and the metadata committed with it, or undefined when
   * none. A transaction that has committed but whose markers are not yet written may not show:
   * librdkafka reads with `require_stable` (KIP-447) and waits for it; kafkajs (no KIP-447 offset
   * fetch) may read the position before it. The exactly_once writer reads only after `reset()`,
   * whose InitProducerId returns once its own earlier transactions are complete.
   */
  committedPosition(groupId: string, topic: string, partition: number): Promise<CommittedPosition | undefined>;
}

/** A committed offset (next offset to read) and its metadata string (undefined when empty). */
export interface CommittedPosition {
  readonly offset: number;
  readonly metadata: string | undefined;
}

/** A dedup key's state after a claim. */
export type ClaimStatus =
  /** Claimed by this owner: process the record. */
  | 'claimed'
  /** Already processed within the dedup window: skip the record. */
  | 'duplicate'
  /** Claimed by another owner and not yet confirmed: wait and claim again. */
  | 'busy';

/** A dedup key and the offset of the record that claims it. */
export interface DedupClaim {
  readonly key: string;
  readonly offset: number;
}

/**
 * Dedup store port (idempotent consumption), with claim-then-confirm semantics. Keys are
 * the user's dedup keys; the store adds its namespace (Redis:
 * `weir:dedup:{<application.id>:<bucket>}:k:<key>`, see `dedupKeyLayout`).
 * The owner of a claim is a task identity (`<topic>-<partition>`), stable across restarts,
 * so a restarted task takes over its own claims. Each call is one round trip for all keys.
 *
 * Errors: every method rejects with a `DedupStoreError` when the store is unreachable.
 */
export interface DedupStore {
  /**
   * Claims keys for `owner` for `claimTtlMs`: a free key, or one already claimed by `owner`,
   * is `'claimed'`; a key marked done is `'duplicate'`; a key claimed by another owner is
   * `'busy'`. A claim that is never confirmed expires after `claimTtlMs` (crash safety).
   */
  claim(claims: readonly DedupClaim[], owner: string, claimTtlMs: number): Promise<ClaimStatus[]>;
  /** Confirms `owner`'s claims on keys: they count as duplicates for `ttlMs` (the dedup window). */
  markDone(keys: readonly string[], owner: string, ttlMs: number): Promise<void>;
  /**
   * Crash recovery at task start: `owner`'s unconfirmed claims made by records below
   * `committedOffset` belong to records whose outcome is committed, so they are confirmed
   * (marked done for `ttlMs`). Claims at or above it stay `owner`'s.
   *
   * @returns how many keys were confirmed
   */
  recover(owner: string, committedOffset: number, ttlMs: number): Promise<number>;
  close(): Promise<void>;
}
