import { IllegalStateError, TopologyError, type TopologyProblem } from '../errors.js';

/**
 * Collects the problems of one compile, so that a topology file with several mistakes reports
 * them all in one run rather than one per try. A check that depends on an earlier one (a step on
 * a source whose topic name is invalid, say) is skipped with it.
 */
export class TopologyProblems {
  private readonly found: TopologyProblem[] = [];

  /** How many problems were found so far. */
  get count(): number {
    return this.found.length;
  }

  /**
   * Runs `check`; a {@link TopologyError} it throws (with all its problems, or those `keep`
   * accepts) is kept.
   *
   * @returns what `check` returned, or `undefined` when it threw a TopologyError
   * @throws whatever else `check` throws (a bug, not a bad topology)
   */
  attempt<T>(check: () => T, keep: (problem: TopologyProblem) => boolean = () => true): T | undefined {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof TopologyError)) throw error;
      this.found.push(...error.problems.filter(keep));
      return undefined;
    }
  }

  /**
   * @throws TopologyError naming the first problem's node, with every problem found in its message
   */
  throwIfAny(): void {
    const [first, ...others] = this.found;
    if (first !== undefined) throw new TopologyError(first.node, first.problem, undefined, others);
  }

  /**
   * Stops the compile where later checks cannot go on (an `attempt` they need failed).
   *
   * @throws TopologyError with every problem found so far
   * @throws IllegalStateError when none was found (a bug in the caller)
   */
  fail(): never {
    this.throwIfAny();
    throw new IllegalStateError('a compile stopped without a problem to report');
  }
}
