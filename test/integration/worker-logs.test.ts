/**
 * The worker's logs through a broker restart, on a broker instance of its own (the shared
 * broker is never stopped): only real problems reach warn — no client heartbeat, join or
 * rebalance lines — the connection errors of the outage are aggregated (one warning per broker
 * per 10 s interval, with a count) and one info line says when the connection is back. The
 * client id names the host and process, and weir's lines carry the group member id once joined.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { startBroker, stopBroker } from '../../scripts/lib/kafka-broker.js';
import { endOffsets } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import type { WorkerLogLine } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { OWN_BROKER_START, ownBroker } from './support/own-broker.js';
import { ScriptedScenarios, type Script } from './support/scripted-scenario.js';
import { CLIENT, onClient } from './support/client-under-test.js';

const broker = ownBroker('logs');
const { instance } = broker;
const fx = useIntegrationFixture('weir-it-logs', { brokers: broker.start, hookTimeoutMs: 180_000 });
fx.onTeardown(broker.remove);
const scenarios = new ScriptedScenarios(fx);

const WARN = 40;
/** The aggregation interval of connection warnings (ConnectionOutages' default, both clients). */
const CONNECTION_WARN_INTERVAL_MS = 10_000;
/** A line of the Kafka client under test (`component: 'kafkajs'` or `'librdkafka'`). */
const isClientLine = (l: WorkerLogLine): boolean => l['component'] === CLIENT;
const isConnectionWarning = (l: WorkerLogLine): boolean =>
  l.msg.startsWith('kafka broker unreachable') || l.msg.startsWith('kafka broker still unreachable');

/** The last lines of a worker's log, for a failure message. */
const lastLines = (logs: readonly WorkerLogLine[]): string =>
  logs
    .slice(-15)
    .map((l) => JSON.stringify(l))
    .join('\n');

describe(onClient('worker logs through a broker restart'), () => {
  it('keeps heartbeat and rebalance chatter off warn, aggregates connection errors, and names the member', async () => {
    const s = await scenarios.create('logs', { partitions: 2, args: ['--brokers', fx.brokers, '--session-timeout-ms', '10000'] });
    const batch = (from: number): Script[] => Array.from({ length: 50 }, (_, i) => ({ id: `r${from + i}`, seq: from + i }));
    await s.send(batch(0));
    const worker = s.start();
    expect((await s.outcomes((rs) => rs.length >= 50)).complete).toBe(true);
    const assigned = await worker.waitForLog((l) => l.msg === 'partitions assigned');

    // The client id names host and process; the member id in the logs is the group's.
    const { groups } = await fx.admin.describeGroups([s.id]);
    const members = groups[0]!.members;
    expect(members.map((m) => m.clientId)).toEqual([`weir-${s.id}-${hostname()}-${worker.child.pid}`]);
    expect(assigned['memberId']).toBe(members[0]!.memberId);

    // The outage: stop the broker, wait for the first aggregated warning after the first one.
    const outageBegan = Date.now();
    await stopBroker({ instance });
    await worker.waitForLog((l) => l.msg.startsWith('kafka broker still unreachable'), 60_000);
    await startBroker({ instance, ...OWN_BROKER_START });
    const back = await worker.waitForLog((l) => l.msg === 'kafka broker connection is back', 120_000);
    const outageMs = Date.now() - outageBegan;
    await s.send(batch(50));
    // The worker is at work again: every input committed (at_least_once commits only outcomes
    // durable in the sink). Read through the admin API: a reader that joins a group of its own
    // on the restarted broker can wait on its coordinator longer than the worker does.
    const caughtUp = await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 120_000);
    expect(caughtUp, `the worker did not commit all 100 inputs; its last lines:\n${lastLines(worker.logs)}`).toBe(true);
    // Every input has its output; a replay after the outage can repeat at most the first 50.
    const ends = await endOffsets(fx.admin, [s.topics.sink]);
    const outputs = [...(ends.get(s.topics.sink)?.values() ?? [])].reduce((n, end) => n + end, 0);
    expect(outputs).toBeGreaterThanOrEqual(100);
    expect(outputs).toBeLessThanOrEqual(150);
    expect(await worker.stop('SIGTERM')).toBe(0);

    const clientWarnings = worker.logs.filter((l) => isClientLine(l) && l.level >= WARN);
    // No heartbeat, join, sync or rebalance chatter at warn.
    expect(
      clientWarnings.filter((l) => /heartbeat|rebalanc|joingroup|syncgroup|re-joining/i.test(`${l.msg} ${String(l['error'] ?? '')}`)),
    ).toEqual([]);
    // Connection errors only as aggregated warnings: per broker, one when the outage began and
    // at most one per interval after it.
    expect(clientWarnings.filter((l) => !isConnectionWarning(l) && /ECONNREFUSED|Connection error|Failed to connect/i.test(l.msg))).toEqual(
      [],
    );
    // Nothing else of the client at warn: a restart is no real problem once it is over.
    expect(clientWarnings.filter((l) => !isConnectionWarning(l)).map((l) => `${l.msg} ${String(l['error'] ?? '')}`)).toEqual([]);
    const connectionWarnings = clientWarnings.filter(isConnectionWarning);
    const brokers = new Set(connectionWarnings.map((l) => String(l['broker'])));
    expect(connectionWarnings.length).toBeGreaterThanOrEqual(2);
    expect(connectionWarnings.length).toBeLessThanOrEqual(brokers.size * (1 + Math.ceil(outageMs / CONNECTION_WARN_INTERVAL_MS)));
    expect(back.level).toBe(30);
    expect(back['errors']).toBeGreaterThan(1);
    // weir's own lines after the join carry the member id.
    const afterJoin = worker.logs.slice(worker.logs.indexOf(assigned));
    expect(afterJoin.filter((l) => l['memberId'] === undefined).map((l) => l.msg)).toEqual([]);
    // A broker stop and start on a loaded 2-core machine can take most of the default 120 s.
  }, 300_000);
});
