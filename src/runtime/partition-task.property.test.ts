import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee, type RetryOptions } from '../index.js';
import {
  arbitraries,
  invariants,
  plannedProcessor,
  propertyRuns,
  TopologyTestDriver,
  type FaultSchedule,
  type PlannedValue,
  type TestInput,
} from '../testing/index.js';

const RUNS = propertyRuns();
/** Generous per-test timeout: soak runs (WEIR_PROPERTY_RUNS) take longer. */
const TIMEOUT_MS = Math.max(30_000, RUNS * 25);

const planOf = (input: { value: unknown }) => (input.value as PlannedValue).plan;

function plannedTopology(retry: RetryOptions, guarantee: ProcessingGuarantee) {
  return topology({ applicationId: 'prop', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', 'json')
    .process('planned', plannedProcessor(), { retry })
    .branch({ success: sink('out'), dlq: sink('dlq') });
}

async function run(
  retry: RetryOptions,
  guarantee: ProcessingGuarantee,
  inputs: TestInput[],
  faults: FaultSchedule,
  seed: number,
  partitions: number,
) {
  const driver = new TopologyTestDriver(plannedTopology(retry, guarantee), { faults, seed, partitions });
  await driver.pipeInput('in', inputs);
  await driver.drain();
  return driver;
}

describe('PartitionTask properties (TopologyTestDriver)', () => {
  it(
    'without faults every input ends as its failure plan says, exactly once, on time and in order',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraries.retryOptions(),
          fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once'),
          arbitraries.plannedInputs(),
          fc.integer(),
          fc.integer({ min: 1, max: 3 }),
          async (retry, guarantee, inputs, seed, partitions) => {
            const driver = await run(retry, guarantee, inputs, [], seed, partitions);
            invariants.all(driver, { planOf });
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'exactly_once: under any fault schedule no output is duplicated or lost',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraries.retryOptions({ maxInitialMs: 5_000 }),
          arbitraries.plannedInputs({ maxLength: 12 }),
          arbitraries.faultSchedule({ guarantee: 'exactly_once' }),
          fc.integer(),
          fc.integer({ min: 1, max: 2 }),
          async (retry, inputs, faults, seed, partitions) => {
            const driver = await run(retry, 'exactly_once', inputs, faults, seed, partitions);
            invariants.all(driver, { planOf });
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'at_least_once: under any fault schedule nothing is lost',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraries.retryOptions({ maxInitialMs: 5_000 }),
          arbitraries.plannedInputs({ maxLength: 12 }),
          arbitraries.faultSchedule({ guarantee: 'at_least_once' }),
          fc.integer(),
          fc.integer({ min: 1, max: 2 }),
          async (retry, inputs, faults, seed, partitions) => {
            const driver = await run(retry, 'at_least_once', inputs, faults, seed, partitions);
            invariants.all(driver, { planOf, duplicates: 'allowed' });
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  // Counterexample found by the exactly_once property (it exposed a wrong check in the delays
  // invariant, not a runtime bug): a transaction fails (found while record @1 waited for its
  // blocking backoff; since tasks commit on time mid-poll, it is the commit due after @0's
  // success); the writer aborts and the task re-runs the batch from the committed offset, so @0
  // starts again at attempt 1 — a re-run, not a retry that came early.
  it('regression: a batch re-run after an aborted transaction restarts attempts and is not an early retry', async () => {
    const retry: RetryOptions = {
      maxAttempts: 2,
      backoff: { initialMs: 241, multiplier: 1, maxMs: 241, jitter: 'equal' },
      mode: 'blocking',
    };
    const inputs = [
      { key: 'k0', value: { id: 'r0', plan: ['retriable'] } },
      { key: 'k3', value: { id: 'r1', plan: [] } },
      { key: 'k0', value: { id: 'r2', plan: ['retriable'] } },
    ];
    const driver = await run(retry, 'exactly_once', inputs, [{ kind: 'broker-error', point: 'before-produce', nth: 2 }], -1879048183, 2);
    const onPartition1 = driver.history.records.filter((e) => e.partition === 1).map((e) => `@${e.offset} ${e.outcome} #${e.attempt}`);
    // The commit interval (100 ms) is due when @0 succeeds (its backoff is 120–241 ms), so the
    // task commits on time before @1's first attempt; that transaction is the one aborted.
    expect(onPartition1).toEqual(['@0 retry #1', '@0 success #2', '@0 retry #1', '@0 success #2', '@1 retry #1', '@1 success #2']);
    invariants.all(driver, { planOf });
  });
});
