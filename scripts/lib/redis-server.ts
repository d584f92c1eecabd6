/**
 * The local `redis-server` for development, tests, the demo and the benchmarks:
 * {@link ensureRedis} starts one (daemonized, no persistence unless asked, pid and log files in
 * `.kafka/`) when none answers, and {@link stopRedis} / {@link stopRedisIfStarted} stop only one it
 * started.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { isEnoent, processCommandLine, readPidFile, run, tail, terminate, type ExecResult } from './process-helpers.js';
import { kafkaPaths } from './repo-paths.js';
import { pollUntil } from './wait-for.js';

/** URL of the local Redis. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Result of {@link ensureRedis}. */
export interface EnsureRedisResult {
  /** True when this call started `redis-server`. */
  startedByUs: boolean;
  /** Pid of the `redis-server` this module started (from its pid file). */
  pid?: number;
}

function redisTarget(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: parsed.port ? Number(parsed.port) : 6379 };
}

function redisPidFile(port: number): string {
  return path.join(kafkaPaths.runtimeDir, `redis-${port}.pid`);
}

/** The data folder of a persistent Redis that {@link ensureRedis} starts for `url` (`.kafka/redis-<port>/`). */
export function redisDataDir(url: string): string {
  return path.join(kafkaPaths.runtimeDir, `redis-${redisTarget(url).port}`);
}

/** Options of {@link ensureRedis}. */
export interface EnsureRedisOptions {
  /** How long to wait for a started Redis to answer, in ms (default 15 000). */
  readonly timeoutMs?: number;
  /**
   * Keep the data across a restart, even a SIGKILL: an append-only file fsynced at every write,
   * in {@link redisDataDir} (default: no persistence).
   */
  readonly persistent?: boolean;
}

/**
 * Whether Redis at `url` answers PING. Never throws; no retries.
 *
 * @param timeoutMs - connect and command timeout, in ms.
 */
export async function redisAnswers(url: string = DEFAULT_REDIS_URL, timeoutMs = 1_000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Makes sure Redis answers at `url`. When it does not and `url` is on this machine, starts
 * `redis-server` daemonized on its port (no persistence unless `options.persistent`; pid and log
 * files in `.kafka/`) and waits until it answers.
 *
 * @throws Error when Redis does not answer at a non-local address, `redis-server` is not
 *   installed or fails, or it does not answer within `options.timeoutMs`.
 * @example const redis = await ensureRedis(); // … await stopRedisIfStarted(redis);
 */
export async function ensureRedis(url: string = DEFAULT_REDIS_URL, options: EnsureRedisOptions = {}): Promise<EnsureRedisResult> {
  const { timeoutMs = 15_000, persistent = false } = options;
  if (await redisAnswers(url)) return { startedByUs: false };
  const { host, port } = redisTarget(url);
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
    throw new Error(`Redis does not answer at ${url}, and it is not local, so it cannot be started here.`);
  }
  await mkdir(kafkaPaths.runtimeDir, { recursive: true });
  const pidFile = redisPidFile(port);
  const logFile = path.join(kafkaPaths.runtimeDir, `redis-${port}.log`);
  const dataDir = persistent ? redisDataDir(url) : kafkaPaths.runtimeDir;
  await mkdir(dataDir, { recursive: true });
  const args = [
    '--daemonize',
    'yes',
    '--port',
    String(port),
    '--bind',
    host === 'localhost' ? '127.0.0.1' : host,
    '--save',
    '',
    ...(persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    '--dir',
    dataDir,
    '--pidfile',
    pidFile,
    '--logfile',
    logFile,
  ];
  let result: ExecResult;
  try {
    result = await run('redis-server', args, { timeoutMs: 30_000 });
  } catch (error) {
    if (isEnoent(error)) throw new Error(`Redis does not answer at ${url} and \`redis-server\` is not installed.`, { cause: error });
    throw error;
  }
  if (result.code !== 0) {
    throw new Error(`\`redis-server ${args.join(' ')}\` failed (exit ${result.code}):\n${tail([result.stdout, result.stderr], 20)}`);
  }
  if (!(await pollUntil(() => redisAnswers(url), timeoutMs, 200))) {
    let log = '';
    try {
      log = tail(readFileSync(logFile, 'utf8'), 20);
    } catch {
      // no log
    }
    throw new Error(`redis-server was started on port ${port} but did not answer at ${url} within ${timeoutMs} ms.\n${log}`);
  }
  const pid = await waitForPid(pidFile);
  return pid === undefined ? { startedByUs: true } : { startedByUs: true, pid };
}

async function waitForPid(pidFile: string): Promise<number | undefined> {
  let pid: number | undefined;
  await pollUntil(async () => (pid = await readPidFile(pidFile)) !== undefined, 5_000, 100);
  return pid;
}

/**
 * Stops the `redis-server` that {@link ensureRedis} started for `url` (found through its pid
 * file in `.kafka/`, checked to still be a `redis-server`); leaves any other Redis alone.
 *
 * @param options - `hard`: SIGKILL at once (a crash) instead of SIGTERM.
 * @returns true when a Redis process was stopped.
 */
export async function stopRedis(url: string = DEFAULT_REDIS_URL, options: { readonly hard?: boolean } = {}): Promise<boolean> {
  const { port } = redisTarget(url);
  const pidFile = redisPidFile(port);
  const pid = await readPidFile(pidFile);
  const argv = pid === undefined ? undefined : await processCommandLine(pid);
  if (pid === undefined || !argv || !argv.some((arg) => arg.includes('redis-server'))) {
    await rm(pidFile, { force: true });
    return false;
  }
  const stopped = await terminate(pid, 10_000, options.hard ?? false);
  await rm(pidFile, { force: true });
  return stopped;
}

/**
 * Stops Redis only when `started.startedByUs` (the result of {@link ensureRedis}) says this
 * module started it.
 *
 * @returns true when a Redis process was stopped.
 */
export async function stopRedisIfStarted(started: EnsureRedisResult, url: string = DEFAULT_REDIS_URL): Promise<boolean> {
  return started.startedByUs ? stopRedis(url) : false;
}
