import fc from 'fast-check';
import { describe, it } from 'vitest';
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
const TIMEOUT_MS = Math.max(30_000, RUNS * 25);

/** A topology whose dedup key is the record's `dedupId` payload. */
function dedupTopology(retry: RetryOptions, guarantee: ProcessingGuarantee, onStoreError: 'fail' | 'skip-dedup' = 'fail') {
  return topology({ applicationId: 'dedup-prop', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', 'json')
    .process('planned', plannedProcessor(), {
      retry,
      dedup: {
        key: (r) => (r.value as PlannedValue<string>).payload,
        ttlMs: 365 * 24 * 3_600_000,
        claimTtlMs: 365 * 24 * 3_600_000,
        store: 'memory',
        onStoreError,
      },
    })
    .branch({ success: sink('out'), dlq: sink('dlq') });
}

/** Inputs where the dedup id repeats within a key (the same upstream event sent twice). */
const dedupInputs = arbitraries
  .plannedInputs({ payload: fc.constantFrom('e0', 'e1', 'e2', 'e3'), maxLength: 12 })
  .map((inputs) => inputs.map((i) => ({ ...i, key: `key-${i.value.payload}` })));

async function run(retry: RetryOptions, guarantee: ProcessingGuarantee, inputs: TestInput[], faults: FaultSchedule, seed: number) {
  const driver = new TopologyTestDriver(dedupTopology(retry, guarantee), { faults, seed, partitions: 2 });
  await driver.pipeInput('in', inputs);
  await driver.drain();
  return driver;
}

describe('dedup properties (TopologyTestDriver)', () => {
  it(
    'without faults a duplicate key yields a single outcome, in both retry modes',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraries.retryOptions({ maxInitialMs: 60_000 }),
          fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once'),
          dedupInputs,
          fc.integer(),
          async (retry, guarantee, inputs, seed) => {
            const driver = await run(retry, guarantee, inputs, [], seed);
            invariants.all(driver);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'exactly_once: a duplicate key yields a single outcome under any fault schedule',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraries.retryOptions({ maxInitialMs: 5_000 }),
          dedupInputs,
          arbitraries.faultSchedule({ guarantee: 'exactly_once' }),
          fc.integer(),
          async (retry, inputs, faults, seed) => {
            const driver = await run(retry, 'exactly_once', inputs, faults, seed);
            invariants.all(driver);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
