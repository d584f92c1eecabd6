/**
 * The rebalance watchdog on the real broker: a worker (in this process) whose kafkajs consumer
 * never comes back from the join of a rebalance, as kafkajs 2.2 can after a broker restart
 * ("Failed to find group coordinator" inside its nested retries; the fault campaign caught one
 * such member idle for 7 minutes). The stall is made by holding that one join of kafkajs'
 * `ConsumerGroup` forever (its internals: kafkajs is pinned in package-lock.json). The worker
 * must replace the consumer once the rebalance timeout plus the session timeout have passed,
 * without waiting for the stuck consumer's disconnect (which waits for its join), and then
 * process what comes after; and when the replacement's first join hangs too (a kafkajs
 * consumer's start includes it), give up on that one after the same time and start another. kafkajs project only (vitest.config.ts): librdkafka's consumer
 * rebalances cooperatively and has no such join.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { produce, readTopics } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { rebalanceDeadlineMs } from '../../src/worker/rebalance-watchdog.js';
import { onClient } from './support/client-under-test.js';
import { copyWorker, type CopyWorkerLogLine } from './support/copy-worker.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-watchdog');

const SESSION_TIMEOUT_MS = 6_000;

type JoinAndSync = (this: { groupId: string }) => Promise<void>;
const ConsumerGroup = createRequire(import.meta.url)('kafkajs/src/consumer/consumerGroup.js') as {
  prototype: { joinAndSync: JoinAndSync };
};
const joinAndSync = ConsumerGroup.prototype.joinAndSync;
afterAll(() => {
  ConsumerGroup.prototype.joinAndSync = joinAndSync;
});

/** Joins held by {@link holdJoins}, to let go of after a test (kafkajs then finishes and disconnects those consumers). */
const heldJoins: Array<() => void> = [];
afterAll(() => {
  for (const release of heldJoins.splice(0)) release();
});

/**
 * Holds joins of kafkajs consumers of `groupId` until released: `[n, k]` holds the k-th join of the
 * n-th consumer of the group (in the order they first join: the worker's, then the test's other
 * member, then the worker's replacements). Returns how many it held, and a release of them all
 * (each then joins as kafkajs would have).
 */
function holdJoins(groupId: string, holds: ReadonlyArray<readonly [consumer: number, join: number]>) {
  let consumers = 0;
  let held = 0;
  const releases: Array<() => Promise<void>> = [];
  ConsumerGroup.prototype.joinAndSync = function (this: { groupId: string; weirTestConsumer?: number; weirTestJoins?: number }) {
    if (this.groupId === groupId && this.weirTestConsumer === undefined) {
      this.weirTestConsumer = ++consumers;
      this.weirTestJoins = 0;
    }
    if (this.weirTestConsumer !== undefined) {
      const join = ++this.weirTestJoins!;
      if (holds.some(([c, j]) => c === this.weirTestConsumer && j === join)) {
        held++;
        return new Promise<void>((resolve, reject) => {
          const release = () => joinAndSync.call(this).then(resolve, (error: unknown) => reject(error as Error));
          releases.push(release);
          heldJoins.push(() => void release());
        });
      }
    }
    return joinAndSync.call(this);
  };
  /** Lets the held joins go on; settles when they have joined (or failed). */
  const release = async (): Promise<void> => {
    await Promise.allSettled(releases.splice(0).map((join) => join()));
  };
  return { held: () => held, release };
}

/**
 * A worker of a new application on a 2-partition topic, with `holds` (see {@link holdJoins});
 * it processes 10 records, then a second member joins the group (holding no partitions for
 * long: it commits nothing, and leaves when told).
 */
