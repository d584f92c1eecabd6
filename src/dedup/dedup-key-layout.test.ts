import { describe, expect, it } from 'vitest';
import { dedupBucketOf, dedupKeyLayout } from './dedup-key-layout.js';

/** The part of a key Redis Cluster hashes: the first `{...}` with something inside. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

describe('dedup key layout', () => {
  const layout = dedupKeyLayout('orders-enricher');

  it('names entries and owner indexes under the application and bucket hash tag', () => {
    expect(layout.entry(3, 'order-42')).toBe('weir:dedup:{orders-enricher:3}:k:order-42');
    expect(layout.index(3, 'orders-0')).toBe('weir:dedup:{orders-enricher:3}:o:orders-0');
  });

  it('puts an entry and its owner index in one cluster slot, whatever the dedup key holds', () => {
    for (const key of ['plain', '{braces}', '}{', 'a:b:c', 'ключ', '']) {
      const bucket = dedupBucketOf(key, 16);
      expect(hashTag(layout.entry(bucket, key))).toBe(`orders-enricher:${bucket}`);
      expect(hashTag(layout.index(bucket, 'orders-0'))).toBe(`orders-enricher:${bucket}`);
    }
  });

  it('spreads keys over every bucket, deterministically', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[dedupBucketOf(`order-${i}`, 16)]!++;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1_200);
    expect(dedupBucketOf('order-1', 16)).toBe(dedupBucketOf('order-1', 16));
  });
});
