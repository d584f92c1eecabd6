/**
 * A throw-away local Redis Cluster for tests: `masters` redis-server processes (cluster mode,
 * no persistence, no replicas) in a temporary folder, joined with `redis-cli --cluster create`.
 * {@link RedisClusterHandle.stop} stops exactly the processes it started (by their pid files,
 * checked to be redis-server on the expected port) and removes the folder.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { processCommandLine, readPidFile, run, terminate } from './process-helpers.js';
import { waitFor } from './wait-for.js';

/** A running local cluster. */
export interface RedisClusterHandle {
  /** The masters, `127.0.0.1:<port>`. */
  readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }>;
  /** The temporary folder with the nodes' configs, logs and pid files. */
  readonly dir: string;
  /** Stops the nodes this handle started and removes its folder. */
  stop(): Promise<void>;
}

/** Runs a redis tool to completion (at most 60 s): its exit code and output. */
async function exec(file: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await run(file, args, { timeoutMs: 60_000 });
  return { code, output: `${stdout}${stderr}` };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` ports P in [20000, 30000) with P and its cluster bus port P + 10000 free. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; attempt < 500 && ports.length < count; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (ports.includes(port)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`found only ${ports.length} of ${count} free port pairs for a Redis Cluster`);
  return ports;
}

/** Waits (polling every 100 ms; a failing check counts as not yet) until `condition` holds. @throws Error naming `what` after `timeoutMs` */
async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  await waitFor(
    () => condition().catch(() => false),
    timeoutMs,
    () => `Redis Cluster: ${what}`,
  );
}

async function ask<T>(port: number, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

/** Pid of a redis-server that serves `port`, from its pid file; undefined when it is not running. */
async function serverPid(pidFile: string, port: number): Promise<number | undefined> {
  const pid = await readPidFile(pidFile);
  const cmdline = pid === undefined ? undefined : (await processCommandLine(pid))?.join(' ');
  return cmdline !== undefined && cmdline.includes('redis-server') && cmdline.includes(`:${port}`) ? pid : undefined;
}

/**
 * Starts a local Redis Cluster of `masters` nodes (default 3) on free ports.
 *
 * @throws Error when `redis-server` or `redis-cli` is missing or the cluster does not form (the
 *   nodes started so far are stopped)
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const dir = await mkdtemp(path.join(tmpdir(), 'weir-redis-cluster-'));
  const ports = await clusterPorts(masters);
  const pidFile = (port: number): string => path.join(dir, `redis-${port}.pid`);
  const stop = async (): Promise<void> => {
    for (const port of ports) {
      const pid = await serverPid(pidFile(port), port);
      if (pid !== undefined) await terminate(pid, 10_000);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '5000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'yes',
        '--dir',
        dir,
        '--pidfile',
        pidFile(port),
        '--logfile',
        path.join(dir, `redis-${port}.log`),
      ];
      const started = await exec('redis-server', args);
      if (started.code !== 0) throw new Error(`redis-server on port ${port} failed (exit ${started.code}): ${started.output}`);
    }
    for (const port of ports)
      await waitUntil(() => ask(port, async (c) => (await c.ping()) === 'PONG'), 10_000, `node ${port} did not answer`);
    const create = await exec('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    if (create.code !== 0) throw new Error(`redis-cli --cluster create failed (exit ${create.code}): ${create.output}`);
    for (const port of ports) {
      await waitUntil(
        () => ask(port, async (c) => String(await c.cluster('INFO')).includes('cluster_state:ok')),
        30_000,
        `node ${port} did not reach cluster_state:ok`,
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), dir, stop };
}
