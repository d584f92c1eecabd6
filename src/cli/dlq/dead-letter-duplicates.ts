import type { DeadLetterView } from './dead-letter-view.js';

/** The original record a dead letter stands for: `weir.original.topic/partition/offset` (the DLQ coordinates without them). */
function originKey(view: DeadLetterView): string {
  return `${view.origin.topic}\u0000${view.origin.partition}\u0000${view.origin.offset}`;
}

/**
 * Finds duplicate dead letters: DLQ records that share `weir.original.topic`,
 * `weir.original.partition` and `weir.original.offset`, i.e. stand for one original record.
 * Under at_least_once a crash between writing a dead letter and committing its input offset
 * writes it again; a replayed record that fails again is dead-lettered again too (with a
 * higher `weir.replay.count`). `weir dlq inspect` flags and counts them; `weir dlq replay`
 * sends each original record at most once per run.
 *
 * @example
 * const dups = new DeadLetterDuplicates();
 * if (!dups.add(view)) skip(view); // a dead letter of an original record seen before
 */
export class DeadLetterDuplicates {
  private readonly copies = new Map<string, number>();
  private repeated = 0;

  /**
   * Counts a dead letter.
   *
   * @returns true for the first dead letter of its original record, false for a duplicate
   */
  add(view: DeadLetterView): boolean {
    const key = originKey(view);
    const n = (this.copies.get(key) ?? 0) + 1;
    this.copies.set(key, n);
    if (n > 1) this.repeated++;
    return n === 1;
  }

  /** Dead letters counted so far that stand for the original record of `view` (1: no duplicate). */
  copiesOf(view: DeadLetterView): number {
    return this.copies.get(originKey(view)) ?? 0;
  }

  /** Dead letters beyond the first of their original record. */
  get duplicates(): number {
    return this.repeated;
  }

  /** Original records with more than one dead letter. */
  get originalsWithDuplicates(): number {
    let n = 0;
    for (const c of this.copies.values()) if (c > 1) n++;
    return n;
  }
}
