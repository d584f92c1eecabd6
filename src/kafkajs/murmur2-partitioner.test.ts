import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { murmur2Partition } from '../record/murmur2.js';

describe('murmur2Partition', () => {
  it('puts every key on the partition kafkajs (and the Java client) would', () => {
    const kafkajs = Partitioners.DefaultPartitioner();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.integer({ min: 1, max: 64 }), (bytes, partitions) => {
        const key = Buffer.from(bytes);
        const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
          partitionId,
          leader: 0,
          partitionErrorCode: 0,
          replicas: [0],
          isr: [0],
        }));
        const expected = kafkajs({ topic: 't', partitionMetadata, message: { key, value: null } });
        expect(murmur2Partition(key, partitions)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
