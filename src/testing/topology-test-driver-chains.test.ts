import { describe, expect, it } from 'vitest';
import {
  sink,
  topology,
  WEIR_HEADERS,
  type ProcessingGuarantee,
  type ProcessorFn,
  type ProcessOptions,
  type RetryOptions,
} from '../index.js';
import { applyFailurePlan, type FailurePlan } from './failure-plan.js';
import { invariants } from './invariants.js';
import { TopologyTestDriver } from './topology-test-driver.js';

type Step = 'parse' | 'enrich' | 'write';

/** A record's value: its id and, per step, what each attempt of that step does. */
interface ChainValue {
  readonly id: string;
  readonly plans?: Partial<Record<Step, FailurePlan>>;
  readonly trail?: readonly string[];
  readonly drop?: boolean;
  readonly fanOut?: boolean;
}

/** A three-step chain whose steps follow each record's plans, count their calls per record and append to its trail. */
function chain(retry: RetryOptions, guarantee: ProcessingGuarantee = 'at_least_once') {
  const calls = new Map<string, number>();
  const step =
    (name: Step): ProcessorFn<any, any, any> =>
    (record, ctx) => {
      const value = record.value as ChainValue;
      const key = `${value.id}/${name}`;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      applyFailurePlan(value.plans?.[name], ctx.attempt, `${value.id} at ${name}`);
      if (name === 'enrich' && value.drop) return undefined;
      if (name === 'parse' && value.fanOut) {
        ctx.forward({ value: { ...value, trail: ['a'] } });
        ctx.forward({ value: { ...value, trail: ['b'] } });
        return undefined;
      }
      return { ...value, trail: [...(value.trail ?? []), `${name}@${ctx.attempt}`] };
    };
  const options = (name: Step): ProcessOptions => ({ retry, ...(name === 'write' ? {} : { dlq: sink(`${name}.dlq`) }) });
  const built = topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', { key: 'string', value: 'json' })
    .process('parse', step('parse'), options('parse'))
    .process('enrich', step('enrich'), options('enrich'))
    .process('write', step('write'), options('write'))
    .branch({ success: sink('out'), dlq: sink('write.dlq') });
  return { built, calls };
}

const blocking: RetryOptions = { maxAttempts: 3, backoff: { initialMs: 100, jitter: 'none' } };
const topics: RetryOptions = { mode: 'topics', maxAttempts: 3, backoff: { initialMs: 100, multiplier: 1, jitter: 'none' } };

const inputs: ChainValue[] = [
  { id: 'clean' },
  { id: 'p', plans: { parse: ['retriable'] } },
  { id: 'e', plans: { enrich: ['retriable', 'retriable'] } },
  { id: 'w', plans: { write: ['retriable'] } },
  { id: 'all', plans: { parse: ['retriable'], enrich: ['retriable'], write: ['retriable'] } },
  { id: 'dead-enrich', plans: { enrich: ['retriable', 'retriable', 'retriable'] } },
  { id: 'fatal-write', plans: { write: ['non-retriable'] } },
  { id: 'dropped', drop: true },
];

/** Each step's calls per record, as `id/step → count`. */
const expectedCalls: Record<string, number> = {
  'clean/parse': 1,
  'clean/enrich': 1,
  'clean/write': 1,
  'p/parse': 2,
  'p/enrich': 1,
  'p/write': 1,
  'e/parse': 1,
  'e/enrich': 3,
  'e/write': 1,
  'w/parse': 1,
  'w/enrich': 1,
  'w/write': 2,
  'all/parse': 2,
  'all/enrich': 2,
  'all/write': 2,
  'dead-enrich/parse': 1,
  'dead-enrich/enrich': 3,
  'fatal-write/parse': 1,
  'fatal-write/enrich': 1,
  'fatal-write/write': 1,
  'dropped/parse': 1,
  'dropped/enrich': 1,
};

async function run(retry: RetryOptions, guarantee: ProcessingGuarantee = 'at_least_once') {
  const { built, calls } = chain(retry, guarantee);
  const driver = new TopologyTestDriver(built);
  await driver.pipeInput(
    'in',
    inputs.map((value) => ({ key: value.id, value })),
  );
  await driver.drain();
  return { driver, calls };
}

