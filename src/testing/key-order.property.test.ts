import fc from 'fast-check';
import { describe, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee, type RetryOptions } from '../index.js';
import { arbitraries } from './arbitraries.js';
import { plannedChainStep } from './chain-plan.js';
import { plannedProcessor, type PlannedValue } from './failure-plan.js';
import { invariants } from './invariants.js';
import { propertyRuns } from './property-runs.js';
import { TopologyTestDriver } from './topology-test-driver.js';

const RUNS = propertyRuns();
/** Generous per-test timeout: soak runs (WEIR_PROPERTY_RUNS) take longer. */
const TIMEOUT_MS = Math.max(60_000, RUNS * 50);
const planOf = (input: { value: unknown }) => (input.value as PlannedValue).plan;
/** Topics mode with `order: 'key'`, short backoffs (virtual time), sometimes a `maxParkedKeys` of 1–3. */
const ordered = arbitraries.retryOptions({ modes: ['topics'], orders: ['key'], maxInitialMs: 5_000 });
/** A guarantee, with a fault schedule under it (crashes, rebalances, broker errors; aborts and zombies under exactly_once). */
const guaranteeAndFaults = fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once').chain((guarantee) =>
  fc.tuple(
    fc.constant(guarantee),
    arbitraries.faultSchedule({
      guarantee,
      maxFaults: 4,
      kinds:
        guarantee === 'exactly_once'
          ? ['crash', 'rebalance', 'broker-error', 'abort-transaction', 'stall']
          : ['crash', 'rebalance', 'broker-error'],
    }),
  ),
);

function single(retry: RetryOptions, guarantee: ProcessingGuarantee) {
  return topology({ applicationId: 'keyed', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', 'json')
    .process('planned', plannedProcessor(), { retry })
    .branch({ success: sink('out'), dlq: sink('dlq') });
}

function chain(retries: readonly [RetryOptions, RetryOptions], guarantee: ProcessingGuarantee) {
  return topology({ applicationId: 'keyed', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', { key: 'string', value: 'json' })
    .process('parse', plannedChainStep('parse'), { retry: retries[0] })
    .process('write', plannedChainStep('write'), { retry: retries[1] })
    .branch({ success: sink('out') });
}

describe("retry order 'key' (property, TopologyTestDriver)", () => {
  it(
    'under failures, crashes and rebalances (both guarantees): every key keeps its input order, nothing is lost, and every input ends as its plan says',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          guaranteeAndFaults,
          ordered,
          arbitraries.plannedInputs({ keys: 3, maxLength: 14 }),
          fc.integer({ min: 1, max: 2 }),
          async ([guarantee, faults], retry, inputs, partitions) => {
            const driver = new TopologyTestDriver(single(retry, guarantee), { faults, partitions });
            await driver.pipeInput('in', inputs);
            await driver.drain();
            // all() checks per-key order (one stretch under exactly_once; one more per restart
            // under at_least_once), conservation, and exactly-once under exactly_once.
            invariants.all(driver, { planOf, ...(guarantee === 'at_least_once' ? { duplicates: 'allowed' as const } : {}) });
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'a two-step chain that keeps key order at both steps, with faults: per-key order, and no step that succeeded runs again',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          guaranteeAndFaults,
          fc.tuple(ordered, ordered),
          arbitraries.chainedInputs(['parse', 'write'], { keys: 3, maxLength: 10 }),
          async ([guarantee, faults], retries, inputs) => {
            const driver = new TopologyTestDriver(chain(retries, guarantee), { faults });
            await driver.pipeInput('in', inputs);
            await driver.drain();
            invariants.all(driver, guarantee === 'at_least_once' ? { duplicates: 'allowed' } : {});
            if (guarantee === 'exactly_once') invariants.followsChainPlans(driver);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
