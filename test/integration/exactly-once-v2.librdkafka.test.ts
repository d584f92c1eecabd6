/**
 * exactly_once_v2 on librdkafka (KIP-447: one transactional producer per worker, its offsets
 * fenced by the consumer's group generation), on the real broker: two workers on 24 partitions,
 * SIGKILLed again and again while they work. A read_committed read of sink and DLQ holds every
 * input exactly once, and the broker's transaction coordinator knows one transactional id per
 * worker process — none per partition.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { listTransactions } from '../../scripts/lib/list-transactions.js';
import { readToEnd } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { WorkerProcess } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';

const fx = useIntegrationFixture('weir-it-eos-v2');
const scenarios = new ScriptedScenarios(fx);

const PARTITIONS = 24;
const RECORDS = 6_000;
const KILLS = 4;
const FLAGS = ['--client', 'librdkafka', '--session-timeout-ms', '6000'];

/** The group's committed input offsets, summed. */
async function committed(groupId: string, topic: string): Promise<number> {
  const [offsets] = await fx.admin.fetchOffsets({ groupId, topics: [topic] });
  return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
}

describe('exactly_once_v2 (librdkafka)', () => {
  it('2 workers, 24 partitions, repeated SIGKILLs: every input exactly once; one transactional id per worker', async () => {
    const s = await scenarios.create('eos-v2', {
      partitions: PARTITIONS,
      env: { WEIR_TEST_GUARANTEE: 'exactly_once', WEIR_TEST_RECORD_DELAY_MS: '2', WEIR_TEST_BACKOFF_MS: '5' },
    });
    const scripts: Script[] = Array.from({ length: RECORDS }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq % 97 === 0 ? { kind: 'poison' as const } : seq % 13 === 0 ? { failAttempts: 1, forwardThenFail: true } : {}),
    }));
    await s.send(scripts, 240);
    const workers: WorkerProcess[] = [s.start(FLAGS), s.start(FLAGS)];
    const pids = new Set(workers.map((w) => w.child.pid!));
    for (let kill = 0; kill < KILLS; kill++) {
      const before = await committed(s.id, s.topics.source);
      // Each kill lands on live work: the group committed since the previous one, and input is left.
      await waitFor(
        async () => (await committed(s.id, s.topics.source)) > before + 200,
        90_000,
        () => `no progress before kill ${kill + 1}`,
      );
      expect(await committed(s.id, s.topics.source)).toBeLessThan(RECORDS);
      const victim = kill % 2;
      expect(await workers[victim]!.stop('SIGKILL')).toBe('SIGKILL');
      workers[victim] = s.start(FLAGS);
      pids.add(workers[victim]!.child.pid!);
    }
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 180_000)).toBe(true);
    for (const worker of workers) expect(await worker.stop('SIGTERM')).toBe(0);

    const outcomes = await readToEnd(fx.kafka, [s.topics.sink, s.topics.dlq], { timeoutMs: 60_000 });
    const ids = outcomes.map((r) => scriptOf(r).id);
    expect(outcomes.filter((r) => (scriptOf(r) as { partial?: boolean }).partial === true)).toEqual([]);
    expect(new Set(ids).size).toBe(RECORDS);
    expect(ids).toHaveLength(RECORDS);
    expect(outcomes.filter((r) => r.topic === s.topics.dlq)).toHaveLength(scripts.filter((x) => x.kind === 'poison').length);

    // One transactional id per worker process (its host and pid), none per partition.
    const ours = (await listTransactions(fx.brokers)).filter((t) => t.transactionalId.startsWith(`${s.id}-`));
    const names = ours.map((t) => t.transactionalId.slice(s.id.length + 1));
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(names.length).toBeLessThanOrEqual(pids.size);
    for (const name of names) expect(name).toMatch(new RegExp(`^${hostname().replace(/[.]/g, '\\.')}-(${[...pids].join('|')})$`));
    expect(names.filter((name) => name.startsWith(`${s.topics.source}-`))).toEqual([]);
  });
});
