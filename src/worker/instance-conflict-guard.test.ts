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
});
