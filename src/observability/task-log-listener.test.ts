import { describe, expect, it } from 'vitest';
import { captureLog } from './log-capture.test-support.js';
import { DedupStoreError } from '../errors.js';
import type { TaskListener } from '../runtime/task-listener.js';
import { combineTaskListeners, taskLogListener } from './task-log-listener.js';

describe('task log listener', () => {
  it("logs an order 'key' task reaching maxParkedKeys once at warn, and going below it at info", () => {
    const { logger, lines } = captureLog();
    const listener = taskLogListener(logger);
    const event = { task: 'orders-0', topic: 'orders', partition: 0, maxParkedKeys: 2 };
    listener.onParked!({ ...event, keys: 1, records: 1, full: false });
    listener.onParked!({ ...event, keys: 2, records: 3, full: true });
    listener.onParked!({ ...event, keys: 2, records: 5, full: true });
    listener.onParked!({ ...event, keys: 1, records: 4, full: false });
    expect(lines.map((l) => [l['level'], l['task'], l['parkedKeys'], l['parkedRecords']])).toEqual([
      [40, 'orders-0', 2, 3],
      [30, 'orders-0', 1, 4],
    ]);
    expect(lines[0]!['msg']).toMatch(/maxParkedKeys .*its partition pauses/);
  });

  it('logs failed port calls and skipped dedup at warn, with the task and the error', () => {
    const { logger, lines } = captureLog();
    const listener = taskLogListener(logger);
    listener.onPortError!({
      task: 'orders-0',
      port: 'dedup',
      error: new DedupStoreError('redis dedup claim failed: timeout'),
      retryInMs: 400,
    });
    listener.onPortError!({ task: 'orders-1', port: 'transaction', error: new Error('coordinator moved'), retryInMs: 100 });
    listener.onDedupSkipped!({ task: 'orders-0', records: 12, error: new DedupStoreError('redis down') });
    expect(lines.map((l) => [l['level'], l['msg'], l['task']])).toEqual([
      [40, 'dedup store call failed', 'orders-0'],
      [40, 'kafka transaction failed; the task retries', 'orders-1'],
      [40, "dedup store failed: records processed without dedup (onStoreError: 'skip-dedup')", 'orders-0'],
    ]);
    expect(lines[0]).toMatchObject({
      port: 'dedup',
      retryInMs: 400,
      err: { message: 'redis dedup claim failed: timeout', code: 'WEIR_DEDUP_STORE' },
    });
    expect(lines[2]).toMatchObject({ records: 12 });
  });

  it('logs dead letters at warn and retries at debug, from failed-record events only', () => {
    const { logger, lines } = captureLog();
    logger.level = 'debug';
    const listener = taskLogListener(logger);
    expect(listener.onRecord).toBeUndefined();
    const base = { task: 'orders-0', topic: 'orders', partition: 0, atMs: 0 } as const;
    listener.onFailedRecord!({ ...base, offset: 7, outcome: 'retry', attempt: 1, errorClass: 'Error', errorMessage: 'down', delayMs: 50 });
    listener.onFailedRecord!({ ...base, offset: 7, outcome: 'dead-letter', attempt: 3, errorClass: 'Error', errorMessage: 'down' });
    expect(lines.map((l) => [l['level'], l['msg'], l['offset']])).toEqual([
      [20, 'record failed; retrying', 7],
      [40, 'record dead-lettered', 7],
    ]);
  });

  it('combines listeners: every event reaches every listener that handles it, and no handler is made up', () => {
    const seen: string[] = [];
    const a: TaskListener = { onPortError: (e) => seen.push(`a:${e.port}`), onDedupSkipped: (e) => seen.push(`a:skip${e.records}`) };
    const b: TaskListener = { onPortError: (e) => seen.push(`b:${e.port}`), onClosed: (e) => seen.push(`b:${e.state}`) };
    const both = combineTaskListeners(a, b);
    both.onPortError!({ task: 't', port: 'commit', error: null, retryInMs: 1 });
    both.onDedupSkipped!({ task: 't', records: 2, error: null });
    both.onClosed!({ task: 't', state: 'fenced' });
    expect(seen).toEqual(['a:commit', 'b:commit', 'a:skip2', 'b:fenced']);
    // A task builds per-record events only for a listener that takes them.
    expect(both.onRecord).toBeUndefined();
    expect(both.onFailedRecord).toBeUndefined();
  });
});
