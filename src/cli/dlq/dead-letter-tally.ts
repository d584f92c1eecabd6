import type { DeadLetterView } from './dead-letter-view.js';

/** Label counted for records without a `weir.error.class` or `weir.processor` header. */
export const UNKNOWN_LABEL = '(none)';

/** Counts of dead-letter records, as `weir dlq inspect` prints them. */
export interface DeadLetterCounts {
  readonly total: number;
  /** `weir.error.class` → records, most frequent first. */
  readonly byErrorClass: Readonly<Record<string, number>>;
  /** `weir.processor` → records, most frequent first. */
  readonly byProcessor: Readonly<Record<string, number>>;
}

/** Counts dead-letter records by error class and by processor, one record at a time. */
export class DeadLetterTally {
  private total = 0;
  private readonly errorClasses = new Map<string, number>();
  private readonly processors = new Map<string, number>();

  add(view: DeadLetterView): void {
    this.total++;
    bump(this.errorClasses, view.errorClass ?? UNKNOWN_LABEL);
    bump(this.processors, view.processor ?? UNKNOWN_LABEL);
  }

  /** The counts so far; each map sorted by count (descending), then by name. */
  counts(): DeadLetterCounts {
    return { total: this.total, byErrorClass: sorted(this.errorClasses), byProcessor: sorted(this.processors) };
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function sorted(map: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...map].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}
