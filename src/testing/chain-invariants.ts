import { expectedChainOutcome, type ChainPlannedValue } from './chain-plan.js';
import { describeEvent, RunIndex } from './input-outcomes.js';
import { ProblemList } from './invariant-violation.js';
import { requireSettled } from './delivery-invariants.js';
import { describeInput } from './test-records.js';
import type { TopologyTestDriver } from './topology-test-driver.js';

/**
 * The model check of processor chains: every input whose value is a {@link ChainPlannedValue}
 * (run by `plannedChainStep` steps) ended as the chain model says ({@link expectedChainOutcome}):
 * in the sink with each step's succeeding attempt in its trail — so no step ran again after it
 * succeeded, and each failed step was retried at that step — or in the DLQ of the first step that
 * gave up, with that step's `weir.attempts` and `weir.error.class`, and the steps before it in
 * the dead letter's trail.
 *
 * @throws InvariantViolation naming each input that ended otherwise
 */
export function followsChainPlans(driver: TopologyTestDriver): void {
  requireSettled(driver, 'failure-plan');
  const problems = new ProblemList('failure-plan');
  for (const o of new RunIndex(driver).outcomes) {
    const value = o.input.value as ChainPlannedValue | null;
    if (value === null || typeof value !== 'object' || typeof value.plans !== 'object') continue;
    const steps = o.subtopology.steps.toArray().map((s) => ({ name: s.processor.name, retry: s.processor.retry }));
    const expected = expectedChainOutcome(value, steps);
    const what = `${describeInput(o.input)} with plans ${JSON.stringify(value.plans)}`;
    const ended = o.final ? describeEvent(o.final) : 'no outcome';
    if (expected.deadAt === undefined) {
      const trails = o.sinkOutputs.map((out) => JSON.stringify((out.value as ChainPlannedValue).trail));
      const want = JSON.stringify(expected.attempts);
      if (o.deadLetters.length > 0 || trails.length === 0 || trails.some((t) => t !== want))
        problems.add(
          `${what} should reach the sink with trail ${want}, but has trails [${trails.join(', ')}] and ${o.deadLetters.length} dead letter(s) (${ended})`,
        );
      continue;
    }
    const { step, outcome } = expected.deadAt;
    const dl = o.deadLetters[o.deadLetters.length - 1];
    const before = JSON.stringify(expected.attempts.slice(0, -1));
    const trail = JSON.stringify((dl?.value as ChainPlannedValue | undefined)?.trail ?? []);
    if (
      dl === undefined ||
      dl.processor !== step ||
      dl.attempts !== outcome.attempts ||
      dl.errorClass !== outcome.errorClass ||
      trail !== before ||
      o.sinkOutputs.length > 0
    )
      problems.add(
        `${what} should be dead-lettered by '${step}' after ${outcome.attempts} attempt(s) with ${outcome.errorClass} and trail ${before}, but ${dl ? `its dead letter says '${dl.processor}', ${dl.attempts} attempt(s), ${dl.errorClass}, trail ${trail}` : `it has no dead letter (${ended})`}${o.sinkOutputs.length > 0 ? ` and ${o.sinkOutputs.length} sink output(s)` : ''}`,
      );
  }
  problems.throwIfAny();
}
