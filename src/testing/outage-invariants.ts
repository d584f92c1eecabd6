import type { CircuitTransition } from '../failure/circuit-breaker.js';
import { RETRY_BUDGET_WINDOW_MS } from '../failure/retry-budget-policy.js';
import { conservation, type ConservationOptions } from './delivery-invariants.js';
import type { DriverRecordEvent } from './driver-history.js';
import { describeEvent, RunIndex } from './input-outcomes.js';
import { ProblemList } from './invariant-violation.js';
import { describeInput } from './test-records.js';
import type { TopologyTestDriver } from './topology-test-driver.js';

/** The processor of the task that reported an event. */
const processorOf = (driver: TopologyTestDriver, event: DriverRecordEvent): string | undefined =>
  driver.catalog.stepOf(event.topic, event.processor)?.processor.name;

/** Whether an event stands for a processor call (the processor ran: it reports an attempt ≥ 1). */
const isCall = (event: DriverRecordEvent): boolean => event.outcome !== 'duplicate' && event.attempt >= 1;

/** The spans (exclusive of their ends) during which a processor's breaker was open, epoch ms. */
function openSpans(transitions: readonly CircuitTransition[], processor: string, endMs: number): Array<{ from: number; to: number }> {
  const spans: Array<{ from: number; to: number }> = [];
  let openedAt: number | undefined;
  for (const t of transitions) {
    if (t.processor !== processor) continue;
    if (t.to === 'open') openedAt = t.atMs;
    else if (openedAt !== undefined) {
      spans.push({ from: openedAt, to: t.atMs });
      openedAt = undefined;
    }
  }
  if (openedAt !== undefined) spans.push({ from: openedAt, to: endMs });
  return spans;
}

/**
 * Circuit breaker: no processor is called while its breaker is open — between an `open`
 * transition and the next `half-open` one, the ends excluded (the failure that opened it ends
 * at the opening instant).
 *
 * @throws InvariantViolation naming each call made while the breaker was open
 */
export function noCallWhileBreakerOpen(driver: TopologyTestDriver): void {
  const problems = new ProblemList('circuit-breaker');
  const { records, circuitTransitions } = driver.history;
  const spans = new Map<string, Array<{ from: number; to: number }>>();
  for (const event of records) {
    const processor = processorOf(driver, event);
    if (processor === undefined || !isCall(event) || event.zombie) continue;
    if (!spans.has(processor)) spans.set(processor, openSpans(circuitTransitions, processor, Number.POSITIVE_INFINITY));
    const span = spans.get(processor)?.find((s) => event.atMs > s.from && event.atMs < s.to);
    if (span !== undefined)
      problems.add(
        `${describeEvent(event)}: processor '${processor}' was called while its breaker was open (from ${new Date(span.from).toISOString()}${Number.isFinite(span.to) ? ` to ${new Date(span.to).toISOString()}` : ', still open'})`,
      );
  }
  problems.throwIfAny();
}

/**
 * Retry budget: at every retry of a processor with a `retryBudget`, the retries in the budget's
 * window (the last 10 s, in whole 1 s slots) so far are at most `ratio` × the first attempts
 * in it + `minPerSecond` × 10. A call is a first attempt when it reports attempt 1, else a
 * retry (held calls included).
 *
 * @throws InvariantViolation naming each retry over the budget
 */
export function retriesWithinBudget(driver: TopologyTestDriver): void {
  const problems = new ProblemList('retry-budget');
  const slotOf = (ms: number): number => Math.floor(ms / 1_000) * 1_000;
  const seen = new Map<string, Array<{ slot: number; retry: boolean }>>();
  for (const event of driver.history.records) {
    const processor = processorOf(driver, event);
    const policy = driver.catalog.stepOf(event.topic, event.processor)?.processor.retryBudget;
    if (processor === undefined || policy == null || !isCall(event) || event.zombie) continue;
    const calls = seen.get(processor) ?? [];
    seen.set(processor, calls);
    const retry = event.attempt > 1;
    const slot = slotOf(event.atMs);
    calls.push({ slot, retry });
    if (!retry) continue;
    const window = calls.filter((c) => c.slot + 1_000 > event.atMs - RETRY_BUDGET_WINDOW_MS);
    const retries = window.filter((c) => c.retry).length;
    const firsts = window.length - retries;
    const allowed = policy.ratio * firsts + (policy.minPerSecond * RETRY_BUDGET_WINDOW_MS) / 1_000;
    if (retries > allowed + 1e-9)
      problems.add(
        `${describeEvent(event)}: retry ${retries} in the window of '${processor}' is over its budget of ${allowed} (${firsts} first attempts)`,
      );
  }
  problems.throwIfAny();
}

/**
 * Conservation with a circuit breaker: every input still has exactly one outcome (see
 * `conservation`), no record is dead-lettered while its processor's breaker is open, and a
 * held attempt (a failure charged to the dependency) costs the record nothing: its next
 * attempt has the same number (or 1, when a restart replays it).
 *
 * @throws InvariantViolation naming each record that was lost, duplicated, dead-lettered while
 *   the breaker was open, or charged for a held attempt
 */
export function conservationWithBreaker(driver: TopologyTestDriver, options: ConservationOptions = {}): void {
  conservation(driver, options);
  const problems = new ProblemList('breaker-conservation');
  const { circuitTransitions } = driver.history;
  for (const o of new RunIndex(driver).outcomes) {
    const processor = o.subtopology.processor.name;
    const spans = openSpans(circuitTransitions, processor, Number.POSITIVE_INFINITY);
    o.events.forEach((event, i) => {
      if (event.outcome === 'dead-letter' && spans.some((s) => event.atMs > s.from && event.atMs < s.to))
        problems.add(`${describeInput(o.input)} was dead-lettered while the breaker of '${processor}' was open: ${describeEvent(event)}`);
      if (event.outcome !== 'held') return;
      const next = o.events.slice(i + 1).find(isCall);
      if (next !== undefined && next.attempt !== event.attempt && next.attempt !== 1)
        problems.add(`${describeInput(o.input)}: held at attempt ${event.attempt}, but its next call was attempt ${next.attempt}`);
    });
  }
  problems.throwIfAny();
}
