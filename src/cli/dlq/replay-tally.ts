import type { ReplayCounts } from './replay-progress.js';

/** What a replay did, record by record. */
export class ReplayTally {
  scanned = 0;
  replayed = 0;
  skipped = 0;
  /** Dead letters of an original record this run already replayed (same `weir.original.*`): not sent again. */
  duplicates = 0;
  /** Refused records, by reason (`max-replays`, `no-original-topic`, `target-is-dlq`, `bad-replay-header`, `omitted-parts`, `target-missing`). */
  readonly refusedBy = new Map<string, number>();
  /** Replayed records, by target topic. */
  readonly replayedTo = new Map<string, number>();

  get refused(): number {
    let n = 0;
    for (const v of this.refusedBy.values()) n += v;
    return n;
  }

  refuse(reason: string): void {
    this.refusedBy.set(reason, (this.refusedBy.get(reason) ?? 0) + 1);
  }

  counts(): ReplayCounts {
    return { scanned: this.scanned, replayed: this.replayed, refused: this.refused, skipped: this.skipped };
  }
}
