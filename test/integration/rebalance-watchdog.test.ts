/**
 * The rebalance watchdog on the real broker: a worker (in this process) whose kafkajs consumer
 * never comes back from the join of a rebalance, as kafkajs 2.2 can after a broker restart
 * ("Failed to find group coordinator" inside its nested retries; the fault campaign caught one
 * such member idle for 7 minutes). The stall is made by holding that one join of kafkajs'
 * `ConsumerGroup` forever (its internals: kafkajs is pinned in package-lock.json). The worker
 * must replace the consumer once the rebalance timeout plus the session timeout have passed,
 * without waiting for the stuck consumer's disconnect (which waits for its join), and then
 * process what comes after. kafkajs project only (vitest.config.ts): librdkafka's consumer
 * rebalances cooperatively and has no such join.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { sink, topology } from 'weir';
import { produce, readTopics } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { loadWorkerConfig } from '../../src/config/worker-config.js';
import { compile } from '../../src/topology/compile.js';
import { rebalanceDeadlineMs } from '../../src/worker/rebalance-watchdog.js';
import { Worker } from '../../src/worker/worker.js';
import { onClient } from './support/client-under-test.js';
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

/** Holds the second join of the first kafkajs consumer of `groupId` (its rejoin after a rebalance) forever; returns how many it held. */
function holdSecondJoin(groupId: string): () => number {
  let claimed = false;
  let held = 0;
  ConsumerGroup.prototype.joinAndSync = function (this: { groupId: string; weirTestJoins?: number }) {
    if (this.groupId === groupId && !claimed) {
      claimed = true;
      this.weirTestJoins = 0;
    }
    if (this.weirTestJoins !== undefined && ++this.weirTestJoins === 2) {
      held++;
      return new Promise<void>(() => undefined);
    }
    return joinAndSync.call(this);
  };
  return () => held;
}

describe(onClient('a consumer stuck in the join of a rebalance'), () => {
  it('is replaced after the rebalance timeout plus the session timeout, and the worker goes on', async () => {
    const id = `weir-it-watchdog-${randomUUID().slice(0, 8)}`;
    const [source, out] = [`${id}.in`, `${id}.out`];
    await fx.createTopics([
      { topic: source, partitions: 2 },
      { topic: out, partitions: 2 },
    ]);
    const held = holdSecondJoin(id);
    const logs: Array<{ msg: string; time: number; err?: { type?: string; message?: string } }> = [];
    const worker = new Worker({
      topology: compile(
        topology({ applicationId: id })
          .source(source, { key: 'string', value: 'string' })
          .process('copy', (r) => r.value)
          .branch({ success: sink(out) }),
      ),
      config: loadWorkerConfig(
        { brokers: fx.brokers, sessionTimeoutMs: String(SESSION_TIMEOUT_MS), commitIntervalMs: '100', client: 'kafkajs' },
        {},
      ),
      logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
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

    // A second member makes the group rebalance; the worker's rejoin is held. It commits nothing.
    const other = fx.kafka.consumer({ groupId: id, sessionTimeout: SESSION_TIMEOUT_MS });
    fx.onTeardown(() => other.disconnect());
    await other.connect();
    await other.subscribe({ topics: [source], fromBeginning: true });
    await other.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => undefined });

    const at = (msg: string) =>
      waitFor(
        () => logs.find((l) => l.msg === msg),
        150_000,
        () => `no "${msg}" log line`,
      );
    const suspended = await at('group rebalancing: suspending tasks');
    const stalled = await waitFor(
      () => logs.find((l) => l.err?.type === 'RebalanceStalledError'),
      150_000,
      () =>
        `no RebalanceStalledError; last lines: ${logs
          .slice(-5)
          .map((l) => l.msg)
          .join(' | ')}`,
    );
    expect(held()).toBe(1);
    const deadline = rebalanceDeadlineMs(SESSION_TIMEOUT_MS);
    expect(stalled.time - suspended.time).toBeGreaterThanOrEqual(deadline - 50);
    expect(stalled.time - suspended.time).toBeLessThan(deadline + 5_000);
    expect(stalled.err!.message).toContain(`within ${deadline} ms`);

    // The other member leaves: the worker's new consumer takes both partitions and every record,
    // those sent before the stall and those sent now, reaches the sink.
    await other.disconnect();
    await send(10, 20);
    const { records, complete } = await readTopics(fx.kafka, [out], {
      until: (rs) => new Set(rs.map((r) => r.key)).size >= 20,
      timeoutMs: 120_000,
    });
    expect(complete).toBe(true);
    expect(new Set(records.map((r) => r.key)).size).toBe(20);
    await waitFor(
      () => worker.currentState === 'running',
      30_000,
      () => `worker state ${worker.currentState}`,
    );
  }, 240_000);
});