describe('TopologyTestDriver: processor chains', () => {
  for (const [mode, retry] of [
    ['blocking', blocking],
    ['topics', topics],
  ] as const) {
    it(`${mode}: a record failing at a step is retried at that step with the previous step's output; no step that succeeded runs again`, async () => {
      const { driver, calls } = await run(retry);
      expect(Object.fromEntries([...calls].sort())).toEqual(Object.fromEntries(Object.entries(expectedCalls).sort()));
      const out = driver.readOutput('out');
      expect(out.map((o) => (o.value as ChainValue).id).sort()).toEqual(['all', 'clean', 'e', 'p', 'w']);
      const trail = (id: string) => (out.find((o) => (o.value as ChainValue).id === id)!.value as ChainValue).trail;
      expect(trail('all')).toEqual(['parse@2', 'enrich@2', 'write@2']);
      expect(trail('e')).toEqual(['parse@1', 'enrich@3', 'write@1']);
      // Each step dead-letters into its own DLQ, with the step's input and the step's name.
      const [deadEnrich] = driver.deadLetters({ processor: 'enrich' });
      expect(deadEnrich).toMatchObject({
        key: 'dead-enrich',
        processor: 'enrich',
        attempts: 3,
        errorClass: 'PlannedFailure',
        topic: 'enrich.dlq',
      });
      expect((deadEnrich!.value as ChainValue).trail).toEqual(['parse@1']);
      expect(deadEnrich!.headers[WEIR_HEADERS.step]).toBe('enrich');
      expect(deadEnrich!.original).toMatchObject({ topic: 'in', offset: 5 });
      const [fatal] = driver.deadLetters({ processor: 'write' });
      expect(fatal).toMatchObject({ key: 'fatal-write', attempts: 1, topic: 'write.dlq' });
      expect((fatal!.value as ChainValue).trail).toEqual(['parse@1', 'enrich@1']);
      expect(driver.deadLetters({ processor: 'parse' })).toEqual([]);
      invariants.all(driver);
    });
  }

  it('topics: each step has its own tiers; a retry copy carries the intermediate value and the step it resumes at', async () => {
    const { driver } = await run(topics);
    const copies = driver.readOutput('app.enrich.retry.0');
    expect(copies.map((c) => c.key).sort()).toEqual(['all', 'dead-enrich', 'dead-enrich', 'e', 'e']);
    const copy = copies.find((c) => c.key === 'e')!;
    expect(copy.value).toMatchObject({ id: 'e', trail: ['parse@1'] });
    expect(copy.headers).toMatchObject({
      [WEIR_HEADERS.step]: 'enrich',
      [WEIR_HEADERS.processor]: 'enrich',
      [WEIR_HEADERS.originalTopic]: 'in',
    });
    expect(driver.readOutput('app.parse.retry.0').map((c) => [c.key, c.headers[WEIR_HEADERS.step]])).toEqual([
      ['p', undefined],
      ['all', undefined],
    ]);
    expect(driver.readOutput('app.write.retry.0').map((c) => c.key)).toEqual(['w', 'all']);
  });

  it('exactly_once: outputs, retry copies, dead letters and offsets in one transaction; an aborted one leaves nothing', async () => {
    const { built, calls } = chain(topics, 'exactly_once');
    const driver = new TopologyTestDriver(built);
    driver.abortTransaction();
    driver.abortTransaction(3);
    await driver.pipeInput(
      'in',
      inputs.map((value) => ({ key: value.id, value })),
    );
    await driver.drain();
    expect(driver.pendingFaults).toBe(0);
    expect(
      driver
        .readOutput('out')
        .map((o) => o.key)
        .sort(),
    ).toEqual(['all', 'clean', 'e', 'p', 'w']);
    expect(
      driver
        .deadLetters()
        .map((d) => d.key)
        .sort(),
    ).toEqual(['dead-enrich', 'fatal-write']);
    // An aborted batch runs again: its steps are called again (their outputs were never visible).
    expect(calls.get('clean/parse')).toBeGreaterThan(1);
    invariants.exactlyOnce(driver);
    invariants.all(driver);
  });

  it('a dead letter of a later step, replayed to the source, resumes at that step (weir.step)', async () => {
    const { driver, calls } = await run(blocking);
    const [dead] = driver.deadLetters({ processor: 'enrich' });
    const replayed = Object.fromEntries(
      Object.entries(dead!.headers).filter(
        ([name]) => !name.startsWith('weir.') || name === WEIR_HEADERS.step || name.startsWith('weir.original.'),
      ),
    );
    await driver.pipeInput('in', {
      key: 'dead-enrich',
      value: { id: 'dead-enrich', trail: ['parse@1'] },
      headers: { ...replayed, [WEIR_HEADERS.replayCount]: '1' },
    });
    await driver.drain();
    expect(calls.get('dead-enrich/parse')).toBe(1);
    expect(calls.get('dead-enrich/enrich')).toBe(4);
    const out = driver.readOutput('out').find((o) => o.key === 'dead-enrich');
    expect((out?.value as ChainValue).trail).toEqual(['parse@1', 'enrich@1', 'write@1']);
  });

  it("a replayed dead letter whose weir.step names no step (renamed since) goes to the first step's DLQ, run by no step", async () => {
    const { built, calls } = chain(blocking);
    const driver = new TopologyTestDriver(built);
    await driver.pipeInput('in', { key: 'gone', value: { id: 'gone', trail: ['parse@1'] }, headers: { [WEIR_HEADERS.step]: 'write-v1' } });
    await driver.drain();
    expect(driver.deadLetters()).toMatchObject([
      { key: 'gone', processor: 'parse', errorClass: 'UnknownChainStepError', topic: 'parse.dlq' },
    ]);
    expect(driver.deadLetters()[0]!.headers[WEIR_HEADERS.errorMessage]).toMatch(
      /resumes at chain step 'write-v1' \(weir\.step\), which this chain does not have after its first step \(steps: parse, enrich, write\)/,
    );
    expect([...calls.keys()].filter((k) => k.startsWith('gone/'))).toEqual([]);
    expect(driver.readOutput('out')).toEqual([]);
  });

  it('a step before the last that forwards two outputs dead-letters the record at that step', async () => {
    const { built } = chain(blocking);
    const driver = new TopologyTestDriver(built);
    await driver.pipeInput('in', { key: 'f', value: { id: 'f', fanOut: true } });
    await driver.drain();
    expect(driver.deadLetters()).toMatchObject([{ key: 'f', processor: 'parse', errorClass: 'ChainStepOutputError', topic: 'parse.dlq' }]);
    expect(driver.readOutput('out')).toEqual([]);
  });
});
