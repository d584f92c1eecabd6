import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee } from '../index.js';
import { compile } from '../topology/compile.js';
import { arbitraries } from './arbitraries.js';
import { expectedOutcome } from './failure-plan.js';
import { propertyRuns } from './property-runs.js';
import { TopologyTestDriver } from './topology-test-driver.js';

const RUNS = propertyRuns();

describe('arbitraries', () => {
  it('generate retry options that compile, and fault schedules that a driver of the same guarantee accepts', () => {
    fc.assert(
      fc.property(
        arbitraries.retryOptions(),
        fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once'),
        fc.gen(),
        (retry, guarantee, gen) => {
          const builder = topology({ applicationId: 'a', processingGuarantee: guarantee })
            .source('in')
            .process('p', (r) => r.value, { retry })
            .branch({ success: sink('out') });
          expect(() => compile(builder)).not.toThrow();
          const faults = gen(arbitraries.faultSchedule, { guarantee });
          expect(() => new TopologyTestDriver(builder, { faults })).not.toThrow();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('expectedOutcome decides by the first ok or non-retriable attempt, within maxAttempts', () => {
    fc.assert(
      fc.property(arbitraries.failurePlan(), fc.integer({ min: 1, max: 8 }), (plan, maxAttempts) => {
        const expected = expectedOutcome(plan, { maxAttempts });
        expect(expected.attempts).toBeLessThanOrEqual(maxAttempts);
        const decisive = plan.slice(0, expected.attempts);
        expect(decisive.slice(0, -1).every((step) => step === 'retriable')).toBe(true);
        const last = plan[expected.attempts - 1] ?? 'ok';
        expect(expected.outcome).toBe(last === 'ok' ? 'success' : 'dead-letter');
      }),
      { numRuns: RUNS },
    );
  });
});
