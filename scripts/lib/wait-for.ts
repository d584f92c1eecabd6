/**
 * Bounded waiting on a condition for the local infrastructure scripts, integration tests,
 * benchmarks and the demo: poll, never a fixed sleep. The one home of the polling loop:
 * {@link waitFor} throws on timeout, {@link pollUntil} answers whether the condition held.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** A polled condition: holds when it returns a value other than `undefined`/`false`. */
export type Condition<T> = () => Promise<T | undefined | false> | T | undefined | false;

/**
 * Polls `condition` every `intervalMs` ms (the last pause cut short at the deadline) until it
 * returns a value other than `undefined`/`false`, or `timeoutMs` ms pass.
 *
 * @returns that value, or `undefined` on timeout. Errors `condition` throws propagate.
 */
async function poll<T>(condition: Condition<T>, timeoutMs: number, intervalMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) return undefined;
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/**
 * Polls `condition` every `intervalMs` ms until it returns a value other than
 * `undefined`/`false`, and returns that value.
 *
 * @param timeoutMs - how long to wait, in ms.
 * @param describe - what was still missing, for the error.
 * @param intervalMs - pause between checks, in ms (default 100).
 * @throws Error `timed out after <timeoutMs> ms: <describe()>` after `timeoutMs`.
 * @example await waitFor(async () => (await total(topic)) >= 3, 30_000, () => 'nothing published');
 */
export async function waitFor<T>(condition: Condition<T>, timeoutMs: number, describe: () => string, intervalMs = 100): Promise<T> {
  const value = await poll(condition, timeoutMs, intervalMs);
  if (value === undefined) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
  return value;
}

/**
 * Polls `condition` every `intervalMs` ms until it holds or `timeoutMs` ms pass.
 *
 * @param intervalMs - pause between checks, in ms (default 250).
 * @returns whether it held; never throws on timeout (errors `condition` throws propagate).
 * @example if (!(await pollUntil(() => brokerAnswers(brokers), 90_000, 500))) throw new Error('no broker');
 */
export async function pollUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 250): Promise<boolean> {
  return (await poll(condition, timeoutMs, intervalMs)) === true;
}
