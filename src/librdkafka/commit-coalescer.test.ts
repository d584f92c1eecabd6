import { describe, expect, it } from 'vitest';
import { CommitCoalescer } from './commit-coalescer.js';

const tpo = (partition: number, offset: number) => ({ topic: 't', partition, offset });

describe('CommitCoalescer', () => {
  it('keeps one commit in flight and merges the ones asked for meanwhile, the last offset per partition winning', async () => {
    const calls: Array<Array<{ partition: number; offset: number }>> = [];
    let finish: () => void = () => undefined;
    const coalescer = new CommitCoalescer(async (offsets) => {
      calls.push(offsets.map((o) => ({ partition: o.partition, offset: o.offset })));
      await new Promise<void>((resolve) => (finish = resolve));
    });
    const first = coalescer.commit([tpo(0, 5)]);
    const second = coalescer.commit([tpo(1, 3), tpo(0, 7)]);
    const third = coalescer.commit([tpo(1, 4)]);
    await Promise.resolve();
    expect(calls).toEqual([[{ partition: 0, offset: 5 }]]);
    finish();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls[1]).toEqual([
      { partition: 1, offset: 4 },
      { partition: 0, offset: 7 },
    ]);
    finish();
    await Promise.all([second, third]);
    expect(calls).toHaveLength(2);
  });

  it('rejects the callers whose offsets a failed commit carried, and goes on with the next', async () => {
    let fail = true;
    const coalescer = new CommitCoalescer(async () => {
      if (fail) throw new Error('Broker: Specified group generation id is not valid');
    });
    await expect(coalescer.commit([tpo(0, 1)])).rejects.toThrow(/generation/);
    fail = false;
    await expect(coalescer.commit([tpo(0, 2)])).resolves.toBeUndefined();
    await expect(coalescer.commit([])).resolves.toBeUndefined();
  });
});
