import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DedupStoreError } from '../errors.js';
import { LogContext, loggerOptions } from './logger.js';

function capture(context?: LogContext) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino(loggerOptions('info', context), stream), lines };
}

describe('worker logger', () => {
  it('adds the group member id to every line, children included, once the worker joined', () => {
    const context = new LogContext();
    const { logger, lines } = capture(context);
    const child = logger.child({ component: 'kafkajs' });
    logger.info('starting');
    context.joined('weir-app-host-42-5c1e');
    logger.info('partitions assigned');
    child.warn('kafka broker unreachable');
    expect(lines.map((l) => l['memberId'])).toEqual([undefined, 'weir-app-host-42-5c1e', 'weir-app-host-42-5c1e']);
  });

  it("names a cause's message once: not again when the error's own message quotes it", () => {
    const { logger, lines } = capture();
    const cause = new Error('Connection is closed.');
    logger.warn({ err: new DedupStoreError('redis dedup claim failed: Connection is closed.', { cause }) }, 'dedup store call failed');
    logger.warn({ err: new Error('claim failed', { cause }) }, 'other');
    expect(lines.map((l) => (l['err'] as { message: string }).message)).toEqual([
      'redis dedup claim failed: Connection is closed.',
      'claim failed: Connection is closed.',
    ]);
    expect((lines[0]!['err'] as { code: string }).code).toBe('WEIR_DEDUP_STORE');
  });
});
