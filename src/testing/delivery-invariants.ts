import { WEIR_HEADERS } from '../record/weir-headers.js';
import { prepareRecord } from '../runtime/prepared-record.js';
import { expectedOutcome, type FailurePlan } from './failure-plan.js';
import { describeEvent, RunIndex, type InputOutcome } from './input-outcomes.js';
import { ProblemList, InvariantViolation, type InvariantName } from './invariant-violation.js';
import { TEST_INPUT_HEADER, coordinates, describeInput, type PipedInput } from './test-records.js';
import type { TopologyTestDriver } from './topology-test-driver.js';

/** Options of {@link conservation}. */
export interface ConservationOptions {
  /**
   * `'forbidden'` (default): every input ends in exactly one of sink or DLQ — what holds
   * without faults, and under exactly_once with any faults. `'allowed'`: at least one (nothing
   * lost) — at_least_once under crashes and rebalances, whose replays may write twice.
   */
  readonly duplicates?: 'forbidden' | 'allowed';
}

/**
 * Checks that every task is idle: every input decided, every retry done, everything committed.
 *
 * @throws InvariantViolation naming each task that still waits (time has not passed the last
 *   due time: call `drain()` first)
 */
export function requireSettled(driver: TopologyTestDriver, invariant: InvariantName): void {
  if (driver.isSettled()) return;
  const waiting = driver.taskStatus().filter((s) => s.next.kind !== 'idle' && s.next.kind !== 'closed');
  throw new InvariantViolation(
    invariant,
    waiting.map(
      (s) =>
        `not settled: task ${s.name} ${s.next.kind === 'wait' ? `waits (${s.next.reason}) until ${new Date(s.next.untilMs).toISOString()}` : s.next.kind} — call drain() (or advance time past the last due time) before checking`,
    ),
  );
}

function checkOutcome(o: InputOutcome, duplicates: 'forbidden' | 'allowed', problems: ProblemList): void {
  const what = describeInput(o.input);
  const final = o.final;
  const s = o.sinkOutputs.length;
  const d = o.deadLetters.length;
  if (final === undefined) {
    const last = o.events[o.events.length - 1];
    problems.add(`${what} has no final outcome: ${last ? `its last event is ${describeEvent(last)}` : 'it was never processed'}`);
    return;
  }
  const noOutput = final.outcome === 'duplicate' || (final.outcome === 'success' && final.outputs === 0);
  if (s === 0 && d === 0 && !noOutput) {
    problems.add(`${what} was lost: it ended as ${describeEvent(final)}, but neither the sink nor the DLQ holds it (read_committed)`);
    return;
  }
  if (duplicates === 'allowed') return;
  const where = (list: readonly { topic: string; partition: number; offset: number }[]) => list.map(coordinates).join(', ');
  if (s > 0 && d > 0) problems.add(`${what} is in the sink (${where(o.sinkOutputs)}) and in the DLQ (${where(o.deadLetters)})`);
  else if (d > 1) problems.add(`${what} was dead-lettered ${d} times: ${where(o.deadLetters)}`);
  else if (final.outcome === 'success' && s !== final.outputs)
    problems.add(
      `${what} has ${s} sink outputs (${where(o.sinkOutputs)}) but its success produced ${final.outputs}: ${s > (final.outputs ?? 0) ? 'duplicated' : 'lost'} output`,
    );
  else if (final.outcome === 'dead-letter' && (d !== 1 || s > 0))
    problems.add(`${what} ended as ${describeEvent(final)} but has ${d} dead letters and ${s} sink outputs`);
  else if (final.outcome === 'duplicate' && s + d > 0)
    problems.add(`${what} was skipped as a duplicate but has ${s} sink outputs and ${d} dead letters`);
}

/**
 * Conservation: once time has passed the last due time (`drain()`), every input ends in
 * exactly one of sink or DLQ (or was filtered, or skipped as a duplicate) — none lost, none
 * written twice (see {@link ConservationOptions}).
 *
 * @throws InvariantViolation naming each input that was lost, undecided or duplicated
 */
export function conservation(driver: TopologyTestDriver, options: ConservationOptions = {}): void {
  requireSettled(driver, 'conservation');
  const problems = new ProblemList('conservation');
  for (const o of new RunIndex(driver).outcomes) checkOutcome(o, options.duplicates ?? 'forbidden', problems);
  problems.throwIfAny();
}

/**
 * exactly_once: under any fault schedule, a read_committed consumer of the sinks, the DLQs and
 * the retry tiers sees every input's outcome exactly once — no output duplicated, none lost,
 * no retry hop written twice, no output that comes from no input.
 *
 * @throws InvariantViolation naming the records; also when the topology runs at_least_once
 */
