/**
 * A member that lost its partitions and never gets an assignment again, on librdkafka and the
 * real broker. librdkafka rejoins such a member by itself; the fault campaign (seed 640928, a
 * broker restart on a loaded machine) caught one that did not: its commits failed with "Waiting
 * for coordinator" and it stayed out of the group, idle, for ten minutes. The worker must treat
 * that as a stalled rebalance: replace its consumer after the rebalance timeout plus the session
 * timeout (RebalanceWatchdog), and go on processing.
 *
 * librdkafka's own join cannot be held from JavaScript, so the loss is handed to the worker as
 * librdkafka reports one (a cooperative revocation with `lost`), while librdkafka itself keeps
 * the assignment: no new assignment follows, as in the campaign's run. First a loss followed by
 * an assignment (as librdkafka reports a rejoin): the assignment must end the deadline, and no
 * consumer is replaced. librdkafka project only (its file name): kafkajs rebalances eagerly and
 * reports no lost partitions.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { produce, readTopics } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { AssignmentEvent, RevocationEvent } from '../../src/kafka/group-consumer.js';
import { rebalanceDeadlineMs } from '../../src/worker/rebalance-watchdog.js';
import { onClient } from './support/client-under-test.js';
import { copyWorker, type CopyWorkerLogLine } from './support/copy-worker.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-lost');

const SESSION_TIMEOUT_MS = 6_000;

describe(onClient('a member that lost its partitions and is not given any again'), () => {
  const deadline = rebalanceDeadlineMs(SESSION_TIMEOUT_MS);

  it('goes on after a loss it recovers from; without an assignment after it, is replaced at the rebalance timeout plus the session timeout, and goes on', async () => {
    const id = `weir-it-lost-${randomUUID().slice(0, 8)}`;
    const [source, out] = [`${id}.in`, `${id}.out`];
    await fx.createTopics([
      { topic: source, partitions: 2 },
      { topic: out, partitions: 2 },
    ]);
    const logs: CopyWorkerLogLine[] = [];
    const joins: AssignmentEvent[] = [];
    const worker = copyWorker({
      applicationId: id,
      source,
      sink: out,
      brokers: fx.brokers,
      client: 'librdkafka',
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      logs,
      onJoined: (event) => joins.push(event),
    });
    fx.onTeardown(() => worker.stop());
    await worker.start();
    const through = async (from: number, to: number): Promise<void> => {
      await produce(
        fx.kafka,
        source,
        Array.from({ length: to - from }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` })),
      );
      const { records, complete } = await readTopics(fx.kafka, [out], {
        until: (rs) => new Set(rs.map((r) => r.key)).size >= to,
        timeoutMs: 120_000,
      });
      expect(complete).toBe(true);
      expect(new Set(records.map((r) => r.key)).size).toBe(to);
    };
    await through(0, 10);
    const line = (what: string, match: (l: CopyWorkerLogLine) => boolean) =>
      waitFor(
        () => logs.find(match),
        deadline + 60_000,
        () =>
          `no ${what}; last lines: ${logs
            .slice(-5)
            .map((l) => l.msg)
            .join(' | ')}`,
      );

    const assignment = joins.at(-1)!.assignment;
    expect(assignment.length).toBe(2);
    const member = worker as unknown as { onRevoked(event: RevocationEvent): Promise<void>; onAssigned(event: AssignmentEvent): void };
    const lost: RevocationEvent = { partitions: assignment, protocol: 'cooperative', lost: true };

    // A loss the member recovers from (librdkafka rejoins and assigns the partitions again):
    // the assignment ends the deadline, and nothing is replaced after it.
    await member.onRevoked(lost);
    member.onAssigned({ ...joins.at(-1)!, added: assignment });
    const recoveredAt = Date.now();
    await through(10, 20);
    // Absence over a span: only waiting out the deadline shows that nothing fires at it.
    await sleep(Math.max(0, recoveredAt + deadline + 5_000 - Date.now()));
    expect(logs.filter((l) => l.err?.type === 'RebalanceStalledError')).toEqual([]);

    // A loss with no assignment after it.
    const joinsBefore = joins.length;
    await member.onRevoked(lost);
    const lostAt = Date.now();
    const stalled = await line('RebalanceStalledError', (l) => l.err?.type === 'RebalanceStalledError');
    expect(stalled.err!.message).toContain(`within ${deadline} ms after the member lost its partitions`);
    expect(stalled.time - lostAt).toBeGreaterThanOrEqual(deadline - 50);
    expect(stalled.time - lostAt).toBeLessThan(deadline + 5_000);
    // The replacement joined, took the partitions and processes what comes next.
    await waitFor(
      () => joins.length > joinsBefore && joins.at(-1)!.assignment.length === 2,
      120_000,
      () => `no new assignment of both partitions; joins ${joins.length}`,
    );
    await through(20, 30);
    expect(worker.currentState).toBe('running');
  }, 420_000);
});
