import { murmur2 } from '../murmur2.js';

/**
 * The Redis key layout of the dedup store. An application's keys are spread over hash-tag
 * buckets `{<application.id>:<bucket>}`, so each Lua script touches one Redis Cluster slot:
 * - `weir:dedup:{<app>:<bucket>}:k:<dedup key>` — a claim (`c|<owner>|<offset>`) or a
 *   confirmed key (`d`), with a TTL;
 * - `weir:dedup:{<app>:<bucket>}:o:<owner>` — the owner's unconfirmed claims by offset.
 */
export function dedupKeyLayout(applicationId: string): { entry(bucket: number, key: string): string; index(bucket: number, owner: string): string } {
  const prefix = (bucket: number): string => `weir:dedup:{${applicationId}:${bucket}}`;
  return {
    entry: (bucket, key) => `${prefix(bucket)}:k:${key}`,
    index: (bucket, owner) => `${prefix(bucket)}:o:${owner}`,
  };
}

/** The bucket of a dedup key: murmur2 of its UTF-8 bytes, modulo `buckets`. */
export function dedupBucketOf(key: string, buckets: number): number {
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % buckets;
}
