import { describe, expect, it } from 'vitest';
import { taskHarness } from '../runtime/partition-task.test-support.js';
import type { MetricEvent } from './metric-events.js';
import { WorkerMetrics } from './worker-metrics.js';

/** The samples of the counters and histograms of a registry's exposition (gauges, help and Node's process metrics left out). */
async function counted(metrics: WorkerMetrics): Promise<string[]> {
  const text = await metrics.registry.metrics();
  return text.split('\n').filter((l) => /^weir_\w+(_total|_bucket|_sum|_count)\{/.test(l) && !/^weir_process_(?!duration_)/.test(l));
}

describe.each(['info', 'debug'] as const)(
  'metric events: a stream thread forwards what it counts to its process (recording level %s)',
  (recordingLevel) => {
    it('counts the same in the process as the thread would have, one event per poll or flush', async () => {
      const local = new WorkerMetrics({}, { recordingLevel });
      const events: MetricEvent[] = [];
      const thread = new WorkerMetrics({}, { thread: '1', forward: (e) => events.push(structuredClone(e)), recordingLevel });
      const process = new WorkerMetrics({}, { recordingLevel });
      let calls = 0;
      const run = async (listener: ReturnType<WorkerMetrics['listener']>) => {
        calls = 0;
        const h = taskHarness({
          fn: (r) => {
            calls++;
            const value = r.value as { fail?: boolean; bad?: boolean };
            if (value.bad) throw new TypeError('bad');
            if (value.fail === true && calls % 2 === 1) throw new Error('flaky');
            return r.value;
          },
          options: { retry: { maxAttempts: 3, backoff: { initialMs: 1, multiplier: 1, maxMs: 1, jitter: 'none' } } },
          listener,
        });
        await h.send(Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: i % 10 === 0 ? { bad: true } : { fail: i % 4 === 0 } })));
        expect(await h.drive(h.makeTask())).toEqual({ kind: 'idle' });
        return h.events.length;
      };
      await run(local.listener());
      const records = await run(thread.listener());
      thread.countRebalance();
      for (const e of events) process.count(e, '1');

      // Per poll and per flush, not per record.
      expect(events.length).toBeLessThan(records);
      // Latencies are measured when the event was made, so they may differ by a bucket: compare the rest.
      const same = (lines: string[]) => lines.filter((l) => !l.startsWith('weir_end_to_end_latency_seconds_'));
      const local_ = same(await counted(local));
      expect(local_.length).toBeGreaterThan(5);
      expect(same(await counted(process)).filter((l) => !l.startsWith('weir_rebalances_total'))).toEqual(local_);
      expect(await counted(process)).toContain('weir_rebalances_total{thread="1"} 1');
      // The attempts' durations travel and are recorded at debug only.
      const durations = local_.filter((l) => l.startsWith('weir_process_duration_seconds_count'));
      const carried = events.filter((e) => e.kind === 'records' && e.attemptDurationsMs !== undefined);
      if (recordingLevel === 'debug') {
        expect(durations.length).toBeGreaterThan(0);
        expect(carried.length).toBeGreaterThan(0);
      } else {
        expect(durations).toEqual([]);
        expect(carried).toEqual([]);
      }
      // The thread's own registry counted nothing.
      expect(await counted(thread)).toEqual([]);
    });

    it('counts a success when its outputs are durable, not when it is decided', async () => {
      const metrics = new WorkerMetrics();
      metrics.count({
        kind: 'records',
        topic: 'in',
        counts: { success: 3, retry: 1, held: 0, 'dead-letter': 0, duplicate: 0 },
        attemptDurationsMs: { success: [1, 2, 3] },
      });
      const value = async (outcome: string) => (await metrics.records.get()).values.find((v) => v.labels['outcome'] === outcome)?.value;
      expect(await value('success')).toBeUndefined();
      metrics.count({ kind: 'flush', topic: 'in', committed: true, durationMs: 5, decidedTimestampsMs: { success: [0, 0] }, atMs: 10 });
      expect(await value('success')).toBe(2);
      expect(await value('retry')).toBe(1);
    });
  },
);
