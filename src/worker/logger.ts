import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LogLevel } from './worker-config.js';

/**
 * The worker's pino logger: JSON lines on stdout, or pretty, colored lines when stdout is a
 * terminal (pino-pretty in the main thread, so no log is lost at exit).
 *
 * @param pretty default: whether stdout is a TTY
 */
export function createLogger(level: LogLevel, pretty: boolean = process.stdout.isTTY === true): Logger {
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (!pretty) return pino(options, pino.destination({ dest: 1, sync: true }));
  return pino(options, pinoPretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}
