/**
 * `weir run` under exactly_once on the real broker: the `--guarantee` flag, transactional
 * outputs (sink and DLQ) with nothing left from failed attempts, read_committed input, and
 * zombie fencing — by a second producer with the task's (kafkajs) or the member's (librdkafka)
 * transactional id, and by a second worker taking over from a frozen (SIGSTOP) one.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { readToEnd, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { WorkerLogLine, WorkerProcess } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { ScriptedScenarios, type Script } from './support/scripted-scenario.js';
import { CLIENT_FEATURES } from '../../src/kafka/kafka-client.js';
import { CLIENT, onClient } from './support/client-under-test.js';

/** KIP-447: one transactional producer per member (librdkafka), else one per task (kafkajs). */
const PER_MEMBER = CLIENT_FEATURES[CLIENT].groupMetadataInTransactions;

const fx = useIntegrationFixture('weir-it-eos');
const scenarios = new ScriptedScenarios(fx);

/** An exactly_once scenario (by flag), 3 source partitions, with a `finish` that reads every outcome. */
async function scenario(name: string, env: Record<string, string> = {}) {
  const s = await scenarios.create(`weir-it-${name}`, {
    env,
    args: [
      '--guarantee',
      'exactly_once',
      '--session-timeout-ms',
      '6000',
      '--heartbeat-interval-ms',
      '1000',
      '--transaction-timeout-ms',
      '10000',
    ],
  });
  /** Waits until every input is consumed and committed, stops the workers, and reads sink and DLQ to the end. */
  const finish = async (running: readonly WorkerProcess[], timeoutMs = 90_000) => {
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], timeoutMs)).toBe(true);
    for (const w of running) expect(await w.stop('SIGTERM')).toBe(0);
    const records = await readToEnd(fx.kafka, [s.topics.sink, s.topics.dlq], { timeoutMs: 60_000 });
    return { sink: records.filter((r) => r.topic === s.topics.sink), dlq: records.filter((r) => r.topic === s.topics.dlq), all: records };
  };
  return { ...s, finish };
}

const parse = (r: ReadRecord) => JSON.parse(r.value!.toString()) as { id: string; partial?: boolean; pid?: number };

/** How many times each id occurs. */
function tally(records: readonly ReadRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(parse(r).id, (counts.get(parse(r).id) ?? 0) + 1);
  return counts;
}

function expectEachOnce(records: readonly ReadRecord[], ids: readonly string[]): void {
  const counts = tally(records);
  expect([...counts.keys()].sort()).toEqual([...ids].sort());
  expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
}

