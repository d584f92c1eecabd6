/**
 * A SIGTERM while the worker's consumer is being restarted after a crash, on a broker instance
 * of its own (the shared broker is never stopped). kafkajs' consumer stops for good once its
 * retries of a broker that is down run out; the worker then closes its tasks and starts another
 * consumer, again and again while the broker stays down. A shutdown then has nothing to commit
 * (the tasks were closed) and must not wait for that consumer's join: the worker exits 0 within
 * a fraction of `--shutdown-timeout-ms`. (librdkafka's consumer never stops on an outage: it
 * reconnects by itself, so there is no restart to interrupt; vitest.config.ts runs this file in
 * the kafkajs project only.)
 */
import { describe, expect, it } from 'vitest';
import { stopBroker } from '../../scripts/lib/kafka-broker.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ownBroker } from './support/own-broker.js';
import { ScriptedScenarios, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const broker = ownBroker('rejoin');
const fx = useIntegrationFixture('weir-it-rejoin', { brokers: broker.start, hookTimeoutMs: 180_000 });
fx.onTeardown(broker.remove);
const scenarios = new ScriptedScenarios(fx);

/** The worker's `--shutdown-timeout-ms`: far longer than a shutdown that does not wait for the join may take. */
const SHUTDOWN_TIMEOUT_MS = 30_000;

describe(onClient('a SIGTERM while the consumer restarts after a crash'), () => {
  it('exits 0 at once, without waiting for the restarted consumer to join', async () => {
    const s = await scenarios.create('rejoin', {
      partitions: 2,
      args: ['--brokers', fx.brokers, '--session-timeout-ms', '6000', '--shutdown-timeout-ms', String(SHUTDOWN_TIMEOUT_MS)],
    });
    const records: Script[] = Array.from({ length: 20 }, (_, i) => ({ id: `r${i}`, seq: i }));
    await s.send(records);
    const worker = s.start();
    expect((await s.outcomes((rs) => rs.length >= records.length)).complete).toBe(true);

    await stopBroker({ instance: broker.instance });
    await worker.waitForLog((l) => l.msg === 'kafka consumer stopped; closing tasks and rejoining the group', 150_000);
    // The restart is under way: its consumer is connecting, or it waits before its next try.
    const signalled = Date.now();
    const code = await worker.stop('SIGTERM');
    const tookMs = Date.now() - signalled;

    const lines = worker.logs
      .slice(-12)
      .map((l) => `${l.msg}${l['err'] ? ` (${String((l['err'] as { message?: unknown }).message)})` : ''}`);
    expect(code, `exit code; last lines:\n${lines.join('\n')}`).toBe(0);
    expect(worker.logs.some((l) => l.msg === 'worker stopped')).toBe(true);
    // A third of the timeout: a worker that waited for the restart's connect and join retries
    // against the stopped broker took 16 s here (measured before the shutdown stopped waiting).
    expect(tookMs, `the shutdown took ${tookMs} ms; last lines:\n${lines.join('\n')}`).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 3);
  }, 300_000);
});
