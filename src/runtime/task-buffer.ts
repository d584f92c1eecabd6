import type { RetryHistory } from '../failure/retry-history.js';
import type { InputRecord } from '../record/record-types.js';
import type { ClaimStatus } from './ports.js';
import type { PreparedRecord } from './prepared-record.js';

/** A buffered record, and what the task learned about it before processing it. */
export interface Slot {
  readonly raw: InputRecord;
  prepared?: PreparedRecord;
  claim?: ClaimStatus;
  /**
   * The record failed and is tried again in place at `dueAt` (epoch ms), with this history: a
   * blocking-mode retry, or (`held`) a failure charged to an open circuit breaker.
   */
  retry?: {
    readonly history: RetryHistory;
    readonly dueAt: number;
    readonly held?: boolean;
    /** How many times the breaker held the record so far (at most its `maxAttempts`). */
    readonly holds?: number;
  };
  /** Its retry is waiting for a retry-budget token (counted once per wait). */
  budgetDelayed?: boolean;
  /**
   * A chain's record between steps: it reached step `step`, whose input is `prepared` (the
   * previous step's output). A retry in place resumes there, never rerunning earlier steps.
   */
  chain?: { readonly step: number; readonly prepared: PreparedRecord };
}

/**
 * A task's records between its fetcher and its durable point, in offset order: the first
 * `processed` ones belong to the open unit of work, the rest wait to be processed.
 * `position` is the next offset the fetcher delivers.
 */
export class TaskBuffer {
  private slots: Slot[] = [];
  private cursor = 0;
  private fetchPosition: number;

  constructor(startOffset: number) {
    this.fetchPosition = startOffset;
  }

  /** The next offset the fetcher delivers. */
  get position(): number {
    return this.fetchPosition;
  }

  /** Records buffered and not yet processed. */
  get unprocessed(): number {
    return this.slots.length - this.cursor;
  }

  /** The next record to process. */
  get head(): Slot | undefined {
    return this.slots[this.cursor];
  }

  /**
   * Appends fetched records; records below the position (re-delivered after a rebalance or a
   * seek) are dropped. `nextOffset` moves the position past trailing transaction markers.
   *
   * @returns how many records were accepted
   */
  enqueue(records: readonly InputRecord[], nextOffset?: number): number {
    let accepted = 0;
    for (const raw of records) {
      if (raw.offset < this.fetchPosition) continue;
      this.slots.push({ raw });
      this.fetchPosition = raw.offset + 1;
      accepted++;
    }
    if (nextOffset !== undefined && nextOffset > this.fetchPosition) this.fetchPosition = nextOffset;
    return accepted;
  }

  /** The head record was processed: it joins the unit of work. */
  advance(): void {
    this.cursor++;
  }

  /** The next offset to read once everything processed so far is durable. */
  nextOffset(): number {
    return this.cursor < this.slots.length ? this.slots[this.cursor]!.raw.offset : this.fetchPosition;
  }

  /** Up to `count` records from the head, not yet processed. */
  window(count: number): Slot[] {
    return this.slots.slice(this.cursor, this.cursor + count);
  }

  /** The records processed since the last durable point (the unit of work's), oldest first. */
  processed(): readonly Slot[] {
    return this.slots.slice(0, this.cursor);
  }

  /** Every record not yet processed. */
  waiting(): readonly Slot[] {
    return this.slots.slice(this.cursor);
  }

  /** How many records were processed since the last durable point. */
  get processedCount(): number {
    return this.cursor;
  }

  /**
   * A unit of work became durable: forget its records, the first `count` processed ones (by
   * default every processed record).
   */
  dropProcessed(count: number = this.cursor): void {
    this.slots = this.slots.slice(count);
    this.cursor -= count;
  }

  /**
   * The records processed after the first `count` are processed again (their unit was
   * discarded while an earlier unit's write is redone); a pending retry in place starts over.
   */
  rewindTo(count: number): void {
    if (count >= this.cursor) return;
    const head = this.slots[this.cursor];
    if (head !== undefined) head.retry = undefined;
    this.cursor = count;
  }

  /** The unit of work was aborted: its records are processed again, and a pending retry in place starts over. */
  rewind(): void {
    const head = this.slots[this.cursor];
    if (head !== undefined) head.retry = undefined;
    this.cursor = 0;
  }
}
