import type { OutputRecord } from '../record/record-types.js';
import type { ParkedState } from './parked-records.js';

/**
 * The records a task processed since its last durable point, with everything they produced:
 * outputs for sinks, retry tiers and the DLQ, and the dedup keys to confirm. Written all at
 * once: at the next flush (at_least_once) or in one transaction (exactly_once).
 */
export class UnitOfWork {
  readonly outputs: OutputRecord[] = [];
  readonly dedupKeys: string[] = [];
  private readonly seen = new Set<string>();
  /** Records processed in this unit, duplicates included. */
  records = 0;

  /**
   * @param parked an `order: 'key'` task's parked records when the unit began: what the task
   *   goes back to when the unit is aborted
   */
  constructor(readonly parked?: ParkedState) {}

  /** Adds one processed record's outputs and dedup key. */
  add(outputs: readonly OutputRecord[], dedupKey: string | null): void {
    for (const output of outputs) this.outputs.push(output);
    if (dedupKey !== null && !this.seen.has(dedupKey)) {
      this.seen.add(dedupKey);
      this.dedupKeys.push(dedupKey);
    }
    this.records++;
  }

  /** Counts a skipped duplicate (it has no outputs, but its offset is committed with the unit). */
  addDuplicate(): void {
    this.records++;
  }

  /** True when an earlier record of this unit carried `key` (a duplicate not yet confirmed). */
  hasKey(key: string): boolean {
    return this.seen.has(key);
  }

  get isEmpty(): boolean {
    return this.records === 0;
  }
}
