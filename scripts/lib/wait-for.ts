/**
 * Bounded waiting on a condition for integration tests, benchmarks and the demo: poll, never a
 * fixed sleep.
 */

/**
 * Polls `condition` every `intervalMs` until it returns a value other than `undefined`/`false`,
 * and returns that value.
 *
 * @throws Error with `describe()` (what was still missing) after `timeoutMs`
 */
export async function waitFor<T>(condition: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, describe: () => string, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