export function exactlyOnce(driver: TopologyTestDriver): void {
  if (driver.topology.processingGuarantee !== 'exactly_once') {
    throw new InvariantViolation('exactly-once', [
      `the topology runs processing.guarantee ${driver.topology.processingGuarantee}; exactly_once holds only under exactly_once`,
    ]);
  }
  requireSettled(driver, 'exactly-once');
  const index = new RunIndex(driver);
  const problems = new ProblemList('exactly-once');
  for (const o of index.outcomes) {
    checkOutcome(o, 'forbidden', problems);
    const hops = new Map<string, string[]>();
    for (const copy of o.tierCopies) {
      // Each step of a chain counts its own attempts.
      const step = copy.headers[WEIR_HEADERS.step] ?? '';
      const attempt = `${copy.headers[WEIR_HEADERS.attempts] ?? '?'}${step === '' ? '' : ` of '${step}'`}`;
      hops.set(attempt, [...(hops.get(attempt) ?? []), coordinates(copy)]);
    }
    for (const [attempt, copies] of hops)
      if (copies.length > 1)
        problems.add(
          `${describeInput(o.input)}: the retry hop after attempt ${attempt} was written ${copies.length} times: ${copies.join(', ')}`,
        );
  }
  for (const orphan of index.orphanOutputs)
    problems.add(`output ${coordinates(orphan)} comes from no piped input (its ${TEST_INPUT_HEADER} header is missing or unknown)`);
  problems.throwIfAny();
}

/**
 * Dedup: inputs with the same dedup key (the processor's `dedup.key`) yield a single outcome —
 * one of them reaches the sink or the DLQ, the others are skipped as duplicates. Assumes the
 * run is shorter than the dedup window (`ttlMs`).
 *
 * @throws InvariantViolation naming the dedup key and the inputs that each had an outcome
 */
export function dedup(driver: TopologyTestDriver): void {
  requireSettled(driver, 'dedup');
  const problems = new ProblemList('dedup');
  const index = new RunIndex(driver);
  const groups = new Map<string, InputOutcome[]>();
  for (const o of index.outcomes) {
    const policy = o.subtopology.processor.dedup;
    if (policy === null) continue;
    const raw = index.storedRecord(o.input.topic, o.input.partition, o.input.offset);
    const dedupKey = raw && prepareRecord(raw, o.subtopology.source, policy).dedupKey;
    if (dedupKey === null || dedupKey === undefined) continue;
    const k = `${o.subtopology.processor.name}\u0000${dedupKey}`;
    groups.set(k, [...(groups.get(k) ?? []), o]);
  }
  for (const [k, group] of groups) {
    const decided = group.filter(
      (o) => o.sinkOutputs.length + o.deadLetters.length > 0 || (o.final !== undefined && o.final.outcome !== 'duplicate'),
    );
    if (decided.length > 1)
      problems.add(
        `dedup key ${JSON.stringify(k.split('\u0000')[1])} of processor '${k.split('\u0000')[0]}' has ${decided.length} outcomes: ${decided.map((o) => describeInput(o.input)).join(', ')}`,
      );
  }
  problems.throwIfAny();
}

/**
 * The model check: every input with a {@link FailurePlan} ended as the plan and the
 * processor's retry policy say ({@link expectedOutcome}): in the sink after the first `ok`
 * attempt, or in the DLQ with the expected `weir.attempts` and `weir.error.class`.
 *
 * @param planOf the plan of an input (undefined: not checked), e.g. `(i) => i.value.plan`
 * @throws InvariantViolation naming each input that ended otherwise
 */
export function followsFailurePlans(driver: TopologyTestDriver, planOf: (input: PipedInput<any, any>) => FailurePlan | undefined): void {
  requireSettled(driver, 'failure-plan');
  const problems = new ProblemList('failure-plan');
  for (const o of new RunIndex(driver).outcomes) {
    const plan = planOf(o.input);
    if (plan === undefined) continue;
    const expected = expectedOutcome(plan, o.subtopology.processor.retry);
    const what = `${describeInput(o.input)} with plan [${plan.join(', ')}]`;
    const final = o.final;
    if (expected.outcome === 'success') {
      if (final?.outcome !== 'success' || final.attempt !== expected.attempts || o.deadLetters.length > 0) {
        problems.add(
          `${what} should succeed at attempt ${expected.attempts}, but ${final ? `ended as ${describeEvent(final)}` : 'has no outcome'}${o.deadLetters.length > 0 ? ` and has ${o.deadLetters.length} dead letter(s)` : ''}`,
        );
      }
    } else {
      const dl = o.deadLetters[o.deadLetters.length - 1];
      if (dl === undefined || dl.attempts !== expected.attempts || dl.errorClass !== expected.errorClass || o.sinkOutputs.length > 0) {
        problems.add(
          `${what} should be dead-lettered after ${expected.attempts} attempt(s) with ${expected.errorClass}, but ${dl ? `its dead letter says ${dl.attempts} attempt(s), ${dl.errorClass}` : 'it has no dead letter'}${o.sinkOutputs.length > 0 ? ` and it has ${o.sinkOutputs.length} sink output(s)` : ''}`,
        );
      }
    }
  }
  problems.throwIfAny();
}
