/**
 * A multicast success branch (`success: { all: [sink(a), sink(b)] }`) under exactly_once on the
 * real broker, on each client: every output lands in both sinks exactly once (read_committed) —
 * the copies of a record are in the transaction of its input offset, so a worker SIGKILLed in the
 * middle of the run leaves neither a copy in one sink only nor a duplicate once a new worker has
 * taken over; outputs of failed attempts reach neither sink.
 */
import { describe, expect, it } from 'vitest';
import { readToEnd, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { SCRIPTED_TOPOLOGY, ScriptedScenarios, scriptOf, type Script } from './support/scripted-scenario.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-fan-out');
const scenarios = new ScriptedScenarios(fx);
const ARGS = ['--guarantee', 'exactly_once', '--session-timeout-ms', '6000', '--heartbeat-interval-ms', '1000'];

/** How many times each id occurs. */
function tally(records: readonly ReadRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(scriptOf(r).id, (counts.get(scriptOf(r).id) ?? 0) + 1);
  return counts;
}

describe(onClient('multicast success branch (exactly_once)'), () => {
  it('writes every output to both sinks exactly once, across a SIGKILL; nothing from failed attempts; dead letters in neither sink', async () => {
    const s = await scenarios.create('weir-it-fanout');
    const also = `${s.id}.out2`;
    const scripts: Script[] = Array.from({ length: 400 }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq % 7 === 0 ? { failAttempts: 1, forwardThenFail: true } : {}),
      ...(seq % 50 === 4 ? { kind: 'fatal' as const, forwardThenFail: true } : {}),
    }));
    await s.send(scripts);
    const start = (env: Record<string, string> = {}) =>
      fx.startWorker(SCRIPTED_TOPOLOGY, {
        args: ['--application-id', s.id, ...ARGS],
        env: {
          WEIR_TEST_SOURCE: s.topics.source,
          WEIR_TEST_SINK: s.topics.sink,
          WEIR_TEST_DLQ: s.topics.dlq,
          WEIR_TEST_SINK_ALSO: also,
          ...env,
        },
      });
    const first = start({ WEIR_TEST_RECORD_DELAY_MS: '20' });
    // Kill it once some transactions have committed, in the middle of the run.
    const early = await readTopics(fx.kafka, [also], { until: (rs) => rs.length >= 50, timeoutMs: 60_000 });
    expect(early.complete).toBe(true);
    await first.stop('SIGKILL');
    const second = start();
    expect(await waitForGroupCaughtUp(fx.kafka, s.id, [s.topics.source], 90_000)).toBe(true);
    expect(await second.stop('SIGTERM')).toBe(0);

    const records = await readToEnd(fx.kafka, [s.topics.sink, also, s.topics.dlq], { timeoutMs: 60_000 });
    const inTopic = (topic: string) => records.filter((r) => r.topic === topic);
    const dead = scripts.filter((x) => x.kind === 'fatal').map((x) => x.id);
    const succeeded = scripts.filter((x) => x.kind === undefined).map((x) => x.id);
    for (const topic of [s.topics.sink, also]) {
      const counts = tally(inTopic(topic));
      expect([...counts.keys()].sort()).toEqual([...succeeded].sort());
      expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
      expect(inTopic(topic).filter((r) => (scriptOf(r) as { partial?: boolean }).partial)).toEqual([]);
    }
    expect(
      inTopic(s.topics.dlq)
        .map((r) => scriptOf(r).id)
        .sort(),
    ).toEqual([...dead].sort());
    // The same output in both: the copy in one sink is byte for byte the copy in the other.
    // The kill was in the middle of the run: both workers wrote outputs.
    const pids = new Set(inTopic(also).map((r) => (scriptOf(r) as { pid?: number }).pid));
    expect([...pids].sort()).toEqual([first.child.pid, second.child.pid].sort());
    const byId = new Map(inTopic(s.topics.sink).map((r) => [scriptOf(r).id, r.value!.toString()]));
    expect(inTopic(also).filter((r) => byId.get(scriptOf(r).id) !== r.value!.toString())).toEqual([]);
  });
});
