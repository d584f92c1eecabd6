/**
 * `weir status <topology>` on the real broker: the group's state and members (with the member id
 * the worker's `/readyz` reports), committed and end offsets and lag of each source partition
 * against offsets the test knows, dead letters by error class and processor; a group that does
 * not exist (exit 0, said plainly); an unknown `--format` (exit 2); the records a
 * `retry.order: 'key'` source holds back, per partition, and — once the topology drops order
 * 'key' — the changelog that no processor restores, in `weir status` and in the worker's log.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/lib/free-port.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { runWeir } from '../../scripts/lib/worker-process.js';
import type { TopologyStatus } from '../../src/cli/topology-status.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { SCRIPTED_TOPOLOGY, ScriptedScenarios, scriptOf, type Scenario, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-status');
const scenarios = new ScriptedScenarios(fx);

const status = (sc: Scenario, format: string, env: Readonly<Record<string, string>> = {}) =>
  runWeir(['status', SCRIPTED_TOPOLOGY, '--application-id', sc.id, '--format', format, '--brokers', fx.brokers], {
    env: {
      WEIR_TEST_SOURCE: sc.topics.source,
      WEIR_TEST_SINK: sc.topics.sink,
      WEIR_TEST_DLQ: sc.topics.dlq,
      WEIR_TEST_MAX_ATTEMPTS: '2',
      ...env,
    },
    timeoutMs: 60_000,
  });

/** End offsets of `topic` now, by partition. */
async function ends(topic: string): Promise<Map<number, number>> {
  return new Map((await fx.admin.fetchTopicOffsets(topic)).map((o) => [o.partition, Number(o.high)]));
}

