/**
 * `/healthz` and `/readyz` of `weir run --metrics-port` on the real broker: the readiness
 * lifecycle (start → ready → a second worker joins, a rebalance → ready → SIGTERM → not ready;
 * on librdkafka's cooperative rebalances the worker stays ready through them),
 * the JSON bodies (tasks with their states, the group member id), liveness failing while a task
 * is stuck in dedup-store retries (a Redis this file starts and stops) and recovering, and a
 * `--metrics-port` that is already in use (exit 1, naming the port).
 */
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/lib/free-port.js';
import { ensureRedis, stopRedis } from '../../scripts/lib/redis-server.js';
import { kafkaPaths } from '../../scripts/lib/repo-paths.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { runWeir } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { SCRIPTED_TOPOLOGY, ScriptedScenarios } from './support/scripted-scenario.js';
import { onClient, REBALANCE_PROTOCOL } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-health');
const scenarios = new ScriptedScenarios(fx);

interface Probe {
  readonly status: number;
  readonly body: {
    readonly status: string;
    readonly state: string;
    readonly memberId: string | null;
    readonly generation: number;
    readonly tasks: ReadonlyArray<{ readonly task: string; readonly state: string }>;
  };
}

/** GET a probe; undefined while nothing listens on the port. */
async function probe(port: number, path: '/readyz' | '/healthz'): Promise<Probe | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: (await res.json()) as Probe['body'] };
  } catch {
    return undefined;
  }
}

/** Polls `/readyz` every 20 ms, keeping every answer, until `until` holds for one (or the port closes, with `untilClosed`). */
async function watchReadiness(port: number, until: (p: Probe) => boolean, timeoutMs: number, untilClosed = false): Promise<Probe[]> {
  const seen: Probe[] = [];
  let answered = false;
  await waitFor(
    async () => {
      const p = await probe(port, '/readyz');
      if (p === undefined) return untilClosed && answered;
      answered = true;
      seen.push(p);
      return !untilClosed && until(p);
    },
    timeoutMs,
    () => `readiness on port ${port}: last answers ${JSON.stringify(seen.slice(-3))}`,
    20,
  );
  return seen;
}

