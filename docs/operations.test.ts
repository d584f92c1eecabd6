/**
 * The checked-in operations files of docs/operations.md: the Grafana dashboard is valid JSON
 * whose queries name only metrics weir exports, and so are the Prometheus alert rules; the
 * Kubernetes Deployment probes the endpoints the worker serves.
 */
import { readFileSync } from 'node:fs';
import { Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { WorkerMetrics } from '../src/observability/worker-metrics.js';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** Every series name weir's /metrics can hold, at the recording level that records most (histograms: their _bucket, _sum and _count series). */
function exportedSeries(): Set<string> {
  const names = new Set<string>();
  for (const metric of new WorkerMetrics({}, { recordingLevel: 'debug' }).registry.getMetricsAsArray()) {
    const { name } = metric as unknown as { name: string };
    names.add(name);
    if (metric instanceof Histogram) for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

const metricNames = (expr: string): string[] => [...expr.matchAll(/\bweir_[a-z0-9_]+/g)].map((m) => m[0]);

interface Dashboard {
  readonly title: string;
  readonly panels: ReadonlyArray<{ readonly title: string; readonly targets: ReadonlyArray<{ readonly expr: string }> }>;
}

describe('operations files', () => {
  const exported = exportedSeries();

  it('the Grafana dashboard is valid JSON and its queries name only metrics weir exports', () => {
    const dashboard = JSON.parse(read('deploy/grafana/weir-dashboard.json')) as Dashboard;
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    const used = new Set(exprs.flatMap(metricNames));
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    for (const name of [
      'weir_records_total',
      'weir_consumer_lag_records',
      'weir_retry_tier_backlog_records',
      'weir_dead_letters_total',
      'weir_process_duration_seconds_bucket',
      'weir_end_to_end_latency_seconds_bucket',
      'weir_commit_duration_seconds_bucket',
      'weir_circuit_state',
      'weir_task_state',
      'weir_parked_keys',
      'weir_parked_records',
      'weir_parked_full',
    ])
      expect(used).toContain(name);
  });

  it('the Prometheus alert rules name only metrics weir exports, and cover lag, dead letters, an open breaker, missing commits and a partition at maxParkedKeys', () => {
    const rules = read('deploy/prometheus/weir-alerts.yml');
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts).toEqual([
      'WeirConsumerLagGrowing',
      'WeirDeadLetterRate',
      'WeirCircuitBreakerOpen',
      'WeirNoCommits',
      'WeirPortErrors',
      'WeirParkedKeysFull',
    ]);
    const used = new Set(metricNames(rules));
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    for (const name of [
      'weir_consumer_lag_records',
      'weir_dead_letters_total',
      'weir_circuit_state',
      'weir_commits_total',
      'weir_parked_full',
    ])
      expect(used).toContain(name);
  });

  it('the Kubernetes Deployment probes /healthz and /readyz on the metrics port', () => {
    const deployment = read('deploy/kubernetes/weir-deployment.yaml');
    expect(deployment).toMatch(/livenessProbe:\s+httpGet: \{ path: \/healthz, port: metrics \}/);
    expect(deployment).toMatch(/readinessProbe:\s+httpGet: \{ path: \/readyz, port: metrics \}/);
    expect(deployment).toContain("'--metrics-port', '9464'");
  });
});
