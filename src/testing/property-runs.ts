/** The environment variable that raises (or lowers) the number of runs per property. */
export const PROPERTY_RUNS_ENV = 'WEIR_PROPERTY_RUNS';

/**
 * How many runs a fast-check property makes: `WEIR_PROPERTY_RUNS` when set (e.g. 5000 for a
 * nightly soak), else `defaultRuns`. Pass it as `numRuns` to `fc.assert`.
 *
 * @param defaultRuns runs when the variable is not set (default 200)
 * @throws RangeError when `WEIR_PROPERTY_RUNS` is set but is not an integer ≥ 1
 * @example
 * await fc.assert(fc.asyncProperty(arbitraries.plannedInputs(), check), { numRuns: propertyRuns() });
 */
export function propertyRuns(defaultRuns = 200, env: Readonly<Record<string, string | undefined>> = process.env): number {
  const raw = env[PROPERTY_RUNS_ENV];
  if (raw === undefined || raw.trim() === '') return defaultRuns;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`${PROPERTY_RUNS_ENV} must be an integer ≥ 1 (got ${JSON.stringify(raw)})`);
  return runs;
}