describe(onClient('weir run (exactly_once)'), () => {
  it('--guarantee exactly_once writes sink and DLQ in transactions, with nothing from failed attempts', async () => {
    const s = await scenario('eos-basic', { WEIR_TEST_MAX_ATTEMPTS: '3', WEIR_TEST_BACKOFF_MS: '10' });
    const scripts: Script[] = Array.from({ length: 300 }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq % 7 === 0 ? { failAttempts: 1, forwardThenFail: true } : {}),
      ...(seq % 50 === 3 ? { kind: 'poison' as const, forwardThenFail: true } : {}),
      ...(seq % 50 === 4 ? { kind: 'fatal' as const } : {}),
    }));
    await s.send(scripts);
    const worker = s.start(); // the topology file says nothing: at_least_once by default
    const started = await worker.waitForLog((l) => l.msg === 'worker started');
    expect(started['guarantee']).toBe('exactly_once');
    const { sink, dlq, all } = await s.finish([worker]);

    expectEachOnce(
      all,
      scripts.map((x) => x.id),
    );
    expect(dlq.map((r) => parse(r).id).sort()).toEqual(
      scripts
        .filter((x) => x.kind)
        .map((x) => x.id)
        .sort(),
    );
    expect(sink.filter((r) => parse(r).partial)).toEqual([]);
    // Nothing from failed attempts even for a read_uncommitted reader: weir sends an attempt's
    // outputs only when the attempt succeeds.
    const uncommitted = await readToEnd(fx.kafka, [s.topics.sink], { timeoutMs: 60_000, isolation: 'read_uncommitted' });
    expect(uncommitted.filter((r) => parse(r).partial)).toEqual([]);
    // Transactional writes leave commit markers between the records: offsets have gaps.
    const offsets = sink.filter((r) => r.partition === 0).map((r) => r.offset);
    expect(offsets.some((o, i) => i > 0 && o > offsets[i - 1]! + 1)).toBe(true);
  });

  it('reads its input read_committed: records of aborted transactions are never processed, and commits past them', async () => {
    const s = await scenario('eos-input');
    const producer = fx.kafka.producer({ transactionalId: `${s.id}-upstream`, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const batch = (tag: string) =>
      Array.from({ length: 20 }, (_, i) => ({ key: `${tag}${i}`, value: JSON.stringify({ id: `${tag}${i}`, seq: i }) }));
    const upstream = async (tag: string, commit: boolean) => {
      const txn = await producer.transaction();
      await txn.send({ topic: s.topics.source, acks: -1, messages: batch(tag) });
      await (commit ? txn.commit() : txn.abort());
    };
    await upstream('a', true);
    await upstream('x', false);
    await upstream('b', true);
    const worker = s.start();
    const expected = [...batch('a'), ...batch('b')].map((m) => m.key);
    const seen = await readTopics(fx.kafka, [s.topics.sink], { until: (rs) => tally(rs).size >= expected.length, timeoutMs: 60_000 });
    expect(seen.complete).toBe(true);
    // A transaction aborted after the worker caught up: kafkajs skips fetches holding only its
    // aborted records and marker; the committed offsets still reach the end of the log.
    await upstream('y', false);
    await producer.disconnect();
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 30_000)).toBe(true);
    expect(await worker.stop('SIGTERM')).toBe(0);
    expectEachOnce(await readToEnd(fx.kafka, [s.topics.sink, s.topics.dlq], { timeoutMs: 60_000 }), expected);
  });

  it(
    !PER_MEMBER
      ? 'closes a task fenced by a second producer with its transactional id, rebuilds it, and loses nothing'
      : "closes every task when a second producer takes the member's transactional id, rejoins, and loses nothing",
    async () => {
      const s = await scenario('eos-fence', { WEIR_TEST_RECORD_DELAY_MS: '5' });
      const scripts: Script[] = Array.from({ length: 600 }, (_, seq) => ({ id: `r${seq}`, seq }));
      await s.send(scripts);
      const worker = s.start();
      await worker.waitForLog((l) => l.msg === 'task started' && l['task'] === `${s.topics.source}-0`);
      const started = await worker.waitForLog((l) => l.msg === 'task started' && l['task'] === `${s.topics.source}-1`);
      // kafkajs: one transactional producer per task (`<application.id>-<topic>-<partition>`);
      // librdkafka (KIP-447): one per member (`<application.id>-<host>-<pid>`).
      const transactionalId = !PER_MEMBER ? `${s.id}-${s.topics.source}-0` : `${s.id}-${hostname()}-${String(started['pid'])}`;
      // A second instance of that producer: InitProducerId bumps the epoch and fences the worker's.
      const usurper = fx.kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
      await usurper.connect();
      await (await usurper.transaction()).abort();
      await usurper.disconnect();
      const fenced = (l: WorkerLogLine) =>
        !PER_MEMBER
          ? l.msg.startsWith('task fenced') && l['task'] === `${s.topics.source}-0`
          : l.msg.startsWith("the member's transactional producer was fenced");
      await worker.waitForLog(fenced, 30_000);
      const restarted = worker.logs.filter((l) => l.msg === 'task started' && l['task'] === `${s.topics.source}-0`).length;
      await worker.waitForLog(
        () => worker.logs.filter((l) => l.msg === 'task started' && l['task'] === `${s.topics.source}-0`).length > restarted,
        30_000,
      );
      const { all } = await s.finish([worker]);
      expectEachOnce(
        all,
        scripts.map((x) => x.id),
      );
    },
  );

  it('fences a frozen worker when a second worker takes its partitions; the zombie does not crash and writes nothing twice', async () => {
    const s = await scenario('eos-zombie', { WEIR_TEST_RECORD_DELAY_MS: '5' });
    const scripts: Script[] = Array.from({ length: 1500 }, (_, seq) => ({ id: `r${seq}`, seq }));
    await s.send(scripts);
    const a = s.start();
    await a.waitForLog((l) => l.msg === 'task started');
    await waitForSink(s.topics.sink, 100);
    a.child.kill('SIGSTOP'); // a zombie: alive, out of the group once its session times out
    const b = s.start();
    await b.waitForLog((l) => l.msg === 'partitions assigned' && (l['partitions'] as string[]).length === 3, 60_000);
    await b.waitForLog((l) => l.msg === 'task started', 30_000);
    await waitForSink(s.topics.sink, 400);
    a.child.kill('SIGCONT');
    // The zombie's next transaction (or its rejoin) tells it: its tasks are fenced or revoked.
    // On librdkafka (KIP-447) the fence can reach the member's shared producer first, which
    // closes every task: that line is the same fence, told by the member. librdkafka can also
    // learn on resume that its session expired before any request is fenced; it then reports
    // its partitions lost (KIP-429's onPartitionsLost) and closes their tasks without a commit.
    await a.waitForLog(
      (l) =>
        l.msg.startsWith('task fenced') ||
        l.msg.startsWith("the member's transactional producer was fenced") ||
        l.msg === 'group rebalancing: suspending tasks' ||
        l.msg === 'partitions lost: closing their tasks',
      30_000,
    );
    const { all } = await s.finish([a, b], 120_000);
    expectEachOnce(
      all,
      scripts.map((x) => x.id),
    );
    console.log(
      `[zombie] fenced tasks in the zombie: ${a.logs.filter((l) => l.msg.startsWith('task fenced')).length}, in the successor: ${b.logs.filter((l) => l.msg.startsWith('task fenced')).length}`,
    );
  });
});

async function sinkHas(topic: string, n: number): Promise<boolean> {
  const offsets = await fx.admin.fetchTopicOffsets(topic).catch(() => []);
  return offsets.reduce((sum, o) => sum + Number(o.high), 0) >= n;
}

async function waitForSink(topic: string, n: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    () => sinkHas(topic, n),
    timeoutMs,
    () => `${topic} did not reach ${n} records`,
  );
}
