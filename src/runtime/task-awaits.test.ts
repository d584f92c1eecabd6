import { describe, expect, it } from 'vitest';
import { TaskAwaits } from './task-awaits.js';

/** A promise and the functions that settle it. */
function pending<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('TaskAwaits', () => {
  it('says what the task waits on, and for how long, until the call settles', async () => {
    const awaits = new TaskAwaits('exactly_once');
    expect(awaits.describe(1_000)).toBeUndefined();
    const write = pending<string>();
    const waited = awaits.on('write', 1_000, write.promise);
    expect(awaits.describe(43_400)).toBe('its transaction for 42 s');
    write.resolve('durable');
    await expect(waited).resolves.toBe('durable');
    expect(awaits.describe(43_400)).toBeUndefined();
  });

  it('names a processor call by its record offset, and forgets a call that failed', async () => {
    const awaits = new TaskAwaits('at_least_once');
    const call = pending<void>();
    const waited = awaits.on('processor', 5_000, call.promise, 1234);
    expect(awaits.describe(5_400)).toBe('its processor (offset 1234) for 0 s');
    call.reject(new Error('bug'));
    await expect(waited).rejects.toThrow('bug');
    expect(awaits.describe(9_000)).toBeUndefined();
    const write = pending<void>();
    void awaits.on('write', 0, write.promise);
    expect(awaits.describe(2_000)).toBe('its write and offset commit for 2 s');
    void awaits.on('processor', 0, pending<void>().promise);
    expect(awaits.describe(3_000)).toBe('its processor for 3 s');
  });
});
