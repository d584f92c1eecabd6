import type { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import type { Random } from '../failure/backoff.js';
import type { CompileOverrides } from '../topology/compile.js';
import type { FaultSchedule } from './fault-schedule.js';
import type { ManualClock } from './manual-clock.js';

/** Options of a {@link TopologyTestDriver}. Times in ms. */
export interface TopologyTestDriverOptions {
  /** The virtual clock (default: a new ManualClock at 2024-01-01T00:00:00Z). */
  readonly clock?: ManualClock;
  /** Seed of the backoff-jitter random (default 1). */
  readonly seed?: number;
  /** Backoff-jitter source; wins over `seed`. */
  readonly random?: Random;
  /** Partitions of every source topic, or per source topic (default 1). Sinks, DLQs and tiers get their source's count. */
  readonly partitions?: number | Readonly<Record<string, number>>;
  /** `application.id`, `processing.guarantee`, `commit.interval.ms` overrides, as `weir run` flags. */
  readonly overrides?: CompileOverrides;
  /** Faults to inject (see {@link FaultSchedule}). More can be added with `schedule()`. */
  readonly faults?: FaultSchedule;
  /** The dedup store (default: a MemoryDedupStore on the driver's clock). */
  readonly dedupStore?: MemoryDedupStore;
  /** Records a task processes per poll (the task's default 500). */
  readonly maxPollRecords?: number;
  /** Records buffered per partition before fetching pauses (default 2000, as the worker). */
  readonly maxBufferedRecords?: number;
}
