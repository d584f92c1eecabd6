import { describe, expect, it } from 'vitest';
import { RebalanceStalledError } from '../errors.js';
import { rebalanceDeadlineMs, RebalanceWatchdog, type WatchdogTimers } from './rebalance-watchdog.js';

/** Timers on a manual clock: `advance(ms)` fires what falls due. */
function manualTimers() {
  let now = 0;
  let next = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  const timers: WatchdogTimers = {
    set: (fn, ms) => {
      pending.set(++next, { at: now + ms, fn });
      return next;
    },
    clear: (handle) => pending.delete(handle as number),
  };
  const advance = (ms: number): void => {
    now += ms;
    for (const [id, t] of [...pending]) {
      if (t.at > now) continue;
      pending.delete(id);
      t.fn();
    }
  };
  return { timers, advance, pending: () => pending.size };
}

describe('RebalanceWatchdog', () => {
  it('waits the rebalance timeout (at least 60 s) plus the session timeout', () => {
    expect(rebalanceDeadlineMs(10_000)).toBe(70_000);
    expect(rebalanceDeadlineMs(90_000)).toBe(180_000);
  });

  it('reports a RebalanceStalledError naming its limits when no assignment ends the rebalance in time', () => {
    const { timers, advance } = manualTimers();
    const stalled: RebalanceStalledError[] = [];
    const watchdog = new RebalanceWatchdog(10_000, (e) => stalled.push(e), timers);
    watchdog.began();
    advance(69_999);
    expect(stalled).toHaveLength(0);
    advance(1);
    expect(stalled).toHaveLength(1);
    expect(stalled[0]).toBeInstanceOf(RebalanceStalledError);
    expect(stalled[0]!.code).toBe('WEIR_REBALANCE_STALLED');
    expect(stalled[0]!.message).toContain('within 70000 ms');
    expect(stalled[0]!.message).toContain('rebalance timeout 60000 ms + session timeout 10000 ms');
  });

  it('an assignment in time disarms it; the next rebalance gets a deadline of its own', () => {
    const { timers, advance, pending } = manualTimers();
    const stalled: unknown[] = [];
    const watchdog = new RebalanceWatchdog(10_000, (e) => stalled.push(e), timers);
    watchdog.began();
    advance(60_000);
    watchdog.ended();
    expect(pending()).toBe(0);
    advance(60_000);
    expect(stalled).toHaveLength(0);
    watchdog.began();
    advance(69_999);
    expect(stalled).toHaveLength(0);
    advance(1);
    expect(stalled).toHaveLength(1);
  });

  it('keeps the first deadline when the rebalance is announced again before it ends', () => {
    const { timers, advance, pending } = manualTimers();
    const stalled: unknown[] = [];
    const watchdog = new RebalanceWatchdog(10_000, (e) => stalled.push(e), timers);
    watchdog.began();
    advance(50_000);
    watchdog.began();
    expect(pending()).toBe(1);
    advance(20_000);
    expect(stalled).toHaveLength(1);
    // Fired: ending it now is a no-op.
    watchdog.ended();
    expect(pending()).toBe(0);
  });
});
