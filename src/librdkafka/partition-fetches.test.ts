import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../errors.js';
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
    fetches.get(tp(0))!.transition('held');
    fetches.add(tp(0));
    expect(fetches.get(tp(0))).toMatchObject({ next: undefined, seekTo: undefined, stash: [], state: 'fetching' });
  });

  it('marks a partition revoking from any state, keeping that librdkafka paused it, once', () => {
    const fetches = new PartitionFetches();
    for (const p of [0, 1, 2]) fetches.add(tp(p));
    fetches.get(tp(1))!.transition('held');
    fetches.get(tp(2))!.transition('held');
    fetches.get(tp(2))!.transition('paused');
    for (const p of [0, 1, 2, 9]) fetches.markRevoking(tp(p));
    expect([0, 1, 2].map((p) => fetches.get(tp(p))!.state)).toEqual(['revoking', 'revoking', 'revoking-paused']);
    // A second revocation of the same partitions changes nothing.
    for (const p of [0, 1, 2]) fetches.markRevoking(tp(p));
    expect([0, 1, 2].map((p) => fetches.get(tp(p))!.state)).toEqual(['revoking', 'revoking', 'revoking-paused']);
    expect([0, 1, 2].map((p) => [fetches.get(tp(p))!.isRevoking(), fetches.get(tp(p))!.isHeld()])).toEqual([
      [true, false],
      [true, false],
      [true, false],
    ]);
  });

  it('checks every change of a fetch against the table, naming the partition', () => {
    const fetches = new PartitionFetches();
    fetches.add({ topic: 'orders', partition: 4 });
    const fetch = fetches.get({ topic: 'orders', partition: 4 })!;
    expect(() => fetch.transition('paused')).toThrow(IllegalStateError);
    expect(() => fetch.transition('paused')).toThrow('partition orders-4: illegal fetch state transition fetching → paused');
    fetch.transition('revoking');
    expect(() => fetch.transition('fetching')).toThrow('partition orders-4: illegal fetch state transition revoking → fetching');
    expect(fetch.state).toBe('revoking');
  });
});
