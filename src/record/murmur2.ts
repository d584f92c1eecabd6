/**
 * Kafka's default partitioner for keyed records: `toPositive(murmur2(key)) % partitions`,
 * as in the Java client's `Utils.murmur2` and kafkajs' default partitioner, so in-memory
 * topics put a key on the same partition a real broker would.
 */
export function murmur2Partition(key: Buffer, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** Kafka's murmur2 hash (`Utils.murmur2`) of `data`, as a signed 32-bit integer. */
export function murmur2(data: Buffer): number {
  const m = 0x5bd1e995;
  const r = 24;
  const length = data.length;
  let h = 0x9747b28c ^ length;
  const blocks = length >> 2;
  for (let i = 0; i < blocks; i++) {
    const j = i * 4;
    let k = (data[j]! & 0xff) | ((data[j + 1]! & 0xff) << 8) | ((data[j + 2]! & 0xff) << 16) | ((data[j + 3]! & 0xff) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = blocks * 4;
  const rest = length & 3;
  if (rest === 3) h ^= (data[tail + 2]! & 0xff) << 16;
  if (rest >= 2) h ^= (data[tail + 1]! & 0xff) << 8;
  if (rest >= 1) {
    h ^= data[tail]! & 0xff;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}
