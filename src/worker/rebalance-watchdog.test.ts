import { describe, expect, it } from 'vitest';
import { RebalanceStalledError } from '../errors.js';
import { ManualClock } from '../testing/manual-clock.js';
import { rebalanceDeadlineMs, RebalanceWatchdog } from './rebalance-watchdog.js';

describe('RebalanceWatchdog', () => {
  it('waits the rebalance timeout (at least 60 s) plus the session timeout', () => {
    expect(rebalanceDeadlineMs(10_000)).toBe(70_000);
    expect(rebalanceDeadlineMs(90_000)).toBe(180_000);
  });

  it('reports a RebalanceStalledError naming its limits when no assignment ends the rebalance in time', () => {
    const clock = new ManualClock(0);
    const stalled: RebalanceStalledError[] = [];
    const watchdog = new RebalanceWatchdog(10_000, (e) => stalled.push(e), clock);
    watchdog.began();
    clock.advance(69_999);
    expect(stalled).toHaveLength(0);
    clock.advance(1);
    expect(stalled).toHaveLength(1);
    expect(stalled[0]).toBeInstanceOf(RebalanceStalledError);
    expect(stalled[0]!.code).toBe('WEIR_REBALANCE_STALLED');
    expect(stalled[0]!.message).toContain('within 70000 ms');
    expect(stalled[0]!.message).toContain('rebalance timeout 60000 ms + session timeout 10000 ms');
  });

  it('names what began the wait: a rebalance by default, or the member losing its partitions', () => {
    const clock = new ManualClock(0);
    const stalled: RebalanceStalledError[] = [];
    const watchdog = new RebalanceWatchdog(6_000, (e) => stalled.push(e), clock);
    watchdog.began('the member lost its partitions');
    clock.advance(66_000);
    expect(stalled.map((e) => e.message)).toEqual([
      'no partitions assigned within 66000 ms after the member lost its partitions (rebalance timeout 60000 ms + session timeout 6000 ms): the consumer is stuck in its join',
    ]);
    watchdog.began();
    clock.advance(66_000);
    expect(stalled[1]!.message).toContain('after the group began rebalancing');
  });

  it('an assignment in time disarms it; the next rebalance gets a deadline of its own', () => {
    const clock = new ManualClock(0);
    const stalled: unknown[] = [];
    const watchdog = new RebalanceWatchdog(10_000, (e) => stalled.push(e), clock);
    watchdog.began();
    clock.advance(60_000);
    watchdog.ended();
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.advance(60_000);
    expect(stalled).toHaveLength(0);
    watchdog.began();
    clock.advance(69_999);
    expect(stalled).toHaveLength(0);
    clock.advance(1);
    expect(stalled).toHaveLength(1);
  });

  it('keeps the first deadline when the rebalance is announced again before it ends', () => {
    const clock = new ManualClock(0);
    const stalled: unknown[] = [];
    const watchdog = new RebalanceWatchdog(10_000, (e) => stalled.push(e), clock);
    watchdog.began();
    clock.advance(50_000);
    watchdog.began();
    expect(clock.nextTimerAt()).toBe(70_000);
    clock.advance(20_000);
    expect(stalled).toHaveLength(1);
    // Fired: ending it now is a no-op.
    watchdog.ended();
    expect(clock.nextTimerAt()).toBeUndefined();
  });
});