describe(onClient('weir run: /healthz and /readyz'), () => {
  it('is not ready while starting, during a rebalance and during shutdown, and ready in between', async () => {
    const sc = await scenarios.create('weir-it-health', {
      partitions: 4,
      // Each attempt takes 1.5 s, so SIGTERM finds a record in hand and shutdown lasts a while.
      env: { WEIR_TEST_RECORD_DELAY_MS: '1500' },
      args: ['--session-timeout-ms', '6000'],
    });
    const [port1, port2] = [await freePort(), await freePort()];

    // start → ready
    const first = sc.start(['--metrics-port', String(port1)]);
    const starting = await watchReadiness(port1, (p) => p.status === 200, 60_000);
    expect(starting[0]).toMatchObject({ status: 503, body: { status: 'not ready', state: 'starting' } });
    const ready1 = starting.at(-1)!;
    expect(ready1.body.state).toBe('running');
    expect(ready1.body.memberId).toMatch(/^weir-/);
    expect(ready1.body.tasks.map((t) => t.task).sort()).toEqual([0, 1, 2, 3].map((p) => `${sc.topics.source}-${p}`));
    expect(ready1.body.tasks.every((t) => t.state === 'running')).toBe(true);
    const live = await probe(port1, '/healthz');
    expect(live).toMatchObject({ status: 200, body: { status: 'ok', state: 'running', memberId: ready1.body.memberId } });

    // a second worker joins: the first rebalances and is ready again, with fewer tasks
    const second = sc.start(['--metrics-port', String(port2)]);
    const ready2 = (await watchReadiness(port2, (p) => p.status === 200 && p.body.tasks.length > 0, 60_000)).at(-1)!;
    const after1 = (
      await watchReadiness(port1, (p) => p.status === 200 && p.body.generation > ready1.body.generation && p.body.tasks.length < 4, 60_000)
    ).at(-1)!;
    expect(ready2.body.memberId).not.toBe(after1.body.memberId);
    expect(new Set([...after1.body.tasks, ...ready2.body.tasks].map((t) => t.task))).toEqual(new Set(ready1.body.tasks.map((t) => t.task)));
    // eager (kafkajs): every task suspends; cooperative (librdkafka): only the moving ones commit and close.
    await first.waitForLog((l) =>
      REBALANCE_PROTOCOL === 'eager'
        ? l.msg === 'group rebalancing: suspending tasks'
        : l.msg === 'partitions revoked: their tasks commit and close',
    );

    // A rebalance long enough to watch: a third worker joins, and the second is frozen just before
    // its join request goes out; the group waits for the frozen member until its session (6 s)
    // expires, and the first worker stays 503 meanwhile.
    const third = sc.start();
    await third.waitForLog((l) => l.msg === 'joining the consumer group');
    second.child.kill('SIGSTOP');
    const rebalance = await watchReadiness(port1, (p) => p.status === 200 && p.body.generation > after1.body.generation, 60_000);
    if (REBALANCE_PROTOCOL === 'eager') {
      const during = rebalance.filter((p) => p.body.state === 'rebalancing');
      expect(during.length).toBeGreaterThan(0);
      expect(during.every((p) => p.status === 503 && p.body.status === 'not ready')).toBe(true);
    } else {
      // Cooperative: the first worker's tasks never stop, so it stays ready all through the rebalance.
      expect(rebalance.length).toBeGreaterThan(1);
      expect(rebalance.every((p) => p.status === 200 && p.body.state === 'running')).toBe(true);
    }
    expect(rebalance.at(-1)!.body.tasks.every((t) => t.state === 'running')).toBe(true);

    // SIGTERM with records in hand → not ready (stopping) until the process is gone
    // 32 keys put records on every partition (8 keys reached only partitions 0 and 1), so the
    // first worker has records in hand whichever partitions it kept (cooperative-sticky keeps others than eager).
    await sc.send(
      Array.from({ length: 32 }, (_, seq) => ({ id: `h${seq}`, seq })),
      32,
    );
    // once one record is out, the others (1.5 s each, in offset order per partition) are in hand or queued
    expect((await sc.outcomes((rs) => rs.length >= 1, 30_000)).complete).toBe(true);
    first.child.kill('SIGTERM');
    const stopping = await watchReadiness(port1, () => false, 30_000, true);
    // (an answer given before the worker handled the signal may still be 200; none after it)
    const began = stopping.findIndex((p) => p.body.state === 'stopping');
    expect(began).toBeGreaterThanOrEqual(0);
    expect(stopping.slice(began).every((p) => p.status === 503 && p.body.status === 'not ready')).toBe(true);
    expect(await first.exitWithin(30_000)).toBe(0);
    expect(await third.stop('SIGTERM')).toBe(0);
  });

  it('exits 1 naming the port when --metrics-port is already in use', async () => {
    const sc = await scenarios.create('weir-it-health-port', { partitions: 1 });
    const blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, () => resolve((blocker.address() as { port: number }).port)));
    try {
      const result = await runWeir(['run', SCRIPTED_TOPOLOGY, '--application-id', sc.id, '--metrics-port', String(port)], {
        env: { WEIR_TEST_SOURCE: sc.topics.source, WEIR_TEST_SINK: sc.topics.sink, WEIR_TEST_DLQ: sc.topics.dlq },
        timeoutMs: 30_000,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `cannot serve metrics and health checks on port ${port} (--metrics-port): the port is already in use`,
      );
    } finally {
      blocker.close();
    }
  });

  it('binds --metrics-host, says where in its start line, and exits 1 naming an address it cannot have', async () => {
    const sc = await scenarios.create('weir-it-health-host', { partitions: 1 });
    const port = await freePort();
    const worker = sc.start(['--metrics-host', '127.0.0.1', '--metrics-port', String(port)]);
    const serving = await worker.waitForLog((l) => l.msg.startsWith('serving /metrics'), 60_000);
    expect(serving.msg).toBe(`serving /metrics, /healthz and /readyz on 127.0.0.1:${port}`);
    expect(serving['metricsRecordingLevel']).toBe('info');
    expect(serving['address']).toBe('127.0.0.1');
    expect((await watchReadiness(port, (p) => p.status === 200, 60_000)).at(-1)?.status).toBe(200);
    expect(await worker.stop('SIGTERM')).toBe(0);

    // 192.0.2.1 (TEST-NET-1) is no address of this machine.
    const result = await runWeir(
      ['run', SCRIPTED_TOPOLOGY, '--application-id', sc.id, '--metrics-host', '192.0.2.1', '--metrics-port', String(port)],
      { env: { WEIR_TEST_SOURCE: sc.topics.source, WEIR_TEST_SINK: sc.topics.sink, WEIR_TEST_DLQ: sc.topics.dlq }, timeoutMs: 30_000 },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot serve metrics and health checks on 192.0.2.1:${port} (--metrics-host, --metrics-port)`);
  });

  it('fails liveness (not readiness) while a task is stuck in dedup-store retries past --stuck-task-ms, and recovers', async () => {
    const redisPort = await freePort();
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    fx.onTeardown(async () => {
      await stopRedis(redisUrl);
      await rm(path.join(kafkaPaths.runtimeDir, `redis-${redisPort}.log`), { force: true });
    });
    expect((await ensureRedis(redisUrl)).startedByUs).toBe(true);
    const sc = await scenarios.create('weir-it-health-stuck', { partitions: 1, env: { WEIR_TEST_DEDUP: 'redis' } });
    const port = await freePort();
    sc.start(['--metrics-port', String(port), '--redis-url', redisUrl, '--stuck-task-ms', '1000']);
    await watchReadiness(port, (p) => p.status === 200, 60_000);
    await sc.send([1, 2, 3].map((seq) => ({ id: `s${seq}`, seq })));
    expect((await sc.outcomes((rs) => rs.length >= 3)).complete).toBe(true);
    expect((await probe(port, '/healthz'))?.status).toBe(200);

    expect(await stopRedis(redisUrl)).toBe(true);
    await sc.send([4, 5, 6].map((seq) => ({ id: `s${seq}`, seq })));
    const stuck = await waitFor(
      async () => {
        const p = await probe(port, '/healthz');
        return p?.status === 503 ? p : undefined;
      },
      30_000,
      () => 'liveness never failed',
    );
    const problems = (stuck.body as unknown as { problems: string[] }).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^task ${sc.topics.source}-0 retrying dedup for \\d+ ms \\(limit 1000 ms\\)$`));
    expect((await probe(port, '/readyz'))?.status).toBe(200);

    await ensureRedis(redisUrl);
    await waitFor(
      async () => (await probe(port, '/healthz'))?.status === 200,
      30_000,
      () => 'liveness did not recover',
    );
    expect((await sc.outcomes((rs) => rs.length >= 6)).complete).toBe(true);
  });
});
