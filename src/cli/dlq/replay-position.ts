import { rangeSize, type OffsetRange } from '../../kafka/topic-range.js';

/**
 * Where a replay is in each partition of its ranges: the position committed with the last
 * chunk (in a dry run, the position reached). Offsets, not records, measure its progress:
 * transaction markers hold offsets of a DLQ topic written in transactions, so only offsets add
 * up to the ranges' size.
 */
export class ReplayPosition {
  private readonly positions: Map<number, number>;

  constructor(private readonly ranges: ReadonlyMap<number, OffsetRange>) {
    this.positions = new Map([...ranges].map(([p, r]) => [p, r.from]));
  }

  /** The offsets to pass: from each range's start to its end. */
  get total(): number {
    return rangeSize(this.ranges);
  }

  /** The position in `partition` (the next offset to read). */
  get(partition: number): number {
    return this.positions.get(partition) ?? 0;
  }

  set(partition: number, offset: number): void {
    this.positions.set(partition, offset);
  }

  /** The offsets passed so far, records and transaction markers alike: `total` once every partition is at its range's end. */
  passed(): number {
    let n = 0;
    for (const [p, r] of this.ranges) n += Math.max(0, Math.min(r.to, this.get(p)) - r.from);
    return n;
  }

  /**
   * The read reached the end of every range. A range may end in transaction markers the
   * reader passed without a record to show for them, so the last positions set can fall short.
   */
  reachedEnd(): void {
    for (const [p, r] of this.ranges) this.positions.set(p, Math.max(this.get(p), r.to));
  }
}
