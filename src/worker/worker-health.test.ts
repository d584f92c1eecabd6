import { afterEach, describe, expect, it } from 'vitest';
import { WorkerHealth, type WorkerHealthSnapshot } from './worker-health.js';

const base: WorkerHealthSnapshot = {
  state: 'running',
  consumerRestarting: false,
  groupId: 'app',
  memberId: 'weir-app-1234',
  generation: 1,
  tasks: [
    { task: 'in-0', topic: 'in', partition: 0, state: 'running' },
    { task: 'in-1', topic: 'in', partition: 1, state: 'running' },
  ],
};

describe('WorkerHealth', () => {
  let health: WorkerHealth | undefined;
  afterEach(() => health?.close());
  const make = (snapshot: () => WorkerHealthSnapshot, now?: () => number) =>
    (health = new WorkerHealth(snapshot, { eventLoopStallMs: 200, stuckTaskMs: 1_000, ...(now ? { now } : {}) }));

  it('is ready only while running with every assigned task running, and lists the tasks and the member id', () => {
    let snapshot = base;
    const h = make(() => snapshot);
    expect(h.readiness().status).toBe(200);
    expect(h.readiness().body).toMatchObject({
      status: 'ready',
      memberId: 'weir-app-1234',
      tasks: [{ task: 'in-0', state: 'running' }, {}],
    });
    for (const state of ['starting', 'rebalancing', 'restarting-consumer', 'stopping', 'stopped'] as const) {
      snapshot = { ...base, state };
      expect(h.readiness()).toMatchObject({ status: 503, body: { status: 'not ready', state, reason: `worker is ${state}` } });
    }
    snapshot = { ...base, tasks: [base.tasks[0]!, { task: 'in-1', topic: 'in', partition: 1, state: 'creating' }] };
    expect(h.readiness()).toMatchObject({ status: 503, body: { reason: 'tasks not running yet: in-1' } });
  });

  it('fails liveness when the consumer stopped and is not being replaced, not while it is', () => {
    let snapshot: WorkerHealthSnapshot = { ...base, state: 'restarting-consumer', consumerRestarting: true };
    const h = make(() => snapshot);
    expect(h.liveness().status).toBe(200);
    snapshot = { ...base, state: 'restarting-consumer', consumerRestarting: false };
    expect(h.liveness()).toMatchObject({ status: 503, body: { status: 'unhealthy' } });
    snapshot = { ...base, state: 'stopped' };
    expect((h.liveness().body['problems'] as string[])[0]).toMatch(/consumer stopped/);
  });

  it('fails liveness when a task retries a port call longer than the limit, and recovers after its next flush', () => {
    let now = 10_000;
    const h = make(
      () => base,
      () => now,
    );
    const listener = h.listener();
    listener.onPortError!({ task: 'in-1', port: 'produce', error: new Error('down'), retryInMs: 400 });
    now += 900;
    listener.onPortError!({ task: 'in-1', port: 'produce', error: new Error('down'), retryInMs: 800 });
    expect(h.liveness().status).toBe(200);
    expect(h.readiness().body['tasks']).toEqual([base.tasks[0], { ...base.tasks[1], portRetry: { port: 'produce', sinceMs: 10_000 } }]);
    now += 200; // 1 100 ms since the first failure
    const live = h.liveness();
    expect(live.status).toBe(503);
    expect(live.body['problems']).toEqual(['task in-1 retrying produce for 1100 ms (limit 1000 ms)']);
    listener.onFlush!({ task: 'in-1', topic: 'in', partition: 1, records: 3, outputs: 3, confirmedKeys: 0 });
    expect(h.liveness().status).toBe(200);
  });

  it('fails liveness after the event loop was blocked longer than the limit, then passes again', async () => {
    const h = make(() => base);
    await new Promise((resolve) => setTimeout(resolve, 50));
    h.liveness(); // resets the window
    const until = Date.now() + 400;
    while (Date.now() < until); // block the loop for 400 ms (limit 200)
    await new Promise((resolve) => setTimeout(resolve, 60)); // let the monitor's timer see the delay
    const stalled = h.liveness();
    expect(stalled.status).toBe(503);
    expect(stalled.body['eventLoopMaxDelayMs']).toBeGreaterThan(200);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(h.liveness().status).toBe(200);
  });
});
