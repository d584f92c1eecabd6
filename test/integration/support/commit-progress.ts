/**
 * A run's progress and timeline, for the crash test and the fault campaign: the input records a
 * consumer group has committed (sampled at every probe, for the run's peak rate), the lag, timed
 * events, and what the run's workers logged that matters to a crash story.
 *
 * @example
 * const progress = new CommitProgress(fx.admin, applicationId, sourceTopic);
 * await progress.note('SIGKILL #1'); // "3.2s SIGKILL #1 (1200 committed)"
 * progress.peakPerMs(); // committed records per ms, fastest over ≥ 1 s
 */
import type { Admin } from 'kafkajs';
import type { WorkerProcess } from '../../../scripts/lib/worker-process.js';

/** Committed-offset samples of one consumer group on one topic, and the run's events. */
export class CommitProgress {
  /** Every probe's result: when (epoch ms) and the committed records summed over the partitions. */
  readonly samples: Array<{ readonly atMs: number; readonly committed: number }> = [];
  /** `<seconds since began>s <what> (<committed> committed)`, in order. */
  readonly events: string[] = [];

  constructor(
    private readonly admin: Admin,
    private readonly groupId: string,
    private readonly topic: string,
    /** Epoch ms that event times count from. */
    readonly began: number = Date.now(),
  ) {}

  /** Input records committed now (summed over the partitions); undefined when the broker does not answer. */
  async committed(): Promise<number | undefined> {
    const [offsets] = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] }).catch(() => []);
    if (offsets === undefined) return undefined;
    const done = offsets.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    this.samples.push({ atMs: Date.now(), committed: done });
    return done;
  }

  /** Input records not committed yet (log-end offsets minus committed); undefined when the broker does not answer. */
  async lag(): Promise<number | undefined> {
    const ends = await this.admin.fetchTopicOffsets(this.topic).catch(() => undefined);
    const done = await this.committed();
    if (ends === undefined || done === undefined) return undefined;
    return ends.reduce((n, p) => n + Number(p.high), 0) - done;
  }

  /** Seconds since {@link began}, e.g. `12.3s`. */
  since(atMs: number = Date.now()): string {
    return `${((atMs - this.began) / 1000).toFixed(1)}s`;
  }

  /** Records an event with how many input records were committed by then. */
  async note(what: string): Promise<void> {
    const done = await this.committed();
    this.events.push(`${this.since()} ${what} (${done ?? '?'} committed)`);
  }

  /** The fastest progress between two samples at least `windowMs` apart, committed records per ms. */
  peakPerMs(windowMs = 1_000): number {
    let peak = 0;
    for (let i = 1; i < this.samples.length; i++) {
      const q = this.samples[i]!;
      // The latest sample at least windowMs before q.
      let j = i - 1;
      while (j > 0 && q.atMs - this.samples[j]!.atMs < windowMs) j--;
      const p = this.samples[j]!;
      if (q.atMs - p.atMs >= windowMs) peak = Math.max(peak, (q.committed - p.committed) / (q.atMs - p.atMs));
    }
    return peak;
  }
}

/** How often the workers logged each warning, error, fence, assignment or crash message. */
export function notableLogCounts(workers: readonly WorkerProcess[]): Map<string, number> {
  const logs = new Map<string, number>();
  for (const w of workers)
    for (const l of w.logs) if (l.level >= 40 || /fenced|assigned|crashed/.test(l.msg)) logs.set(l.msg, (logs.get(l.msg) ?? 0) + 1);
  return logs;
}
