import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** One registry's metrics as prom-client's `getMetricsAsJSON()` gives them. */
export type MetricsSnapshot = ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>;

/** Metric types whose values only grow while their thread lives. */
const MONOTONIC_TYPES = new Set<string>(['counter', 'histogram']);

const monotonicOnly = (snapshot: MetricsSnapshot): MetricsSnapshot => snapshot.filter((m) => MONOTONIC_TYPES.has(String(m.type)));

/**
 * Keeps the process's `/metrics` counters monotonic while stream threads come and go. Each
 * thread's registry starts from zero, so without this a thread that is replaced — or that misses
 * a scrape (its answer timed out) — would take its counts out of the process's sums, and
 * Prometheus would read the drop as a counter reset (a false `rate()` spike).
 *
 * Per thread slot it keeps the last snapshot its thread answered; when that thread ends, the
 * counters and histograms of that snapshot are kept for good and added to every later scrape of
 * the slot (gauges are not: they describe the thread that is gone). Counts a thread made after
 * its last scrape are never seen; that is an undercount, never a reset.
 */
export class ThreadMetricsHistory {
  private readonly last = new Map<number, MetricsSnapshot>();
  /** Per slot: the summed monotonic metrics of its ended threads. */
  private readonly ended = new Map<number, MetricsSnapshot>();

  /**
   * The snapshots to aggregate for slot `thread` in this scrape: its thread's answer (remembered
   * as its last), or — no answer — its last snapshot's counters and histograms; and what its
   * ended threads counted.
   */
  forScrape(thread: number, answer: MetricsSnapshot | undefined): MetricsSnapshot[] {
    if (answer !== undefined) this.last.set(thread, answer);
    const current = answer ?? monotonicOnly(this.last.get(thread) ?? []);
    const ended = this.ended.get(thread);
    return ended === undefined ? [current] : [current, ended];
  }

  /** The thread of slot `thread` ended: its last counters and histograms stay in the sums. */
  async threadEnded(thread: number): Promise<void> {
    const last = this.last.get(thread);
    if (last === undefined) return;
    const ended = this.ended.get(thread);
    const kept = monotonicOnly(last);
    const sum = ended === undefined ? kept : await AggregatorRegistry.aggregate([ended, kept] as Array<object>).getMetricsAsJSON();
    // Swapped at once, so a scrape meanwhile counts the ended thread once.
    this.ended.set(thread, sum);
    if (this.last.get(thread) === last) this.last.delete(thread);
  }
}
