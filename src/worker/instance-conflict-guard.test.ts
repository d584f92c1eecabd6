import { describe, expect, it } from 'vitest';
import { InstanceConflictGuard } from './instance-conflict-guard.js';

const T0 = 1_000_000;
const options = { youngForMs: 60_000, maxFences: 3, windowMs: 300_000 };

describe('InstanceConflictGuard', () => {
  it('stops a worker fenced soon after its start: it took an id a running worker has', () => {
    expect(new InstanceConflictGuard(T0, options).fenced(T0 + 5_000)).toBe('conflict');
  });

  it('lets an older worker rejoin (fencing the newcomer), until it is fenced too often', () => {
    const guard = new InstanceConflictGuard(T0, options);
    expect(guard.fenced(T0 + 120_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 130_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 140_000)).toBe('conflict');
  });

  it('counts its age from its first join, not its start: a slow start leaves the newcomer its whole window', () => {
    const guard = new InstanceConflictGuard(T0, options);
    guard.joined(T0 + 50_000);
    // 70 s after its start, but 20 s after it joined: still the newcomer.
    expect(guard.fenced(T0 + 70_000)).toBe('conflict');
    const incumbent = new InstanceConflictGuard(T0, options);
    incumbent.joined(T0 + 5_000);
    incumbent.joined(T0 + 100_000);
    // A rejoin does not make it young again.
    expect(incumbent.fenced(T0 + 110_000)).toBe('rejoin');
  });

  it('forgets fences older than its window', () => {
    const guard = new InstanceConflictGuard(T0, options);
    expect(guard.fenced(T0 + 100_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 200_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 700_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 710_000)).toBe('rejoin');
  });

  it('sizes the newcomer window to the group timings: two session timeouts, at most three heartbeats + 10 s', () => {
    // 6 s sessions, 2 s heartbeats: 12 s.
    const short = InstanceConflictGuard.forGroupTimings(T0, { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 2_000 });
    short.joined(T0);
    expect(short.fenced(T0 + 11_999)).toBe('conflict');
    expect(InstanceConflictGuard.forGroupTimings(T0, { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 2_000 }).fenced(T0 + 12_000)).toBe(
      'rejoin',
    );
    // 45 s sessions, 3 s heartbeats: 19 s, not 90 s.
    expect(InstanceConflictGuard.forGroupTimings(T0, { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 3_000 }).fenced(T0 + 18_999)).toBe(
      'conflict',
    );
    expect(InstanceConflictGuard.forGroupTimings(T0, { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 3_000 }).fenced(T0 + 19_000)).toBe(
      'rejoin',
    );
  });
});
