import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee, type RetryOptions } from '../index.js';
import { arbitraries } from './arbitraries.js';
import { expectedChainOutcome, plannedChainStep } from './chain-plan.js';
import { invariants } from './invariants.js';
import { propertyRuns } from './property-runs.js';
import { TopologyTestDriver } from './topology-test-driver.js';

const RUNS = propertyRuns();
const STEPS = ['parse', 'enrich', 'write'];
/** Short backoffs: the driver runs them in virtual time, but a small range keeps runs quick to drain. */
const retry = arbitraries.retryOptions({ maxAttempts: 4, maxInitialMs: 5_000 });

function chain(
  retries: readonly RetryOptions[],
  guarantee: ProcessingGuarantee,
  onCall?: (id: string, step: string, attempt: number) => void,
) {
  return topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', { key: 'string', value: 'json' })
    .process('parse', plannedChainStep('parse', onCall), { retry: retries[0]! })
    .process('enrich', plannedChainStep('enrich', onCall), { retry: retries[1]! })
    .process('write', plannedChainStep('write', onCall), { retry: retries[2]! })
    .branch({ success: sink('out') });
}

describe('processor chains (property)', () => {
  it('with failures at every step and no faults: each step runs exactly as its plan says — never again once it succeeded — and every input ends as the chain model says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(retry, retry, retry),
        fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once'),
        arbitraries.chainedInputs(STEPS, { maxLength: 8 }),
        async (retries, guarantee, inputs) => {
          const calls = new Map<string, number>();
          const driver = new TopologyTestDriver(
            chain(retries, guarantee, (id, step) => calls.set(`${id} ${step}`, (calls.get(`${id} ${step}`) ?? 0) + 1)),
          );
          await driver.pipeInput('in', inputs);
          await driver.drain();
          const steps = driver.topology.subtopologies
            .get(0)!
            .steps.toArray()
            .map((s) => ({ name: s.processor.name, retry: s.processor.retry }));
          const wanted = new Map<string, number>();
          for (const input of inputs)
            for (const [step, attempts] of expectedChainOutcome(input.value, steps).attempts)
              wanted.set(`${input.value.id} ${step}`, attempts);
          expect(Object.fromEntries([...calls].sort())).toEqual(Object.fromEntries([...wanted].sort()));
          invariants.all(driver);
          invariants.followsChainPlans(driver);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('under exactly_once with faults (crashes, aborted transactions, rebalances, zombies): nothing lost, nothing twice, every input as the model says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(retry, retry, retry),
        arbitraries.chainedInputs(STEPS, { maxLength: 8 }),
        arbitraries.faultSchedule({
          guarantee: 'exactly_once',
          kinds: ['crash', 'abort-transaction', 'rebalance', 'broker-error', 'stall'],
        }),
        async (retries, inputs, faults) => {
          const driver = new TopologyTestDriver(chain(retries, 'exactly_once'), { faults });
          await driver.pipeInput('in', inputs);
          await driver.drain();
          invariants.exactlyOnce(driver);
          invariants.all(driver);
          invariants.followsChainPlans(driver);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
