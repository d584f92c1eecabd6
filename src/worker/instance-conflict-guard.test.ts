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

  it('forgets fences older than its window', () => {
    const guard = new InstanceConflictGuard(T0, options);
    expect(guard.fenced(T0 + 100_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 200_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 700_000)).toBe('rejoin');
    expect(guard.fenced(T0 + 710_000)).toBe('rejoin');
  });
});
