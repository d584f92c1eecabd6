import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SHUTDOWN_PROGRESS_INTERVAL_MS, ShutdownProgress } from './shutdown-progress.js';

function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('ShutdownProgress', () => {
  afterEach(() => vi.useRealTimers());

  it('says every interval which step the shutdown waits in, with the tasks not closed yet, and stops at its end', async () => {
    vi.useFakeTimers();
    const { logger, lines } = capture();
    let unclosed = ['in-3 (stopping)', 'in-5 (stopping)'];
    const progress = new ShutdownProgress(logger, (step) => (step === 'tasks to close' ? unclosed : []));
    progress.begin();
    progress.step('tasks to close');
    await vi.advanceTimersByTimeAsync(SHUTDOWN_PROGRESS_INTERVAL_MS - 1);
    expect(lines).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    unclosed = ['in-5 (stopping)'];
    progress.step('tasks to close');
    await vi.advanceTimersByTimeAsync(SHUTDOWN_PROGRESS_INTERVAL_MS);
    progress.step('the consumer to leave the group');
    await vi.advanceTimersByTimeAsync(SHUTDOWN_PROGRESS_INTERVAL_MS);
    progress.end();
    await vi.advanceTimersByTimeAsync(3 * SHUTDOWN_PROGRESS_INTERVAL_MS);
    expect(lines.map((l) => [l['level'], l['msg']])).toEqual([
      [40, 'shutdown still under way after 5 s: waiting for tasks to close: in-3 (stopping), in-5 (stopping)'],
      [40, 'shutdown still under way after 10 s: waiting for tasks to close: in-5 (stopping)'],
      [40, 'shutdown still under way after 15 s: waiting for the consumer to leave the group'],
    ]);
    expect(progress.waitingFor()).toBeUndefined();
  });

  it('says nothing before its first step', async () => {
    vi.useFakeTimers();
    const { logger, lines } = capture();
    const progress = new ShutdownProgress(logger);
    progress.begin();
    await vi.advanceTimersByTimeAsync(2 * SHUTDOWN_PROGRESS_INTERVAL_MS);
    progress.end();
    expect(lines).toEqual([]);
  });
});
