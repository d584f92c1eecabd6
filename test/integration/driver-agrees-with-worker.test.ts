/**
 * The TopologyTestDriver agrees with the real worker: the same inputs with the same failure
 * plans go through the driver (in memory, virtual time) and through `weir run` on the broker,
 * and every record must end the same way in both — sink or DLQ, attempts, error class, output
 * partition, the DLQ record's origin and weir headers — and as the failure-plan model says.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraries, expectedOutcome, invariants, TopologyTestDriver, type FailurePlan, type PlannedValue } from 'weir/testing';
import { produce, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { planEnv, planTopology, type PlanTopologyOptions } from './fixtures/failure-plan-topology.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';

const FIXTURE = 'test/integration/fixtures/failure-plan-topology.ts';
const MAX_ATTEMPTS = 4;
const PARTITIONS = 2;

/** How one record ended. */
interface Ending {
  readonly outcome: 'success' | 'dead-letter';
  readonly attempts: number;
  readonly errorClass?: string;
  /** Where it was written and, for a dead letter, its origin and weir header names. */
  readonly detail?: string;
}

const weirHeaderNames = (headers: Readonly<Record<string, string>>): string =>
  Object.keys(headers)
    .filter((n) => n.startsWith('weir.'))
    .sort()
    .join(',');

/** The inputs: every plan shape that matters, then 30 more from fast-check with a fixed seed. */
function plannedInputs(): Array<{ key: string; value: PlannedValue }> {
  const fixed: FailurePlan[] = [
    [],
    ['retriable'],
    ['retriable', 'retriable'],
    ['non-retriable'],
    ['retriable', 'non-retriable'],
    Array(MAX_ATTEMPTS).fill('retriable'),
    ['retriable', 'retriable', 'retriable', 'ok'],
  ];
  const sampled = fc.sample(arbitraries.failurePlan({ maxLength: MAX_ATTEMPTS + 1 }), { seed: 20_240_101, numRuns: 30 });
  return [...fixed, ...sampled].map((plan, i) => ({ key: `k${i % 5}`, value: { id: `r${i}`, plan } }));
}

const fx = useIntegrationFixture('weir-it-driver');

/** Endings in the driver, by record id. */
async function throughDriver(
  options: PlanTopologyOptions,
  applicationId: string,
  inputs: ReturnType<typeof plannedInputs>,
): Promise<Map<string, Ending>> {
  const driver = new TopologyTestDriver(planTopology(options), { partitions: PARTITIONS, overrides: { applicationId } });
  await driver.pipeInput(options.source, inputs);
  await driver.drain();
  invariants.all(driver, { planOf: (input) => (input.value as PlannedValue).plan });
  const endings = new Map<string, Ending>();
  for (const out of driver.readOutput<string, { id: string; attempt: number }>(options.sink)) {
    endings.set(out.value.id, { outcome: 'success', attempts: out.value.attempt, detail: `${out.topic}/${out.partition} key ${out.key}` });
  }
  for (const dead of driver.deadLetters<string, PlannedValue>()) {
    const origin = `${dead.original.topic}/${dead.original.partition}@${dead.original.offset}`;
    endings.set(dead.value.id, {
      outcome: 'dead-letter',
      attempts: dead.attempts,
      errorClass: dead.errorClass,
      detail: `${dead.topic}/${dead.partition} key ${String(dead.key)} from ${origin} [${weirHeaderNames(dead.headers)}]`,
    });
  }
  return endings;
}

/** Endings on a real worker, by record id (read_committed), and how many records each id has. */
async function throughWorker(
  options: PlanTopologyOptions,
  applicationId: string,
  inputs: ReturnType<typeof plannedInputs>,
): Promise<{ endings: Map<string, Ending>; copies: Map<string, number> }> {
  await fx.createTopics([{ topic: options.source, partitions: PARTITIONS }]);
  await produce(
    fx.kafka,
    options.source,
    inputs.map((i) => ({ key: i.key, value: JSON.stringify(i.value) })),
  );
  const worker = fx.startWorker(FIXTURE, { args: ['--application-id', applicationId], env: planEnv(options) });
  const idOf = (r: ReadRecord): string => (JSON.parse(r.value!.toString()) as { id: string }).id;
  const { records, complete } = await readTopics(fx.kafka, [options.sink, options.dlq], {
    until: (rs) => new Set(rs.map(idOf)).size >= inputs.length,
    timeoutMs: 90_000,
  });
  expect(await worker.stop('SIGTERM')).toBe(0);
  expect(complete, `the worker decided ${new Set(records.map(idOf)).size} of ${inputs.length} records`).toBe(true);
  const endings = new Map<string, Ending>();
  const copies = new Map<string, number>();
  for (const r of records) {
    const id = idOf(r);
    copies.set(id, (copies.get(id) ?? 0) + 1);
    if (r.topic === options.sink) {
      endings.set(id, {
        outcome: 'success',
        attempts: (JSON.parse(r.value!.toString()) as { attempt: number }).attempt,
        detail: `${r.topic}/${r.partition} key ${r.key}`,
      });
    } else {
      const h = r.headers;
      const origin = `${h['weir.original.topic']}/${h['weir.original.partition']}@${h['weir.original.offset']}`;
      endings.set(id, {
        outcome: 'dead-letter',
        attempts: Number(h['weir.attempts']),
        errorClass: h['weir.error.class']!,
        detail: `${r.topic}/${r.partition} key ${r.key} from ${origin} [${weirHeaderNames(h)}]`,
      });
    }
  }
  return { endings, copies };
}

describe(onClient('the TopologyTestDriver agrees with the worker'), () => {
  for (const [mode, guarantee] of [
    ['blocking', 'at_least_once'],
    ['topics', 'exactly_once'],
  ] as const) {
    it(`record by record, in ${mode} mode under ${guarantee}`, async () => {
      const run = `weir-it-plan-${mode}-${randomUUID().slice(0, 8)}`;
      const options: PlanTopologyOptions = {
        source: `${run}.in`,
        sink: `${run}.out`,
        dlq: `${run}.dlq`,
        mode,
        guarantee,
        maxAttempts: MAX_ATTEMPTS,
        backoffMs: 20,
      };
      const inputs = plannedInputs();
      const inDriver = await throughDriver(options, run, inputs);
      const onWorker = await throughWorker(options, run, inputs);
      const show = (e: Ending | undefined): string =>
        e === undefined ? 'nothing' : `${e.outcome} after ${e.attempts} attempt(s)${e.errorClass ? ` (${e.errorClass})` : ''}`;
      const mismatches: string[] = [];
      for (const { value } of inputs) {
        const model: Ending = expectedOutcome(value.plan, { mode, maxAttempts: MAX_ATTEMPTS });
        const [d, w] = [inDriver.get(value.id), onWorker.endings.get(value.id)];
        if (show(d) !== show(model) || show(w) !== show(model) || d?.detail !== w?.detail || onWorker.copies.get(value.id) !== 1) {
          mismatches.push(
            `${value.id} plan [${value.plan.join(', ')}]: model ${show(model)}; driver ${show(d)} at ${d?.detail}; worker ${show(w)} at ${w?.detail} (${onWorker.copies.get(value.id) ?? 0} record(s))`,
          );
        }
      }
      expect(mismatches).toEqual([]);
      const outcomes = [...inDriver.values()].map((e) => e.outcome);
      console.log(
        `[driver-vs-worker ${mode}/${guarantee}] ${inputs.length} records: ${outcomes.filter((o) => o === 'success').length} succeeded, ${outcomes.filter((o) => o === 'dead-letter').length} dead-lettered — driver and worker agree`,
      );
    });
  }
});
