import type { TopicPartitionOffset } from '../record/record-types.js';

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Keeps at most one offset commit of a consumer in flight. A worker's tasks commit
 * concurrently, each at the end of its commit interval: during a broker outage their commits
 * would pile up in librdkafka's queue, one request per task. Commits asked for while one is in
 * flight are merged (the last offset per partition wins) into the next; each caller's promise
 * settles with the commit that carried its offsets.
 */
export class CommitCoalescer {
  private pending = new Map<string, TopicPartitionOffset>();
  private waiters: Waiter[] = [];
  private running = false;

  constructor(private readonly commitNow: (offsets: TopicPartitionOffset[]) => Promise<void>) {}

  commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    if (offsets.length === 0) return Promise.resolve();
    for (const o of offsets) this.pending.set(`${o.topic}\u0000${o.partition}`, o);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.running) void this.pump();
    return done;
  }

  private async pump(): Promise<void> {
    this.running = true;
    while (this.waiters.length > 0) {
      const offsets = [...this.pending.values()];
      const waiters = this.waiters;
      this.pending = new Map();
      this.waiters = [];
      try {
        await this.commitNow(offsets);
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters) w.reject(error);
      }
    }
    this.running = false;
  }
}
