import { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import { RedisDedupStore } from '../dedup/redis-dedup-store.js';
import type { Clock, DedupStore } from '../runtime/ports.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';
import type { WorkerConfig } from '../config/worker-config.js';

/** The dedup stores a worker's processors use, shared by their tasks. */
export interface DedupStores {
  /** The store of a processor with dedup, or undefined without dedup. */
  forProcessor(processor: string): DedupStore | undefined;
  close(): Promise<void>;
}

/**
 * One Redis store for every processor with `store: 'redis'` — the Redis Cluster of
 * `REDIS_CLUSTER_NODES` / `--redis-cluster` when set, else `REDIS_URL` — and one in-process
 * store for `store: 'memory'`; connections open on first use.
 */
export function createDedupStores(topology: CompiledTopology, config: WorkerConfig, clock?: Clock): DedupStores {
  let redis: RedisDedupStore | undefined;
  let memory: MemoryDedupStore | undefined;
  const byProcessor = new Map<string, DedupStore>();
  for (const sub of topology.subtopologies) {
    const policy = sub.processor.dedup;
    if (policy === null) continue;
    const store =
      policy.store === 'redis'
        ? (redis ??= new RedisDedupStore({
            applicationId: topology.applicationId,
            redis: config.redisCluster !== undefined ? { clusterNodes: config.redisCluster } : config.redisUrl,
            setting: config.redisCluster !== undefined ? 'set --redis-cluster or REDIS_CLUSTER_NODES' : 'set --redis-url or REDIS_URL',
          }))
        : (memory ??= new MemoryDedupStore(clock));
    byProcessor.set(sub.processor.name, store);
  }
  return {
    forProcessor: (processor) => byProcessor.get(processor),
    close: async () => {
      await redis?.close();
      await memory?.close();
    },
  };
}
