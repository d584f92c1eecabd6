import { Partitioners } from './kafkajs-library.js';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { murmur2Partition } from '../record/murmur2.js';
import { murmur2Partitioner } from './kafkajs-partitioner.js';

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
        expect(murmur2Partitioner()({ topic: 't', partitionMetadata, message: { key, value: null } })).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe('murmur2Partitioner', () => {
  it("keeps a record's own partition and leaves unkeyed records to round robin over the available partitions", () => {
    const partitionMetadata = [0, 1, 2].map((partitionId) => ({
      partitionId,
      leader: partitionId === 1 ? -1 : 0,
      partitionErrorCode: 0,
      replicas: [0],
      isr: [0],
    }));
    const partitioner = murmur2Partitioner();
    expect(partitioner({ topic: 't', partitionMetadata, message: { key: Buffer.from('k'), value: null, partition: 1 } })).toBe(1);
    const unkeyed = Array.from({ length: 20 }, () => partitioner({ topic: 't', partitionMetadata, message: { key: null, value: null } }));
    expect(new Set(unkeyed)).toEqual(new Set([0, 2]));
  });
});
