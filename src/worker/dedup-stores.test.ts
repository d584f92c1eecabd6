import { describe, expect, it } from 'vitest';
import { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import { RedisDedupStore } from '../dedup/redis-dedup-store.js';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { ConfigError } from '../errors.js';
import { compile } from '../topology/compile.js';
import { createDedupStores } from './dedup-stores.js';
import { loadWorkerConfig } from '../config/worker-config.js';

describe('dedup store settings', () => {
  it('reads Redis Cluster nodes from --redis-cluster or REDIS_CLUSTER_NODES', () => {
    expect(loadWorkerConfig({ redisCluster: '10.0.0.1:7000, 10.0.0.2:7001' }, {}).redisCluster).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
    ]);
    expect(loadWorkerConfig({}, { REDIS_CLUSTER_NODES: 'redis-a:6379,[::1]:6380' }).redisCluster).toEqual([
      { host: 'redis-a', port: 6379 },
      { host: '::1', port: 6380 },
    ]);
    expect(loadWorkerConfig({}, {}).redisCluster).toBeUndefined();
  });

  it('names the setting that holds a bad cluster node', () => {
    expect(() => loadWorkerConfig({}, { REDIS_CLUSTER_NODES: 'redis-a' })).toThrow(ConfigError);
    expect(() => loadWorkerConfig({}, { REDIS_CLUSTER_NODES: 'redis-a' })).toThrow(/REDIS_CLUSTER_NODES.*host:port/);
    expect(() => loadWorkerConfig({ redisCluster: ' , ' }, {})).toThrow(/--redis-cluster.*at least one/);
  });

  it('gives each processor with dedup its store: one Redis store, one memory store', async () => {
    const compiled = compile(
      topology('app')
        .source('a', 'json')
        .process('with-redis', (r) => r.value, { dedup: { key: () => 'k', ttlMs: 1_000 } })
        .branch({ success: sink('a.out') })
        .source('b', 'json')
        .process('with-memory', (r) => r.value, { dedup: { key: () => 'k', ttlMs: 1_000, store: 'memory' } })
        .branch({ success: sink('b.out') })
        .source('c', 'json')
        .process('without', (r) => r.value)
        .branch({ success: sink('c.out') }),
    );
    const stores = createDedupStores(compiled, loadWorkerConfig({ redisCluster: '127.0.0.1:7000' }, {}));
    expect(stores.forProcessor('with-redis')).toBeInstanceOf(RedisDedupStore);
    expect(stores.forProcessor('with-memory')).toBeInstanceOf(MemoryDedupStore);
    expect(stores.forProcessor('without')).toBeUndefined();
    await stores.close();
  });
});
