import { describe, expect, it } from 'vitest';
import { ReplayPacer } from './replay-pacer.js';

describe('ReplayPacer', () => {
  it('never waits without a rate and sends 500 records per call', () => {
    const pacer = new ReplayPacer(undefined, 0);
    expect(pacer.chunkSize).toBe(500);
    expect(pacer.delayBefore(500, 0)).toBe(0);
    expect(pacer.delayBefore(500, 0)).toBe(0);
  });

  it('spaces chunks so that the average stays at the rate', () => {
    const pacer = new ReplayPacer(100, 1_000);
    expect(pacer.chunkSize).toBe(10);
    expect(pacer.delayBefore(10, 1_000)).toBe(0);
    // 10 records sent: the next chunk is due 100 ms after the start.
    expect(pacer.delayBefore(10, 1_020)).toBe(80);
    // A late caller does not wait, and the time it lost is not made up with a burst.
    expect(pacer.delayBefore(10, 1_500)).toBe(0);
    expect(pacer.delayBefore(10, 1_500)).toBe(100);
  });

  it('sends one record per call at low rates', () => {
    const pacer = new ReplayPacer(2, 0);
    expect(pacer.chunkSize).toBe(1);
    expect([pacer.delayBefore(1, 0), pacer.delayBefore(1, 0), pacer.delayBefore(1, 0)]).toEqual([0, 500, 1000]);
  });

  it('rejects a rate that is not positive', () => {
    expect(() => new ReplayPacer(0, 0)).toThrow(RangeError);
    expect(() => new ReplayPacer(Number.NaN, 0)).toThrow(/positive number/);
  });
});
