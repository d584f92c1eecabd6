/**
 * RedisDedupStore on a real local Redis Cluster (3 masters started by this file, stopped at the
 * end): the shared DedupStore contract through ioredis `Cluster`, hash-tagged keys (entry and
 * owner index in one slot, an application spread over several slots and nodes), and round trips
 * measured per node.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import { startRedisCluster, type RedisClusterHandle } from '../../scripts/lib/redis-cluster.js';
import { meterRedis } from '../../scripts/lib/redis-meter.js';
import { produce, readToEnd } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { dedupBucketOf, dedupKeyLayout } from '../../src/dedup/dedup-key-layout.js';
import { RedisDedupStore } from '../../src/dedup/redis-dedup-store.js';
import { dedupStoreContract } from '../contracts/dedup-store-contract.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-cluster');
let cluster: RedisClusterHandle;
const started = startRedisCluster(3).then((handle) => (cluster = handle));
fx.onTeardown(async () => (await started.catch(() => undefined))?.stop());

dedupStoreContract('RedisDedupStore (Redis Cluster, 3 masters)', async () => {
  const { nodes } = await started;
  const unused = await freePort();
  return {
    store: (applicationId) => new RedisDedupStore({ applicationId, redis: { clusterNodes: nodes } }),
    unreachable: (applicationId) =>
      new RedisDedupStore({ applicationId, redis: { clusterNodes: [{ host: '127.0.0.1', port: unused }] }, commandTimeoutMs: 500 }),
    elapse: (ms) => sleep(ms),
    shortTtlMs: 200,
  };
});

describe(onClient('RedisDedupStore key layout and round trips on a Redis Cluster'), () => {
  const app = `weir-it-cluster-${randomBytes(4).toString('hex')}`;
  let store: RedisDedupStore;
  let admin: Cluster;

  beforeAll(async () => {
    await started;
    store = new RedisDedupStore({ applicationId: app, redis: { clusterNodes: cluster.nodes } });
    admin = new Cluster([...cluster.nodes]);
  });
  afterAll(async () => {
    await store?.close();
    admin?.disconnect();
  });

  it('puts an entry and its owner index in one slot, and spreads the buckets over the nodes', async () => {
    const layout = dedupKeyLayout(app);
    const slotOf = async (key: string): Promise<number> => Number(await admin.cluster('KEYSLOT', key));
    const slots = new Set<number>();
    for (let bucket = 0; bucket < 16; bucket++) {
      const slot = await slotOf(layout.entry(bucket, 'order-1'));
      expect(await slotOf(layout.index(bucket, 'orders-0'))).toBe(slot);
      expect(await slotOf(layout.entry(bucket, '{braces}:in:key'))).toBe(slot);
      slots.add(slot);
    }
    expect(slots.size).toBe(16);
    const shards = (await admin.cluster('SLOTS')) as Array<[number, number, ...unknown[]]>;
    const nodeOf = (slot: number) => shards.findIndex(([from, to]) => slot >= from && slot <= to);
    expect(new Set([...slots].map(nodeOf)).size).toBeGreaterThan(1);
  });

  it('claims 500 keys with one script per bucket, one socket write per node', async () => {
    const claims = Array.from({ length: 500 }, (_, i) => ({ key: `order-${i}`, offset: i }));
    // Discovers the slots, and has every node cache the script (EVALSHA works from then on).
    await store.claim(
      claims.map((c) => ({ key: `warm-up-${c.key}`, offset: 0 })),
      'warm-up',
      60_000,
    );
    const buckets = new Set(claims.map((c) => dedupBucketOf(c.key, 16)));
    const ports = cluster.nodes.map((n) => n.port);
    const reading = await meterRedis(ports, () => store.claim(claims, 'orders-0', 60_000));
    expect(reading.result).toEqual(claims.map(() => 'claimed'));
    const scripts = reading.commands.filter((c) => c.command === 'evalsha');
    expect(scripts).toHaveLength(buckets.size);
    const nodesUsed = new Set(scripts.map((c) => c.port));
    for (const port of nodesUsed) expect(reading.writesByPort.get(port!)).toBe(1);
    console.log(
      `[cluster round trips] 500 claims → ${scripts.length} script calls (one per bucket) over ${nodesUsed.size} nodes, ` +
        `socket writes per node: ${JSON.stringify(Object.fromEntries(reading.writesByPort))}`,
    );
    expect(await store.recover('orders-0', 250, 60_000)).toBe(250);
    expect(
      await store.claim(
        [
          { key: 'order-10', offset: 10 },
          { key: 'order-400', offset: 400 },
        ],
        'orders-1',
        60_000,
      ),
    ).toEqual(['duplicate', 'busy']);
  });
});

describe(onClient('weir run with REDIS_CLUSTER_NODES'), () => {
  it('deduplicates through the Redis Cluster', async () => {
    const { nodes } = await started;
    const kafka = fx.kafka;
    const id = `weir-it-cluster-worker-${randomBytes(4).toString('hex')}`;
    const topics = { source: `${id}.in`, sink: `${id}.out`, dlq: `${id}.dlq` };
    await fx.createTopics([{ topic: topics.source, partitions: 2 }]);
    const ids = Array.from({ length: 200 }, (_, i) => `order-${i}`);
    const resent = ids.filter((_, i) => i % 10 === 0);
    await produce(
      kafka,
      topics.source,
      [...ids, ...resent].map((i, seq) => ({ key: `${i}-${seq}`, value: JSON.stringify({ id: i, seq }) })),
    );
    const metricsPort = await freePort();
    const worker = fx.startWorker('test/integration/fixtures/scripted-topology.ts', {
      args: ['--application-id', id, '--metrics-port', String(metricsPort)],
      env: {
        WEIR_TEST_SOURCE: topics.source,
        WEIR_TEST_SINK: topics.sink,
        WEIR_TEST_DLQ: topics.dlq,
        WEIR_TEST_DEDUP: 'redis',
        REDIS_CLUSTER_NODES: nodes.map((n) => `${n.host}:${n.port}`).join(','),
        REDIS_URL: 'redis://127.0.0.1:1', // not used: the cluster wins
      },
    });
    expect(await waitForGroupCaughtUp(kafka, id, [topics.source], 60_000)).toBe(true);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(sumMetric(metrics, 'weir_records_total', { outcome: 'duplicate' })).toBe(resent.length);
    expect(sumMetric(metrics, 'weir_port_errors_total', { port: 'dedup' })).toBe(0);
    expect(await worker.stop('SIGTERM')).toBe(0);
    const out = await readToEnd(kafka, [topics.sink], { timeoutMs: 60_000 });
    expect(out.map((r) => (JSON.parse(r.value!.toString()) as { id: string }).id).sort()).toEqual([...ids].sort());
    // The keys live on the cluster, spread over its masters.
    expect(await entryKeys(nodes, id)).toBe(ids.length);
  });
});

/** Counts an application's entry keys over the cluster's masters. */
async function entryKeys(nodes: ReadonlyArray<{ host: string; port: number }>, app: string): Promise<number> {
  const cluster = new Cluster([...nodes]);
  try {
    await new Promise((resolve) => cluster.once('ready', resolve));
    let n = 0;
    for (const node of cluster.nodes('master')) n += (await node.keys(`weir:dedup:{${app}:*}:k:*`)).length;
    return n;
  } finally {
    cluster.disconnect();
  }
}