async function scenario(holds: ReadonlyArray<readonly [number, number]>) {
  const id = `weir-it-watchdog-${randomUUID().slice(0, 8)}`;
  const [source, out] = [`${id}.in`, `${id}.out`];
  await fx.createTopics([
    { topic: source, partitions: 2 },
    { topic: out, partitions: 2 },
  ]);
  const joins = holdJoins(id, holds);
  const logs: CopyWorkerLogLine[] = [];
  const worker = copyWorker({
    applicationId: id,
    source,
    sink: out,
    brokers: fx.brokers,
    client: 'kafkajs',
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    logs,
  });
  fx.onTeardown(() => worker.stop());
  await worker.start();
  const send = (from: number, to: number) =>
    produce(
      fx.kafka,
      source,
      Array.from({ length: to - from }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` })),
    );
  await send(0, 10);
  expect((await readTopics(fx.kafka, [out], { until: (rs) => rs.length >= 10, timeoutMs: 60_000 })).complete).toBe(true);

  const other = fx.kafka.consumer({ groupId: id, sessionTimeout: SESSION_TIMEOUT_MS });
  fx.onTeardown(() => other.disconnect());
  await other.connect();
  await other.subscribe({ topics: [source], fromBeginning: true });
  await other.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => undefined });

  const line = (what: string, match: (l: CopyWorkerLogLine) => boolean) =>
    waitFor(
      () => logs.find(match),
      200_000,
      () =>
        `no ${what}; last lines: ${logs
          .slice(-5)
          .map((l) => l.msg)
          .join(' | ')}`,
    );
  /** Every record, those sent before and `to - from` sent now, reaches the sink. */
  const through = async (from: number, to: number): Promise<void> => {
    await send(from, to);
    const { records, complete } = await readTopics(fx.kafka, [out], {
      until: (rs) => new Set(rs.map((r) => r.key)).size >= to,
      timeoutMs: 120_000,
    });
    expect(complete).toBe(true);
    expect(new Set(records.map((r) => r.key)).size).toBe(to);
    await waitFor(
      () => worker.currentState === 'running',
      30_000,
      () => `worker state ${worker.currentState}`,
    );
  };
  /** The other member leaves, and 10 more records come through. */
  const allThrough = async (): Promise<void> => {
    await other.disconnect();
    await through(10, 20);
  };
  /** The group's members once it is stable, else -1. */
  const members = async (): Promise<number> => {
    const admin = fx.kafka.admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([id]);
      return groups[0]?.state === 'Stable' ? groups[0].members.length : -1;
    } finally {
      await admin.disconnect();
    }
  };
  return { held: joins.held, release: joins.release, line, allThrough, through, members };
}

describe(onClient('a consumer stuck in its join'), () => {
  const deadline = rebalanceDeadlineMs(SESSION_TIMEOUT_MS);

  it('after a rebalance: is replaced after the rebalance timeout plus the session timeout, and the worker goes on', async () => {
    // The worker's consumer's rejoin after the other member joined.
    const s = await scenario([[1, 2]]);
    const suspended = await s.line('suspension', (l) => l.msg === 'group rebalancing: suspending tasks');
    const stalled = await s.line('RebalanceStalledError', (l) => l.err?.type === 'RebalanceStalledError');
    expect(s.held()).toBe(1);
    expect(stalled.time - suspended.time).toBeGreaterThanOrEqual(deadline - 50);
    expect(stalled.time - suspended.time).toBeLessThan(deadline + 5_000);
    expect(stalled.err!.message).toContain(`within ${deadline} ms after the group began rebalancing`);
    await s.allThrough();
  }, 300_000);

  it('when the replacement hangs in its first join too: gives up on it after the same time and starts another', async () => {
    // Consumer 3 is the worker's replacement (2 is the other member).
    const s = await scenario([
      [1, 2],
      [3, 1],
    ]);
    const stalled = await s.line('RebalanceStalledError', (l) => l.err?.type === 'RebalanceStalledError');
    const again = await s.line(
      'a second RebalanceStalledError',
      (l) => l.msg === 'the new consumer stopped while joining; rejoining again',
    );
    expect(s.held()).toBe(2);
    expect(again.err?.type).toBe('RebalanceStalledError');
    expect(again.err!.message).toContain(`within ${deadline} ms after the new consumer began joining`);
    // The first replacement began joining once the stuck consumer's stop returned (at most a session timeout).
    expect(again.time - stalled.time).toBeGreaterThanOrEqual(deadline - 50);
    expect(again.time - stalled.time).toBeLessThan(deadline + SESSION_TIMEOUT_MS + 5_000);
    await s.allThrough();
    // The given-up replacement's join ends now: it has joined once this settles, then it leaves
    // (its stop waited for the join) rather than hold partitions for good: the group settles on
    // the worker alone, which processes on.
    await s.release();
    await waitFor(
      async () => (await s.members()) === 1,
      90_000,
      () => 'the group did not settle on one member',
    );
    await s.through(20, 30);
    expect(await s.members()).toBe(1);
  }, 480_000);
});
