/**
 * A three-step chain (fixtures/chain-topology.ts: parse → enrich → write in one task) on the real
 * broker, on each client, under both guarantees and both retry modes, with failures injected at
 * each step: every record ends in the sink or in the DLQ of the step that gave up on it, with the
 * step's input as its value; a failed step is retried at that step with the previous step's output
 * — in place, or through the step's own retry tier (copies carrying the intermediate value and
 * `weir.step`) — and no step that succeeded for a record ever runs again for it (the fixture
 * writes every step call to a side-channel file).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { produce, readToEnd, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';
import type { ChainScript, ChainStepName } from './fixtures/chain-topology.js';

const fx = useIntegrationFixture('weir-it-chains');
const RECORDS = 60;
/** The fixture's steps, in chain order. */
const CHAIN_STEPS: readonly ChainStepName[] = ['parse', 'enrich', 'write'];

/** Record i's script: failures at each step in turn, a poison and a fatal record per step. */
function scriptOf(i: number): ChainScript {
  const id = `r${i}`;
  switch (i % 12) {
    case 1:
      return { id, fail: { parse: 1 } };
    case 2:
      return { id, fail: { enrich: 2 } };
    case 3:
      return { id, fail: { write: 1 } };
    case 4:
      return { id, fail: { parse: 1, enrich: 1, write: 1 } };
    case 5:
      return { id, fatal: 'parse' };
    case 7:
      return { id, fail: { parse: 1 }, fatal: 'enrich' };
    case 9:
      return { id, fail: { enrich: 3 } }; // poison at enrich: dead-lettered after its 3 attempts
    case 11:
      return { id, fatal: 'write' };
    default:
      return { id };
  }
}

/** Where a script ends: the sink, or the DLQ of the step that gives up, and how often each step runs. */
function expected(script: ChainScript): { deadAt: ChainStepName | undefined; calls: Partial<Record<ChainStepName, number>> } {
  const calls: Partial<Record<ChainStepName, number>> = {};
  for (const step of CHAIN_STEPS) {
    const fails = script.fail?.[step] ?? 0;
    if (script.fatal === step) {
      calls[step] = fails + 1;
      return { deadAt: step, calls };
    }
    if (fails >= 3) {
      calls[step] = 3;
      return { deadAt: step, calls };
    }
    calls[step] = fails + 1;
  }
  return { deadAt: undefined, calls };
}

const parse = (r: ReadRecord) => JSON.parse(r.value!.toString()) as ChainScript;

