import { pino, type Logger, type LoggerOptions } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LogLevel } from '../config/worker-config.js';

/**
 * Fields the worker learns while it runs and every log line then carries: the consumer group
 * `memberId` once the worker joined (so its lines match `kafka-consumer-groups --describe`).
 */
export class LogContext {
  private memberId: string | undefined;

  /** The group member id of the worker's consumer, from its latest join. */
  joined(memberId: string): void {
    this.memberId = memberId;
  }

  /** The fields to add to a log line (pino `mixin`). */
  fields(): Record<string, string> {
    return this.memberId === undefined ? {} : { memberId: this.memberId };
  }
}

/**
 * An error's message followed by those of its causes, each only when the message does not
 * already say it (weir's errors often quote their cause's message).
 */
function messageWithCauses(error: Error): string {
  let message = error.message;
  let cause: unknown = error.cause;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++, cause = cause.cause) {
    if (!message.includes(cause.message)) message += `: ${cause.message}`;
  }
  return message;
}

/** pino's error serializer, with each cause's message at most once in `message`. */
function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  return { ...pino.stdSerializers.err(error), message: messageWithCauses(error) };
}

/**
 * The worker logger's pino options: level, pid (and the stream thread's number), ISO time, the
 * `err` serializer and the `context` fields.
 */
export function loggerOptions(level: LogLevel, context?: LogContext, thread?: number): LoggerOptions {
  return {
    level,
    base: thread === undefined ? { pid: process.pid } : { pid: process.pid, thread },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { err: serializeError },
    ...(context ? { mixin: () => context.fields() } : {}),
  };
}

/**
 * The worker's pino logger: JSON lines on stdout, or pretty, colored lines when stdout is a
 * terminal (pino-pretty in the main thread, so no log is lost at exit). Every line carries
 * the fields of `context` (the group member id once joined); an `err` field's message names
 * each cause once.
 *
 * @param pretty default: whether stdout is a TTY
 */
export function createLogger(level: LogLevel, pretty: boolean = process.stdout.isTTY === true, context?: LogContext): Logger {
  return pino(loggerOptions(level, context), createLogSink(pretty));
}

/** Where log lines go: `write` takes one JSON line (with or without its newline). */
export interface LogSink {
  write(line: string): void;
}

/**
 * The process's one log stream on stdout: JSON lines, or pretty, colored lines when `pretty`
 * (pino-pretty in the main thread, so no log is lost at exit). Stream threads send their JSON
 * lines here too (see {@link createThreadLogger}), so each line is written whole.
 */
export function createLogSink(pretty: boolean = process.stdout.isTTY === true): LogSink {
  if (!pretty) return pino.destination({ dest: 1, sync: true });
  return pinoPretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/**
 * A stream thread's logger: JSON lines, each with the thread's number (`thread`), handed to
 * `send` — which passes them to the process's {@link LogSink} — so the process keeps one log
 * stream whose lines never interleave.
 */
export function createThreadLogger(level: LogLevel, thread: number, context: LogContext, send: (line: string) => void): Logger {
  return pino(loggerOptions(level, context, thread), { write: send });
}
