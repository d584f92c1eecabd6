/**
 * Static membership on librdkafka (`--group-instance-id`, KIP-345), on the real broker: a
 * worker SIGKILLed and restarted at once takes its partitions back without a rebalance of the
 * other member; a second worker started with a running worker's id is refused and the first
 * keeps running.
 */
import { describe, expect, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import type { WorkerProcess } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import type { ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { ScriptedScenarios, scriptOf } from './support/scripted-scenario.js';
import { steadyInput } from './support/steady-input.js';

const fx = useIntegrationFixture('weir-it-static');
const scenarios = new ScriptedScenarios(fx);

const PARTITIONS = 4;
const FLAGS = ['--client', 'librdkafka', '--session-timeout-ms', '30000'];

async function assignment(worker: WorkerProcess): Promise<string[]> {
  const line = await worker.waitForLog(
    (l) => l.msg === 'partitions assigned' && (l['partitions'] as string[]).length === PARTITIONS / 2,
    60_000,
  );
  return [...(line['partitions'] as string[])].sort();
}

/** The process that wrote an output. */
const pidOf = (record: ReadRecord): number | undefined => (scriptOf(record) as { pid?: number }).pid;

const rebalances = async (port: number): Promise<number> =>
  sumMetric(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), 'weir_rebalances_total');

describe('static membership (librdkafka)', () => {
  it('a worker SIGKILLed and restarted at once resumes its own partitions; the other member sees no rebalance', async () => {
    const s = await scenarios.create('static', { partitions: PARTITIONS, env: { WEIR_TEST_RECORD_DELAY_MS: '1' } });
    const bPort = await freePort();
    const a = s.start([...FLAGS, '--group-instance-id', 'worker-a']);
    const b = s.start([...FLAGS, '--group-instance-id', 'worker-b', '--metrics-port', String(bPort)]);
    const [aPartitions, bPartitions] = await Promise.all([assignment(a), assignment(b)]);
    const input = steadyInput(fx.kafka, s.topics.source, { perSecond: 500 });
    expect((await s.outcomes((rs) => rs.length >= 200, 60_000)).complete).toBe(true);
    const bRebalances = await rebalances(bPort);
    const bAssigned = b.logs.filter((l) => l.msg === 'partitions assigned').length;

    expect(await a.stop('SIGKILL')).toBe('SIGKILL');
    const restarted = s.start([...FLAGS, '--group-instance-id', 'worker-a']);
    expect(await assignment(restarted)).toEqual(aPartitions);
    // The restarted member works on its partitions again: its own outputs arrive.
    expect((await s.outcomes((rs) => rs.some((r) => pidOf(r) === restarted.child.pid), 60_000)).complete).toBe(true);
    await input.stop();
    expect(await rebalances(bPort)).toBe(bRebalances);
    expect(b.logs.filter((l) => l.msg === 'partitions assigned')).toHaveLength(bAssigned);
    expect(await assignment(b)).toEqual(bPartitions);
    expect(await restarted.stop('SIGTERM')).toBe(0);
    expect(await b.stop('SIGTERM')).toBe(0);
  });

  it('refuses a second worker with a running worker’s group.instance.id (exit 2); the first keeps running', async () => {
    const s = await scenarios.create('static-dup', { partitions: PARTITIONS, env: { WEIR_TEST_RECORD_DELAY_MS: '1' } });
    // A session timeout of 9 s (heartbeats every 3 s): a worker fenced within 18 s of its first
    // join counts as the newcomer (InstanceConflictGuard's youngForMs: the smaller of two session
    // timeouts and three heartbeats + 10 s). The newcomer is fenced back after about two
    // heartbeats and the first's rejoin; the margin is for a machine loaded by the other test files.
    const flags = ['--client', 'librdkafka', '--session-timeout-ms', '9000', '--group-instance-id', 'worker-x'];
    const first = s.start(flags);
    await first.waitForLog((l) => l.msg === 'partitions assigned' && (l['partitions'] as string[]).length === PARTITIONS, 60_000);
    const joinedAt = Date.now();
    // The first has been in the group longer than that when the second starts.
    await waitFor(
      () => Date.now() - joinedAt > 20_000,
      30_000,
      () => 'clock',
    );
    const input = steadyInput(fx.kafka, s.topics.source, { perSecond: 300 });
    const second = s.start(flags);
    // Bounded, so that a newcomer that stays names its last lines (and the first's fences) in the failure.
    const code = await second.exitWithin(60_000).catch((error: Error) => {
      // Its last lines, fences and rejoins or not: a first worker that never saw the fence says what it did instead.
      const lines = first.logs.slice(-25).map((l) => JSON.stringify(l));
      throw new Error(`${error.message}\nthe first worker's last lines:\n${[...lines, ...first.otherOutput.slice(-10)].join('\n')}`);
    });
    expect(code).toBe(2);
    expect(second.otherOutput.join('\n')).toMatch(
      /another worker of the group runs with group\.instance\.id 'worker-x'.*\[WEIR_GROUP_INSTANCE_CONFLICT\]/,
    );
    // The first is still at work after the second left: it writes outputs of records sent later.
    const sentAfter = Date.now();
    expect((await s.outcomes((rs) => rs.some((r) => r.timestamp > sentAfter && pidOf(r) === first.child.pid), 60_000)).complete).toBe(true);
    await input.stop();
    expect(first.child.exitCode).toBeNull();
    expect(await first.stop('SIGTERM')).toBe(0);
    // Every wait above is bounded on its own, and names what it waited for.
  }, 240_000);
});
