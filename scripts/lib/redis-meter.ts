/**
 * Measures what a piece of code sends to Redis, for tests that check round trips: the
 * commands ioredis issues (its `ioredis:command` diagnostics channel) and the socket writes
 * that carry them, per server port (a pipeline is one write: one round trip per write).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { Socket } from 'node:net';

/** One command ioredis sent. */
export interface MeteredCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly port: number | undefined;
}

/** What {@link meterRedis} saw while its function ran. */
export interface RedisMeterReading<T> {
  readonly result: T;
  /** Commands sent, in order. */
  readonly commands: MeteredCommand[];
  /** Socket writes by remote port (every socket of this process, so run nothing else meanwhile). */
  readonly writesByPort: Map<number, number>;
}

interface CommandContext {
  readonly command: string;
  readonly args: readonly string[];
  readonly serverPort?: number;
}

/**
 * Runs `fn` and records the Redis commands and socket writes it causes.
 *
 * @param ports only count socket writes to these remote ports (the Redis servers)
 */
export async function meterRedis<T>(ports: readonly number[], fn: () => Promise<T>): Promise<RedisMeterReading<T>> {
  const commands: MeteredCommand[] = [];
  const writesByPort = new Map<number, number>();
  const channel = diagnosticsChannel.tracingChannel<string, CommandContext>('ioredis:command');
  const handlers = {
    start: (ctx: CommandContext) => commands.push({ command: ctx.command, args: ctx.args, port: ctx.serverPort }),
    end: () => undefined,
    asyncStart: () => undefined,
    asyncEnd: () => undefined,
    error: () => undefined,
  };
  const originalWrite = Socket.prototype.write;
  const watched = new Set(ports);
  Socket.prototype.write = function (this: Socket, ...args: Parameters<Socket['write']>): boolean {
    const port = this.remotePort;
    if (port !== undefined && watched.has(port)) writesByPort.set(port, (writesByPort.get(port) ?? 0) + 1);
    return originalWrite.apply(this, args);
  } as Socket['write'];
  channel.subscribe(handlers);
  try {
    const result = await fn();
    return { result, commands, writesByPort };
  } finally {
    channel.unsubscribe(handlers);
    Socket.prototype.write = originalWrite;
  }
}
