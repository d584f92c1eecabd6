/**
 * A worker whose `--client` differs from the one its consumer group's members run, on the real
 * broker: kafkajs and librdkafka name their partition assignors differently, so the broker
 * refuses the newcomer's joins (INCONSISTENT_GROUP_PROTOCOL). The newcomer exits 2 once the
 * refusals lasted a session timeout, with an error naming `--client`; the running worker keeps
 * its partitions and stays ready. Both directions. A file of the librdkafka project: it needs
 * both clients.
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/lib/free-port.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { WorkerProcess } from '../../scripts/lib/worker-process.js';
import type { KafkaClientName } from '../../src/kafka/kafka-client.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios } from './support/scripted-scenario.js';

const fx = useIntegrationFixture('weir-it-client-mismatch');
const scenarios = new ScriptedScenarios(fx);

/** The smallest session timeout the broker allows: the newcomer gives up after about this long. */
const SESSION_TIMEOUT_MS = 6_000;
/** How long the newcomer may take to exit: the session timeout, a rejoin backoff (kafkajs: up to 8 s) and its shutdown. */
const EXIT_WITHIN_MS = SESSION_TIMEOUT_MS + 20_000;

const readyz = async (port: number): Promise<number> => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
const assignments = (worker: WorkerProcess): number => worker.logs.filter((l) => l.msg === 'partitions assigned').length;

describe('a worker on another --client than its group', () => {
  it.each([
    ['kafkajs', 'librdkafka'],
    ['librdkafka', 'kafkajs'],
  ] as const satisfies ReadonlyArray<readonly [KafkaClientName, KafkaClientName]>)(
    'a %s group refuses a %s worker: it exits 2 naming --client, and the running worker stays ready',
    async (running, newcomer) => {
      const s = await scenarios.create(`mismatch-${running}`, { partitions: 2 });
      const port = await freePort();
      const flags = (client: KafkaClientName) => ['--client', client, '--session-timeout-ms', String(SESSION_TIMEOUT_MS)];
      const first = s.start([...flags(running), '--metrics-port', String(port)]);
      await first.waitForLog((l) => l.msg === 'partitions assigned', 60_000);
      await waitFor(
        async () => (await readyz(port)) === 200,
        30_000,
        () => `the ${running} worker is not ready`,
      );
      const assigned = assignments(first);

      const startedAt = Date.now();
      const second = s.start(flags(newcomer));
      const code = await second.exitWithin(EXIT_WITHIN_MS);
      const tookMs = Date.now() - startedAt;
      console.log(`[client-mismatch] a ${newcomer} worker in a ${running} group exited ${String(code)} after ${tookMs} ms`);

      expect(code).toBe(2);
      // It waited out a session timeout (a crashed member of the other client would have left by then) …
      expect(tookMs).toBeGreaterThanOrEqual(SESSION_TIMEOUT_MS);
      // … never joined, and said why, naming the flag.
      expect(assignments(second)).toBe(0);
      const stderr = second.otherOutput.join('\n');
      expect(stderr).toContain(
        `weir: the consumer group '${s.id}' has members of another Kafka client: the broker refused the joins of this --client ${newcomer} member for`,
      );
      expect(stderr).toMatch(
        new RegExp(`start every worker of application\\.id '${s.id}' with the same --client .*\\[WEIR_CLIENT_MISMATCH\\]`),
      );
      // The running worker kept its partitions, with no rebalance, and is still ready.
      expect(first.child.exitCode).toBeNull();
      expect(assignments(first)).toBe(assigned);
      expect(await readyz(port)).toBe(200);
      expect(await first.stop('SIGTERM')).toBe(0);
    },
  );
});
