import type { ICustomPartitioner } from 'kafkajs';
import { Partitioners } from './kafkajs-library.js';
import { murmur2Partition } from '../record/murmur2.js';

/**
 * kafkajs' `DefaultPartitioner` (the Java client's: a record's own partition, else
 * `toPositive(murmur2(key)) % partitions`, else round robin over the available partitions),
 * with weir's 32-bit murmur2 for keyed records: kafkajs hashes with 64-bit `Long` arithmetic
 * and filters the partition list for every message, which made partitioning a few percent of a
 * worker's CPU. Same partitions as before (see murmur2-partitioner.test.ts).
 */
export const murmur2Partitioner: ICustomPartitioner = () => {
  const unkeyed = Partitioners.DefaultPartitioner();
  return (args) => {
    const { message, partitionMetadata } = args;
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    const key = message.key;
    if (Buffer.isBuffer(key) && partitionMetadata.length > 0) return murmur2Partition(key, partitionMetadata.length);
    return unkeyed(args);
  };
};