describe(onClient('weir status'), () => {
  it('reports the group, its member, offsets and lag per partition, and dead letters by error class and processor', async () => {
    const sc = await scenarios.create('weir-it-status', { partitions: 3, env: { WEIR_TEST_MAX_ATTEMPTS: '2' } });
    const port = await freePort();
    const worker = sc.start(['--metrics-port', String(port)]);
    const scripts: Script[] = [
      ...Array.from({ length: 9 }, (_, seq) => ({ id: `ok${seq}`, seq })),
      { id: 'bad1', seq: 9, kind: 'fatal' },
      { id: 'bad2', seq: 10, kind: 'fatal' },
      { id: 'poison', seq: 11, kind: 'poison' },
    ];
    await sc.send(scripts, 12);
    expect((await sc.outcomes((rs) => rs.length >= 12)).complete).toBe(true);
    expect(await waitForGroupCaughtUp(fx.kafka, sc.id, [sc.topics.source], 60_000)).toBe(true);
    const ready = await waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        const body = res?.status === 200 ? ((await res.json()) as { memberId: string }) : undefined;
        return body;
      },
      30_000,
      () => 'worker not ready',
    );

    const running = await status(sc, 'json');
    expect(running.code).toBe(0);
    const report = JSON.parse(running.stdout) as TopologyStatus;
    const known = await ends(sc.topics.source);
    expect([...known.values()].reduce((a, b) => a + b, 0)).toBe(12);
    expect(report).toMatchObject({ applicationId: sc.id, groupExists: true, state: 'Stable', totalLag: 0 });
    expect(report.members).toHaveLength(1);
    // One member id everywhere: status, /readyz, the worker's own log lines, and its client id.
    expect(report.members[0]!.memberId).toBe(ready.memberId);
    expect(worker.logs.some((l) => l.msg === 'partitions assigned' && l['memberId'] === ready.memberId)).toBe(true);
    expect(report.members[0]!.clientId).toBe(`weir-${sc.id}-${hostname()}-${worker.child.pid}`);
    expect(report.members[0]!.partitions).toEqual([0, 1, 2].map((p) => `${sc.topics.source}-${p}`));
    expect(report.partitions).toEqual(
      [0, 1, 2].map((partition) => ({
        topic: sc.topics.source,
        kind: 'source',
        partition,
        committed: known.get(partition),
        end: known.get(partition),
        lag: 0,
        memberId: ready.memberId,
        parked: null,
      })),
    );
    expect(report).toMatchObject({ totalParked: null, orphanChangelogs: [] });
    expect(report.deadLetters).toEqual([
      {
        topic: sc.topics.dlq,
        exists: true,
        total: 3,
        counts: [
          { errorClass: 'NonRetriableError', processor: 'scripted', records: 2 },
          { errorClass: 'ScriptedFailure', processor: 'scripted', records: 1 },
        ],
      },
    ]);
    const table = await status(sc, 'table');
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`consumer group ${sc.id}: Stable, 1 member(s), total lag 0\n`);
    expect(table.stdout).not.toContain('PARKED');
    expect(table.stdout).toMatch(/MEMBER-ID\s+CLIENT-ID\s+HOST\s+PARTITIONS/);
    expect(table.stdout).toContain(ready.memberId);
    expect(table.stdout).toMatch(/NonRetriableError\s+scripted\s+2/);

    // Stopped, with 5 records more: no members, the same committed offsets, lag 5.
    expect(await worker.stop('SIGTERM')).toBe(0);
    await sc.send(
      Array.from({ length: 5 }, (_, i) => ({ id: `late${i}`, seq: 12 + i })),
      12,
    );
    const stopped = JSON.parse((await status(sc, 'json')).stdout) as TopologyStatus;
    const now = await ends(sc.topics.source);
    expect(stopped).toMatchObject({ groupExists: true, state: 'Empty', members: [], totalLag: 5 });
    for (const p of stopped.partitions) {
      expect(p.committed).toBe(known.get(p.partition));
      expect(p.end).toBe(now.get(p.partition));
      expect(p.lag).toBe(now.get(p.partition)! - known.get(p.partition)!);
      expect(p.memberId).toBeNull();
    }
  });

  it("shows the records a key-ordered source holds back, and the changelog no processor restores once order 'key' is gone", async () => {
    const ordered = {
      WEIR_TEST_RETRY_MODE: 'topics',
      WEIR_TEST_RETRY_ORDER: 'key',
      WEIR_TEST_MAX_ATTEMPTS: '3',
      // The failed record stays parked for the whole test.
      WEIR_TEST_BACKOFF_MS: '600000',
      WEIR_TEST_BACKOFF_MAX_MS: '600000',
    };
    const sc = await scenarios.create('weir-it-status-parked', { partitions: 2, env: ordered, args: ['--commit-interval-ms', '200'] });
    const changelog = `${sc.id}.scripted.parked`;
    // Key k0 (even seq): its first record fails and parks, its three later ones wait behind it.
    // Key k1 (odd seq) flows to the sink.
    const scripts: Script[] = Array.from({ length: 8 }, (_, seq) => ({ id: `r${seq}`, seq, ...(seq === 0 ? { failAttempts: 2 } : {}) }));
    await sc.send(scripts, 2);
    const worker = sc.start();
    const { records, complete } = await sc.outcomes((rs) => rs.length >= 4);
    expect(complete).toBe(true);
    expect(records.map((r) => scriptOf(r).seq).sort()).toEqual([1, 3, 5, 7]);
    // The offset moves past the parked records once they are in the changelog.
    expect(await waitForGroupCaughtUp(fx.kafka, sc.id, [sc.topics.source], 30_000)).toBe(true);
    expect(await worker.stop('SIGTERM')).toBe(0);

    const report = JSON.parse((await status(sc, 'json', ordered)).stdout) as TopologyStatus;
    const parked = report.partitions.map((p) => p.parked);
    expect(parked.map((p) => (p !== null && 'records' in p ? p.records : -1)).sort()).toEqual([0, 4]);
    expect(parked.map((p) => (p !== null && 'keys' in p ? p.keys : -1)).sort()).toEqual([0, 1]);
    expect(report).toMatchObject({ totalLag: 0, totalParked: 4, orphanChangelogs: [] });
    const table = await status(sc, 'table', ordered);
    expect(table.stdout).toContain(`consumer group ${sc.id}: Empty, 0 member(s), total lag 0, parked 4\n`);
    expect(table.stdout).toMatch(/COMMITTED\s+END\s+LAG\s+PARKED\s+MEMBER-ID/);

    // The topology drops order 'key': nobody restores the four records. Status and a worker say so.
    const unordered = { ...ordered, WEIR_TEST_RETRY_ORDER: 'none' };
    const orphaned = JSON.parse((await status(sc, 'json', unordered)).stdout) as TopologyStatus;
    expect(orphaned).toMatchObject({
      totalParked: null,
      orphanChangelogs: [{ topic: changelog, processor: 'scripted', records: 4, keys: 1, unreadable: 0 }],
    });
    const orphanTable = (await status(sc, 'table', unordered)).stdout;
    expect(orphanTable).toContain(`total lag 0, 4 parked record(s) no processor restores\n`);
    expect(orphanTable).toContain(`Parked records no processor restores: ${changelog} holds 4 record(s) of 1 key(s)`);
    const later = sc.start([], unordered);
    const warned = await later.waitForLog((l) => l['changelog'] === changelog && l.level === 40, 60_000);
    expect(warned).toMatchObject({ records: 4, keys: 1 });
    expect(warned.msg).toContain(`changelog topic '${changelog}' holds 4 parked record(s) of 1 key(s)`);
    expect(await later.stop('SIGTERM')).toBe(0);
  });

  it('says plainly that a group does not exist, and exits 0', async () => {
    const sc = await scenarios.create('weir-it-status-none', { partitions: 1 });
    const table = await status(sc, 'table');
    expect(table.code).toBe(0);
    expect(table.stdout).toBe(
      `consumer group '${sc.id}' does not exist: no worker of this topology has joined it yet (or its offsets expired)\n`,
    );
    const json = await status(sc, 'json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ applicationId: sc.id, groupExists: false, members: [] });
    expect(json.stderr).toContain('does not exist');
  });

  it('exits 2 naming --format for an unknown format', async () => {
    const sc = await scenarios.create('weir-it-status-format', { partitions: 1 });
    const result = await status(sc, 'yaml');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`invalid config '--format': must be one of table, json (got "yaml")`);
  });
});
