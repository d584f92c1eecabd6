import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ThreadMetricsHistory, type MetricsSnapshot } from './thread-metrics-history.js';

/** A thread's registry: a counter of records and a gauge of tasks. */
function threadRegistry() {
  const registry = new Registry();
  const records = new Counter({ name: 'weir_records_total', help: 'records', labelNames: ['outcome'], registers: [registry] });
  const tasks = new Gauge({ name: 'weir_tasks', help: 'tasks', registers: [registry] });
  return { registry, records, tasks };
}

/** The process's exposition of `snapshots`, as `value(name)` reads it. */
async function scrape(snapshots: MetricsSnapshot[]): Promise<(name: string) => number | undefined> {
  const json = await AggregatorRegistry.aggregate(snapshots as Array<object>).getMetricsAsJSON();
  return (name) => {
    const metric = json.find((m) => m.name === name);
    return metric === undefined ? undefined : (metric.values as Array<{ value: number }>).reduce((n, v) => n + v.value, 0);
  };
}

describe('ThreadMetricsHistory', () => {
  it('keeps the counters of a replaced thread in the sums, never the gauges, so no counter goes down', async () => {
    const history = new ThreadMetricsHistory();
    const first = threadRegistry();
    first.records.inc({ outcome: 'success' }, 40);
    first.tasks.set(3);
    const before = await scrape(history.forScrape(1, await first.registry.getMetricsAsJSON()));
    expect(before('weir_records_total')).toBe(40);
    expect(before('weir_tasks')).toBe(3);

    // The thread ends; its replacement starts from zero and counts 5.
    await history.threadEnded(1);
    const second = threadRegistry();
    second.records.inc({ outcome: 'success' }, 5);
    second.tasks.set(2);
    const after = await scrape(history.forScrape(1, await second.registry.getMetricsAsJSON()));
    expect(after('weir_records_total')).toBe(45);
    expect(after('weir_tasks')).toBe(2);

    // A second replacement adds up again.
    await history.threadEnded(1);
    const third = await scrape(history.forScrape(1, await threadRegistry().registry.getMetricsAsJSON()));
    expect(third('weir_records_total')).toBe(45);
  });

  it('counts a thread that did not answer this scrape with its last counters, and leaves out its gauges', async () => {
    const history = new ThreadMetricsHistory();
    const t = threadRegistry();
    t.records.inc({ outcome: 'success' }, 7);
    t.tasks.set(3);
    history.forScrape(2, await t.registry.getMetricsAsJSON());
    const silent = await scrape(history.forScrape(2, undefined));
    expect(silent('weir_records_total')).toBe(7);
    expect(silent('weir_tasks')).toBeUndefined();
  });

  it('keeps each slot apart', async () => {
    const history = new ThreadMetricsHistory();
    const a = threadRegistry();
    a.records.inc({ outcome: 'success' }, 1);
    const b = threadRegistry();
    b.records.inc({ outcome: 'success' }, 10);
    history.forScrape(1, await a.registry.getMetricsAsJSON());
    history.forScrape(2, await b.registry.getMetricsAsJSON());
    await history.threadEnded(2);
    const value = await scrape([
      ...history.forScrape(1, await a.registry.getMetricsAsJSON()),
      ...history.forScrape(2, await threadRegistry().registry.getMetricsAsJSON()),
    ]);
    expect(value('weir_records_total')).toBe(11);
  });
});
