/** Test support: a pino logger whose lines are kept as parsed JSON objects. */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A logger at `level` (default info) and the lines it wrote, parsed. */
export function captureLog(level = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}