describe(onClient('a three-step chain in one task'), () => {
  for (const [guarantee, mode] of [
    ['at_least_once', 'blocking'],
    ['exactly_once', 'topics'],
    ['at_least_once', 'topics'],
    ['exactly_once', 'blocking'],
  ] as const) {
    it(`${guarantee}, ${mode}: outputs, retries and dead letters as documented; no step that succeeded runs again`, async () => {
      const id = `weir-it-chain-${guarantee === 'exactly_once' ? 'eos' : 'alos'}-${mode}-${randomUUID().slice(0, 8)}`;
      const source = `${id}.in`;
      const sinkTopic = `${id}.out`;
      const dlqs = Object.fromEntries(CHAIN_STEPS.map((s) => [s, `${id}.${s}.dlq`])) as Record<ChainStepName, string>;
      const callsFile = join(mkdtempSync(join(tmpdir(), 'weir-chain-')), 'calls.log');
      await fx.createTopics([{ topic: source, partitions: 3 }]);
      const scripts = Array.from({ length: RECORDS }, (_, i) => scriptOf(i));
      const worker = fx.startWorker('test/integration/fixtures/chain-topology.ts', {
        args: ['--application-id', id, '--guarantee', guarantee],
        env: { WEIR_CHAIN_SOURCE: source, WEIR_CHAIN_SINK: sinkTopic, WEIR_CHAIN_CALLS: callsFile, WEIR_CHAIN_MODE: mode },
      });
      // Input only once every task runs: a rebalance re-runs the batch in hand from the source,
      // steps included (docs/retry-and-dlq.md, "Chains"), which is not what this test is about.
      const tasks = 3 * (1 + (mode === 'topics' ? CHAIN_STEPS.length : 0));
      await worker.waitForLog(() => worker.logs.filter((l) => l.msg === 'task started').length >= tasks, 60_000);
      await produce(
        fx.kafka,
        source,
        scripts.map((s) => ({ key: s.id, value: JSON.stringify(s) })),
      );
      const done = await readTopics(fx.kafka, [sinkTopic, ...Object.values(dlqs)], {
        until: (rs) => new Set(rs.map((r) => parse(r).id)).size >= RECORDS,
        timeoutMs: 90_000,
      });
      expect(done.complete).toBe(true);
      expect(await worker.stop('SIGTERM')).toBe(0);

      const tiers = mode === 'topics' ? CHAIN_STEPS.map((s) => `${id}.${s}.retry.0`) : [];
      const records = await readToEnd(fx.kafka, [sinkTopic, ...Object.values(dlqs), ...tiers], { timeoutMs: 60_000 });
      const inTopic = (topic: string) => records.filter((r) => r.topic === topic);
      for (const script of scripts) {
        const { deadAt, calls } = expected(script);
        const out = inTopic(sinkTopic).filter((r) => parse(r).id === script.id);
        const dead = Object.values(dlqs).flatMap((t) => inTopic(t).filter((r) => parse(r).id === script.id));
        if (deadAt === undefined) {
          expect(dead, script.id).toEqual([]);
          expect(out, script.id).toHaveLength(1);
          // Each step's attempt that succeeded: one retry at the failing step, the steps before it kept.
          expect(parse(out[0]!).trail, script.id).toEqual(CHAIN_STEPS.map((s) => ({ [s]: (script.fail?.[s] ?? 0) + 1 })));
        } else {
          expect(out, script.id).toEqual([]);
          expect(
            dead.map((r) => r.topic),
            script.id,
          ).toEqual([dlqs[deadAt]]);
          const letter = dead[0]!;
          const header = (name: string) => letter.headers[name]?.toString();
          expect(header('weir.processor'), script.id).toBe(deadAt);
          expect(header('weir.attempts'), script.id).toBe(String(calls[deadAt]));
          expect(header('weir.original.topic'), script.id).toBe(source);
          expect(header('weir.step'), script.id).toBe(deadAt === 'parse' ? undefined : deadAt);
          // Its value is the step's input: the output of the steps before it.
          const before = CHAIN_STEPS.slice(0, CHAIN_STEPS.indexOf(deadAt));
          expect(parse(letter).trail ?? [], script.id).toEqual(before.map((s) => ({ [s]: (script.fail?.[s] ?? 0) + 1 })));
        }
      }
      // The side channel: every step ran exactly as often as its failures ask — a step that
      // succeeded for a record never ran again for it, whatever failed after it.
      const counted = new Map<string, number>();
      for (const line of readFileSync(callsFile, 'utf8').trim().split('\n')) {
        const [rid, step] = line.split(' ');
        const key = `${rid} ${step}`;
        counted.set(key, (counted.get(key) ?? 0) + 1);
      }
      const wanted = new Map<string, number>();
      for (const s of scripts) for (const [step, n] of Object.entries(expected(s).calls)) wanted.set(`${s.id} ${step}`, n);
      const keys = [...new Set([...counted.keys(), ...wanted.keys()])].sort();
      const mismatches = keys
        .filter((k) => counted.get(k) !== wanted.get(k))
        .map((k) => `${k}: ${counted.get(k)} calls, expected ${wanted.get(k)}`);
      expect(
        mismatches,
        worker.logs
          .filter((l) => (l.level as number) >= 40)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ).toEqual([]);
      if (mode === 'topics') {
        // Each step retried through its own tier; a later step's copies carry the step's input and name it.
        const enrichCopies = inTopic(`${id}.enrich.retry.0`);
        expect(new Set(enrichCopies.map((r) => parse(r).id))).toEqual(
          new Set(scripts.filter((s) => (s.fail?.enrich ?? 0) > 0).map((s) => s.id)),
        );
        for (const copy of enrichCopies) {
          expect(copy.headers['weir.step']?.toString()).toBe('enrich');
          expect(parse(copy).trail).toEqual([{ parse: (parse(copy).fail?.parse ?? 0) + 1 }]);
        }
        expect(inTopic(`${id}.parse.retry.0`).every((r) => r.headers['weir.step'] === undefined)).toBe(true);
      }
    });
  }
});
