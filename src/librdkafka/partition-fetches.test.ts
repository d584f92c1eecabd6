import { describe, expect, it } from 'vitest';
import { PartitionFetches } from './partition-fetches.js';

const tp = (partition: number) => ({ topic: 't', partition });

describe('PartitionFetches', () => {
  it('keeps the latest seek of assigned partitions only, and none of revoking ones', () => {
    const fetches = new PartitionFetches();
    fetches.add(tp(0));
    fetches.add(tp(1));
    fetches.requestSeek(tp(0), 5);
    fetches.requestSeek(tp(0), 3);
    fetches.requestSeek(tp(9), 1);
    fetches.markRevoking(tp(1));
    fetches.requestSeek(tp(1), 2);
    expect(fetches.seeks().map(([f, offset]) => [f.partition, offset])).toEqual([[0, 3]]);
    expect(fetches.partitions()).toEqual([tp(0), tp(1)]);
    fetches.remove(tp(1));
    expect(fetches.get(tp(1))).toBeUndefined();
    // Assigned again: afresh.
    fetches.add(tp(0));
    expect(fetches.get(tp(0))).toMatchObject({ next: undefined, seekTo: undefined, revoking: false });
  });
});
