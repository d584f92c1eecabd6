import { WeirError } from '../errors.js';

/** The names of weir's invariants, as they appear in {@link InvariantViolation}. */
export type InvariantName =
  | 'conservation'
  | 'attempt-bound'
  | 'delays'
  | 'order'
  | 'dedup'
  | 'exactly-once'
  | 'headers'
  | 'failure-plan'
  | 'circuit-breaker'
  | 'retry-budget'
  | 'breaker-conservation';

/**
 * An invariant does not hold. The message names the invariant and each offending record
 * (`input #3 (orders/0@3, key "c-1")`, or a topic/partition@offset), at most 10 of them.
 */
export class InvariantViolation extends WeirError {
  constructor(
    readonly invariant: InvariantName,
    /** One line per offending record. */
    readonly problems: readonly string[],
  ) {
    const shown = problems.slice(0, 10);
    const more = problems.length > shown.length ? `\n  … and ${problems.length - shown.length} more` : '';
    super('WEIR_INVARIANT_VIOLATION', `invariant '${invariant}' violated:\n  ${shown.join('\n  ')}${more}`);
  }
}

/** Collects problems and throws them as one {@link InvariantViolation}. */
export class ProblemList {
  readonly problems: string[] = [];

  constructor(private readonly invariant: InvariantName) {}

  add(problem: string): void {
    this.problems.push(problem);
  }

  /** @throws InvariantViolation when a problem was added */
  throwIfAny(): void {
    if (this.problems.length > 0) throw new InvariantViolation(this.invariant, this.problems);
  }
}
