/**
 * The operability metrics of `weir run --metrics-port` on the real broker: lag per partition of
 * sources and retry tiers that reaches 0 after a drain, retry-tier backlog, task states, and the
 * histograms of attempt duration (`--metrics-recording-level debug`), end-to-end latency and
 * commit duration, with counts that match what the run did.
 */
import { describe, expect, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { runWeir } from '../../scripts/lib/worker-process.js';
import type { TopologyStatus } from '../../src/cli/topology-status.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { SCRIPTED_TOPOLOGY, ScriptedScenarios, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-metrics');
const scenarios = new ScriptedScenarios(fx);

/** The samples of `name` as label sets with their values. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = Object.fromEntries(
      [...line.slice(name.length + 1, line.lastIndexOf('}')).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    out.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return out;
}

describe(onClient('weir run: lag, backlog, task state and latency metrics'), () => {
  it('reports lag per source and tier partition that reaches 0 after a drain, and histograms that count every attempt and outcome', async () => {
    const delayMs = 100;
    const sc = await scenarios.create('weir-it-metrics', {
      partitions: 3,
      env: { WEIR_TEST_RETRY_MODE: 'topics', WEIR_TEST_MAX_ATTEMPTS: '3', WEIR_TEST_RECORD_DELAY_MS: String(delayMs) },
    });
    const scripts: Script[] = [
      ...Array.from({ length: 20 }, (_, i) => ({ id: `ok${i}`, seq: i })),
      ...Array.from({ length: 5 }, (_, i) => ({ id: `tier${i}`, seq: 20 + i, failAttempts: 1 })),
      ...Array.from({ length: 5 }, (_, i) => ({ id: `fatal${i}`, seq: 25 + i, kind: 'fatal' as const })),
    ];
    await sc.send(scripts, 30);
    const port = await freePort();
    const worker = sc.start(['--metrics-port', String(port), '--metrics-recording-level', 'debug']);
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    await worker.waitForLog((l) => l.msg === 'task started');

    // Records wait (100 ms each): the first scrapes see lag on the source.
    const busy = await waitFor(
      async () => {
        const text = await scrape().catch(() => '');
        return sumMetric(text, 'weir_consumer_lag_records', { topic: sc.topics.source }) > 0 ? text : undefined;
      },
      30_000,
      () => 'no source lag seen',
      50,
    );
    expect(sumMetric(busy, 'weir_consumer_lag_records', { topic: sc.topics.source })).toBeLessThanOrEqual(scripts.length);

    // Drain: every outcome is out, and the group committed everything.
    expect((await sc.outcomes((rs) => rs.length >= 30, 60_000)).complete).toBe(true);
    // maxAttempts 3: two retries, two tiers (10 ms and 20 ms); the records that fail once succeed in the first.
    const tiers = [0, 1].map((n) => `${sc.id}.scripted.retry.${n}`);
    const tier = tiers[0]!;
    expect(await waitForGroupCaughtUp(fx.kafka, sc.id, [sc.topics.source, ...tiers], 60_000)).toBe(true);
    let lastLag: unknown;
    const text = await waitFor(
      async () => {
        const t = await scrape();
        const lag = samples(t, 'weir_consumer_lag_records');
        lastLag = lag;
        return lag.length === 9 && lag.every((s) => s.value === 0) ? t : undefined;
      },
      30_000,
      () => `lag did not reach 0 on all 9 partitions: ${JSON.stringify(lastLag)}`,
    );
    const lagTopics = new Set(samples(text, 'weir_consumer_lag_records').map((s) => s.labels['topic']));
    expect(lagTopics).toEqual(new Set([sc.topics.source, ...tiers]));
    const backlog = samples(text, 'weir_retry_tier_backlog_records');
    expect(new Set(backlog.map((s) => s.labels['topic']))).toEqual(new Set(tiers));
    expect(backlog.every((s) => s.value === 0)).toBe(true);
    const states = samples(text, 'weir_task_state');
    expect(states.length).toBe(9);
    expect(states.every((s) => s.labels['state'] === 'running' && s.value === 1)).toBe(true);

    // Recording level debug: 20 + 5 × 2 + 5 attempts, each at least 100 ms; 35 durable outcomes (30 final + 5 tier copies).
    const attempts = sumMetric(text, 'weir_process_duration_seconds_count');
    expect(attempts).toBe(35);
    expect(sumMetric(text, 'weir_process_duration_seconds_sum')).toBeGreaterThanOrEqual((35 * delayMs) / 1_000);
    expect(sumMetric(text, 'weir_process_duration_seconds_count', { outcome: 'retry' })).toBe(5);
    expect(sumMetric(text, 'weir_end_to_end_latency_seconds_count')).toBe(35);
    expect(sumMetric(text, 'weir_end_to_end_latency_seconds_count', { outcome: 'dead-letter' })).toBe(5);
    expect(sumMetric(text, 'weir_end_to_end_latency_seconds_count', { outcome: 'success', topic: tier })).toBe(5);
    const commits = sumMetric(text, 'weir_commits_total');
    expect(commits).toBeGreaterThan(0);
    expect(sumMetric(text, 'weir_commit_duration_seconds_count')).toBe(commits);
    expect(text).toContain('# TYPE weir_process_duration_seconds histogram');
    expect(await worker.stop('SIGTERM')).toBe(0);
  });

  it('counts records waiting in a retry tier as its backlog until they are due, and weir status lists the tier partitions', async () => {
    const sc = await scenarios.create('weir-it-backlog', {
      partitions: 2,
      // One retry, through one tier whose records wait 4 s.
      env: { WEIR_TEST_RETRY_MODE: 'topics', WEIR_TEST_MAX_ATTEMPTS: '2', WEIR_TEST_BACKOFF_MS: '4000', WEIR_TEST_BACKOFF_MAX_MS: '4000' },
    });
    const port = await freePort();
    const worker = sc.start(['--metrics-port', String(port)]);
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    await worker.waitForLog((l) => l.msg === 'task started');
    await sc.send(Array.from({ length: 3 }, (_, seq) => ({ id: `wait${seq}`, seq, failAttempts: 1 })));
    const tier = `${sc.id}.scripted.retry.0`;
    const waiting = await waitFor(
      async () => {
        const text = await scrape();
        return sumMetric(text, 'weir_retry_tier_backlog_records', { topic: tier }) === 3 ? text : undefined;
      },
      30_000,
      () => 'the tier backlog never reached 3',
      50,
    );
    expect(sumMetric(waiting, 'weir_consumer_lag_records', { topic: tier })).toBe(3);
    expect(sumMetric(waiting, 'weir_records_total', { outcome: 'success' })).toBe(0);
    // Recording level info (the default): attempts ran (3 failed), but no per-attempt histogram.
    expect(sumMetric(waiting, 'weir_records_total', { outcome: 'retry' })).toBe(3);
    expect(waiting).not.toContain('weir_process_duration_seconds');
    expect((await sc.outcomes((rs) => rs.length >= 3, 30_000)).complete).toBe(true);
    await waitFor(
      async () => sumMetric(await scrape(), 'weir_retry_tier_backlog_records', { topic: tier }) === 0,
      30_000,
      () => 'the tier backlog did not drain',
    );
    expect(await waitForGroupCaughtUp(fx.kafka, sc.id, [sc.topics.source, tier], 60_000)).toBe(true);
    const status = await runWeir(['status', SCRIPTED_TOPOLOGY, '--application-id', sc.id, '--format', 'json', '--brokers', fx.brokers], {
      env: {
        WEIR_TEST_SOURCE: sc.topics.source,
        WEIR_TEST_SINK: sc.topics.sink,
        WEIR_TEST_DLQ: sc.topics.dlq,
        WEIR_TEST_RETRY_MODE: 'topics',
        WEIR_TEST_MAX_ATTEMPTS: '2',
        WEIR_TEST_BACKOFF_MS: '4000',
        WEIR_TEST_BACKOFF_MAX_MS: '4000',
      },
    });
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as TopologyStatus;
    const tierRows = report.partitions.filter((p) => p.kind === 'retry-tier');
    expect(tierRows.map((p) => `${p.topic}-${p.partition}`)).toEqual([`${tier}-0`, `${tier}-1`]);
    expect(tierRows.reduce((n, p) => n + p.end, 0)).toBe(3);
    // A tier partition that never held a record has no committed offset (null, as kafka-consumer-groups shows '-').
    expect(tierRows.every((p) => p.lag === 0 && (p.committed === p.end || (p.end === 0 && p.committed === null)))).toBe(true);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });
});
