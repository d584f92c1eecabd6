/**
 * Removes an application's dedup keys from Redis (standalone), for tests and benchmarks that
 * clean up after themselves. The keys follow `dedupKeyLayout`: `weir:dedup:{<application.id>:<bucket>}:...`.
 */
import { Redis } from 'ioredis';

/** Deletes every dedup key of `applicationId`; returns how many were deleted. */
export async function deleteDedupKeys(redisUrl: string, applicationId: string): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  let deleted = 0;
  try {
    await redis.connect();
    for await (const keys of redis.scanStream({ match: `weir:dedup:{${applicationId}:*`, count: 1_000 })) {
      const batch = keys as string[];
      if (batch.length > 0) deleted += await redis.unlink(...batch);
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}
