import type { ProcessorFn } from '../dsl/processor.js';
import type { RetryPolicy } from '../failure/retry-policy.js';
import { applyFailurePlan, expectedOutcome, type ExpectedOutcome, type FailurePlan } from './failure-plan.js';

/**
 * The value of a planned record for a processor chain: its id and, per step name, what each
 * attempt of that step does (a missing step succeeds at once). The steps add `trail`.
 */
export interface ChainPlannedValue {
  readonly id: string;
  readonly plans: Readonly<Record<string, FailurePlan>>;
  /** Per step that succeeded, in chain order: `[step, the attempt that succeeded]`. */
  readonly trail?: ReadonlyArray<readonly [string, number]>;
}

/**
 * A chain step that follows each record's plan for step `name` (the value is a
 * {@link ChainPlannedValue}) and, on success, passes the value on with `[name, attempt]`
 * appended to its `trail`. `onCall`, when given, sees every call (a side channel to count them).
 *
 * @example
 * .process('parse', plannedChainStep('parse'), { retry }).process('enrich', plannedChainStep('enrich'), { retry })
 */
export function plannedChainStep(
  name: string,
  onCall?: (id: string, step: string, attempt: number) => void,
): ProcessorFn<any, any, ChainPlannedValue> {
  return (record, ctx) => {
    const value = record.value as ChainPlannedValue;
    onCall?.(value.id, name, ctx.attempt);
    applyFailurePlan(value.plans[name], ctx.attempt, `record ${value.id} at ${name}`);
    return { ...value, trail: [...(value.trail ?? []), [name, ctx.attempt] as const] };
  };
}

/** Where a chain record must end, by the model: each step's {@link ExpectedOutcome} up to the first dead letter. */
export interface ExpectedChainOutcome {
  /** The step that dead-letters the record, with its outcome; undefined: it reaches the sink. */
  readonly deadAt: { readonly step: string; readonly outcome: ExpectedOutcome } | undefined;
  /** Each step that ran, in order, with the attempts it took (the deciding attempt). */
  readonly attempts: ReadonlyArray<readonly [string, number]>;
}

/**
 * The model of a chain: step after step, the step's {@link expectedOutcome} under its own policy;
 * the first step that dead-letters ends the record; a step never runs again once it succeeded.
 *
 * @param steps the chain's steps in order, each with its compiled retry policy
 */
export function expectedChainOutcome(
  value: ChainPlannedValue,
  steps: ReadonlyArray<{ readonly name: string; readonly retry: RetryPolicy }>,
): ExpectedChainOutcome {
  const attempts: Array<readonly [string, number]> = [];
  for (const step of steps) {
    const outcome = expectedOutcome(value.plans[step.name] ?? [], step.retry);
    attempts.push([step.name, outcome.attempts]);
    if (outcome.outcome === 'dead-letter') return { deadAt: { step: step.name, outcome }, attempts };
  }
  return { deadAt: undefined, attempts };
}
