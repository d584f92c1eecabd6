/**
 * `weir run` with Redis dedup on the real broker and Redis: duplicates dropped (in one partition
 * and across partitions), counted, and the Redis traffic measured server-side (one script call
 * per batch, not per record); and the Redis failure policy — `'fail'` pauses and retries,
 * `'skip-dedup'` goes on without dedup — both logged and counted, against a Redis this file
 * starts and stops on its own port.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import { ensureRedis, stopRedis } from '../../scripts/lib/redis-server.js';
import { kafkaPaths } from '../../scripts/lib/repo-paths.js';
import { produce, readToEnd, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-dedup');
const scenarios = new ScriptedScenarios(fx);

/** Stops a Redis this file started (on its own port) after all tests, and removes its log. */
function stopRedisAfterAll(url: string): void {
  fx.onTeardown(async () => {
    await stopRedis(url);
    await rm(path.join(kafkaPaths.runtimeDir, `redis-${new URL(url).port}.log`), { force: true });
  });
}

async function scenario(name: string, env: Record<string, string>, redisUrl: string) {
  const metricsPort = await freePort();
  const sc = await scenarios.create(`weir-it-${name}`, {
    env: { WEIR_TEST_DEDUP: 'redis', ...env },
    args: ['--redis-url', redisUrl, '--metrics-port', String(metricsPort), '--session-timeout-ms', '6000'],
  });
  const { id, topics } = sc;
  fx.trackDedupKeys(id);
  const worker = sc.start();
  /** Sends `{ id }` records; `key` picks the partition key (default: the id). */
  const send = (ids: readonly string[], key = (id: string) => id) =>
    produce(
      fx.kafka,
      topics.source,
      ids.map((i, seq) => ({ key: key(i), value: JSON.stringify({ id: i, seq }) })),
    );
  const metric = async (name: string, labels: Record<string, string> = {}) =>
    sumMetric(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), name, labels);
  const sinkIds = async (n: number, timeoutMs = 60_000) =>
    (await readTopics(fx.kafka, [topics.sink], { until: (rs) => rs.length >= n, timeoutMs })).records.map(
      (r) => (JSON.parse(r.value!.toString()) as { id: string }).id,
    );
  return { id, topics, worker, send, metric, sinkIds };
}

const idOf = (r: ReadRecord) => (JSON.parse(r.value!.toString()) as { id: string }).id;

describe(onClient('weir run with Redis dedup'), () => {
  it('drops duplicate keys in one partition and across partitions, counts them, and calls Redis once per batch', async () => {
    const redisUrl = inject('redisUrl');
    const s = await scenario('dedup', {}, redisUrl);
    await s.worker.waitForLog((l) => l.msg === 'worker started');
    const client = new Redis(redisUrl);
    // Server-side counts of script calls (INFO commandstats): integration test files run one at
    // a time, so during this test only this worker runs scripts on this Redis.
    const scriptCallsSoFar = async (): Promise<number> => {
      const info = await client.info('commandstats');
      return [...info.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const callsBefore = await scriptCallsSoFar();
    try {
      const unique = Array.from({ length: 1500 }, (_, i) => `order-${i}`);
      const sameKey = unique.filter((_, i) => i % 20 === 0); // same id, same partition key
      const otherKey = unique.filter((_, i) => i % 20 === 10); // same id, another partition key
      await s.send(unique);
      await s.send(sameKey);
      await s.send(otherKey, (id) => `${id}-elsewhere`);
      expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 60_000)).toBe(true);
      const duplicates = sameKey.length + otherKey.length;
      expect(await s.metric('weir_records_total', { outcome: 'duplicate' })).toBe(duplicates);
      expect(await s.metric('weir_records_total', { outcome: 'success' })).toBe(unique.length);
      expect(await s.worker.stop('SIGTERM')).toBe(0);
      const out = await readToEnd(fx.kafka, [s.topics.sink], { timeoutMs: 60_000 });
      expect(out.map(idOf).sort()).toEqual([...unique].sort());
      const records = unique.length + duplicates;
      const scriptCalls = (await scriptCallsSoFar()) - callsBefore;
      console.log(
        `[dedup] ${records} records, ${duplicates} duplicates dropped; Redis script calls (INFO commandstats): ${scriptCalls} (claim, check before the write and confirm per batch, recover per task)`,
      );
      expect(scriptCalls).toBeGreaterThan(0);
      expect(scriptCalls).toBeLessThan(records / 10);
    } finally {
      client.disconnect();
    }
  });

  it.each(['fail', 'skip-dedup'] as const)(
    "with onStoreError '%s', logs and counts a Redis outage and processes every record",
    async (policy) => {
      const port = await freePort();
      const redisUrl = `redis://127.0.0.1:${port}`;
      stopRedisAfterAll(redisUrl);
      expect((await ensureRedis(redisUrl)).startedByUs).toBe(true);
      const s = await scenario(`dedup-${policy}`, { WEIR_TEST_DEDUP_ON_ERROR: policy }, redisUrl);
      await s.send(['a1', 'a2', 'a3']);
      expect((await s.sinkIds(3)).sort()).toEqual(['a1', 'a2', 'a3']);

      expect(await stopRedis(redisUrl)).toBe(true);
      await s.send(['b1', 'b2', 'b3']);
      if (policy === 'fail') {
        // Pauses and retries with backoff: nothing of the second batch is processed meanwhile.
        await s.worker.waitForLog((l) => l.msg === 'dedup store call failed' && (l['retryInMs'] as number) >= 800, 60_000);
        expect(await s.metric('weir_records_total', { outcome: 'success' })).toBe(3);
        expect(await s.metric('weir_port_errors_total', { port: 'dedup' })).toBeGreaterThanOrEqual(4);
        expect(await s.metric('weir_dedup_skipped_total')).toBe(0);
        await ensureRedis(redisUrl);
      } else {
        await s.worker.waitForLog((l) => l.msg.startsWith('dedup store failed: records processed without dedup'), 60_000);
        expect((await s.sinkIds(6)).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
        expect(await s.metric('weir_dedup_skipped_total')).toBeGreaterThanOrEqual(3);
        await ensureRedis(redisUrl);
      }
      expect((await s.sinkIds(6)).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
      expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 60_000)).toBe(true);
      expect(await s.worker.stop('SIGTERM')).toBe(0);
      expect((await readToEnd(fx.kafka, [s.topics.sink], { timeoutMs: 60_000 })).map(idOf).sort()).toEqual([
        'a1',
        'a2',
        'a3',
        'b1',
        'b2',
        'b3',
      ]);
      await stopRedis(redisUrl);
    },
  );
});
