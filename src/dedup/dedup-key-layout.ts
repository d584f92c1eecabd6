import { murmur2 } from '../record/murmur2.js';

/**
 * The Redis key layout of the dedup store. An application's keys are spread over hash-tag
 * buckets `{<application.id>:<bucket>}`, so each Lua script on a Redis Cluster touches one slot
 * (Redis hashes only the first `{...}` of a key, so braces in a dedup key do not matter):
 * - `weir:dedup:{<app>:<bucket>}:k:<dedup key>` — a claim (`c|<owner>|<offset>`) or a
 *   confirmed key (`d`), with a TTL;
 * - `weir:dedup:{<app>:<bucket>}:o:<owner>` — the owner's unconfirmed claims by offset (a
 *   sorted set), for crash recovery.
 *
 * This refines DESIGN.md's `weir:dedup:<application.id>:<dedup key>` with the bucket hash tag.
 *
 * @example
 * dedupKeyLayout('orders').entry(3, 'order-42'); // 'weir:dedup:{orders:3}:k:order-42'
 */
export function dedupKeyLayout(applicationId: string): {
  entry(bucket: number, key: string): string;
  index(bucket: number, owner: string): string;
} {
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
