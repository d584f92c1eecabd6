import { z } from 'zod';

const Rate = z.coerce.number().min(0).max(1);

/**
 * A rate from 0 to 1 (e.g. a simulated dependency's failure rate) read from the environment
 * variable `name`; `fallback` when the variable is unset or empty.
 *
 * @throws Error naming the variable and its value when that is not a number from 0 to 1, so a
 *   topology file that reads it fails to load (`weir run` exits 2) rather than run with NaN
 */
export function rateFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const parsed = Rate.safeParse(raw);
  if (!parsed.success) throw new Error(`${name} must be a number from 0 to 1 (got '${raw}')`);
  return parsed.data;
}
