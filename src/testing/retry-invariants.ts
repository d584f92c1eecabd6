import { ERROR_TEXT_CAP_BYTES, WEIR_HEADERS, WEIR_HEADER_PREFIX, headerNumber } from '../record/weir-headers.js';
import { backoffDelayBounds } from '../failure/backoff.js';
import { tierIndexForRetry, type RetryPolicy } from '../failure/retry-policy.js';
import { RETRY_PATH_KEEP } from '../failure/retry-tier-record.js';
import { describeEvent, RunIndex } from './input-outcomes.js';
import { ProblemList } from './invariant-violation.js';
import { TEST_INPUT_HEADER, coordinates, describeInput, toTestOutput, type PipedInput, type TestOutput } from './test-records.js';
import type { TopologyTestDriver } from './topology-test-driver.js';
import { taskId } from '../record/task-id.js';

/** The retry policy of the step an event (or a copy, by its `weir.processor`) belongs to. */
const policyOf = (driver: TopologyTestDriver, topic: string, processor?: string): RetryPolicy | undefined =>
  driver.catalog.stepOf(topic, processor)?.processor.retry;

/**
 * Attempt bound: no record is attempted more than its processor's `retry.maxAttempts` times —
 * neither in any reported outcome nor in any dead letter's `weir.attempts`.
 *
 * @throws InvariantViolation naming each record over the bound
 */
export function attemptBound(driver: TopologyTestDriver): void {
  const problems = new ProblemList('attempt-bound');
  for (const event of driver.history.records) {
    const max = policyOf(driver, event.topic, event.processor)?.maxAttempts;
    if (max !== undefined && event.attempt > max) problems.add(`${describeEvent(event)}: attempt ${event.attempt} > maxAttempts ${max}`);
  }
  for (const dl of driver.deadLetters({ isolation: 'read_uncommitted' })) {
    const max = policyOf(driver, dl.original.topic, dl.processor)?.maxAttempts;
    if (max !== undefined && !(dl.attempts <= max))
      problems.add(
        `dead letter ${coordinates(dl)} (from ${coordinates(dl.original)}) says weir.attempts ${dl.attempts} > maxAttempts ${max}`,
      );
  }
  problems.throwIfAny();
}

function delayProblem(policy: RetryPolicy, attempt: number, delayMs: number): string | undefined {
  const retryIndex = attempt - 1;
  if (policy.mode === 'topics' && policy.explicitTiers) {
    const fixed = policy.tierDelaysMs[tierIndexForRetry(policy, retryIndex)];
    return delayMs === fixed ? undefined : `delay ${delayMs} ms is not tier ${tierIndexForRetry(policy, retryIndex)}'s fixed ${fixed} ms`;
  }
  const { min, max } = backoffDelayBounds(policy.backoff, retryIndex);
  return delayMs >= min && delayMs <= max
    ? undefined
    : `delay ${delayMs} ms is outside [${min}, ${max}] ms (retry ${retryIndex}, jitter '${policy.backoff.jitter}')`;
}

/**
 * Delays: every backoff delay lies within the policy's bounds for its retry, jitter included
 * (`backoffDelayBounds`; fixed tier delays for explicit tiers) — in the reported outcomes and
 * in every retry-tier copy (`weir.retry.due.ms − weir.last.failure.ms`) — and no record is
 * attempted before its delay is over (blocking: the next attempt; retry topics: the due time).
 * A batch re-run after an aborted transaction or a restart starts again at attempt 1: that is
 * not a retry, and not held to the earlier backoff.
 *
 * @throws InvariantViolation naming each record with a delay out of bounds or an early attempt
 */
export function delaysWithinPolicy(driver: TopologyTestDriver): void {
  const problems = new ProblemList('delays');
  const index = new RunIndex(driver);
  const events = driver.history.records;
  events.forEach((event, i) => {
    const policy = policyOf(driver, event.topic, event.processor);
    if (policy === undefined) return;
    if (event.outcome === 'retry') {
      const problem = event.delayMs === undefined ? 'no delay reported' : delayProblem(policy, event.attempt, event.delayMs);
      if (problem) problems.add(`${describeEvent(event)}: ${problem}`);
      if (policy.mode === 'blocking' && event.delayMs !== undefined) {
        // The record's next event in this task incarnation; a re-run after an aborted
        // transaction starts again at attempt 1 (and is not a retry).
        const next = events
          .slice(i + 1)
          .find((e) => e.instance === event.instance && e.offset === event.offset && e.processor === event.processor);
        if (next && next.attempt === event.attempt + 1 && next.atMs < event.atMs + event.delayMs)
          problems.add(
            `${describeEvent(next)} came ${event.atMs + event.delayMs - next.atMs} ms before its backoff of ${event.delayMs} ms was over`,
          );
      }
    }
    if (driver.catalog.get(event.topic)?.role === 'retry-tier') {
      const stored = index.storedRecord(event.topic, event.partition, event.offset);
      const due = stored && headerNumber(stored.headers, WEIR_HEADERS.retryDueMs);
      if (due !== undefined && event.atMs < due)
        problems.add(`${describeEvent(event)} is ${due - event.atMs} ms before the record's due time ${new Date(due).toISOString()}`);
    }
  });
  for (const info of driver.catalog.withRole('retry-tier')) {
    const policy = info.step.processor.retry;
    for (const copy of driver.readOutput(info.topic, { isolation: 'read_uncommitted' })) {
      const due = numberHeader(copy, WEIR_HEADERS.retryDueMs);
      const failed = numberHeader(copy, WEIR_HEADERS.lastFailureMs);
      const attempts = numberHeader(copy, WEIR_HEADERS.attempts);
      if (due === undefined || failed === undefined || attempts === undefined) {
        problems.add(
          `retry-tier copy ${coordinates(copy)} lacks ${WEIR_HEADERS.retryDueMs}, ${WEIR_HEADERS.lastFailureMs} or ${WEIR_HEADERS.attempts}`,
        );
        continue;
      }
      const problem = delayProblem(policy, attempts, due - failed);
      if (problem) problems.add(`retry-tier copy ${coordinates(copy)} (after attempt ${attempts}): ${problem}`);
    }
  }
  problems.throwIfAny();
}

function numberHeader(record: TestOutput, name: string): number | undefined {
  const text = record.headers[name];
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Order: in blocking mode, and in retry-topic mode with `order: 'key'` (the failed record waits
 * at its task, its key's later records behind it), successes keep per-key order. For each input partition and key, the
 * outputs in each sink partition (read_committed) appear in input-offset order. Under
 * at_least_once a restarted task (crash, rebalance) replays from the committed offset, and a
 * failed produce is sent again, so the sequence may start over once per restart or failed
 * produce of that partition's task — each stretch in order;
 * under exactly_once a replay is never visible, so there is one stretch. Retry-topic processors
 * without `order: 'key'` are skipped: they trade order for throughput.
 *
 * @throws InvariantViolation naming the key, the inputs out of order and where their outputs are
 */
export function perKeyOrder(driver: TopologyTestDriver): void {
  const problems = new ProblemList('order');
  const exactlyOnce = driver.topology.processingGuarantee === 'exactly_once';
  const history = driver.history;
  // Under at_least_once each restart, and each failed produce (sent again), may replay a stretch.
  const restarts = (input: PipedInput): number => {
    if (exactlyOnce) return 0;
    const task = taskId(input);
    return (
      history.restarts.filter((r) => r.task === task).length +
      history.portErrors.filter((e) => e.task === task && e.port === 'produce').length
    );
  };
  for (const info of driver.catalog.withRole('sink')) {
    // Retry topics let a key's records overtake each other, unless the chain keeps key order.
    if (info.subtopology.steps.some((step) => step.processor.retry.mode !== 'blocking' && step.processor.retry.order !== 'key')) continue;
    const last = new Map<string, { input: PipedInput; output: TestOutput; stretches: number }>();
    for (const output of driver.readOutput(info.topic)) {
      const input = output.input === undefined ? undefined : driver.inputs[output.input];
      if (input === undefined || input.topic !== info.subtopology.source.topic) continue;
      const k = `${input.partition}\u0000${input.rawKey?.toString('base64') ?? ''}\u0000${output.partition}`;
      const before = last.get(k);
      let stretches = before?.stretches ?? 1;
      if (before !== undefined && before.input.offset >= input.offset) {
        stretches++;
        if (stretches > restarts(input) + 1) {
          const why = exactlyOnce ? 'under exactly_once' : `its task restarted or re-sent only ${restarts(input)} time(s)`;
          problems.add(
            `${describeInput(input)} reached ${coordinates(output)} after ${describeInput(before.input)} reached ${coordinates(before.output)}: per-key order broken (${why})`,
          );
        }
      }
      last.set(k, { input, output, stretches });
    }
  }
  problems.throwIfAny();
}

const KNOWN_WEIR_HEADERS = new Set<string>(Object.values(WEIR_HEADERS));
/** Most bytes of weir's headers other than the error message and stack (names included). */
const WEIR_HEADER_BUDGET_BYTES = 2_048 + RETRY_PATH_KEEP * 250;

/**
 * Headers: DLQ and retry-tier copies carry the input's own headers unchanged, no header more
 * than once, only known `weir.*` headers, error texts within their cap and a retry path of at
 * most `RETRY_PATH_KEEP` hops — so headers never grow with hops or replays.
 *
 * @throws InvariantViolation naming each record whose headers grew
 */
export function headersBounded(driver: TopologyTestDriver): void {
  const problems = new ProblemList('headers');
  const copies = [...driver.catalog.withRole('dead-letter'), ...driver.catalog.withRole('retry-tier')].flatMap((info) =>
    driver.kafka.readAll(info.topic, 'read_uncommitted').map((r) => toTestOutput(r, undefined)),
  );
  for (const copy of copies) {
    const where = `${coordinates(copy)}${copy.input !== undefined ? ` (input #${copy.input})` : ''}`;
    const input = copy.input === undefined ? undefined : driver.inputs[copy.input];
    let weirBytes = 0;
    for (const [name, value] of Object.entries(copy.headers)) {
      if ((copy.headerCounts[name] ?? 1) > 1) problems.add(`${where}: header '${name}' appears ${copy.headerCounts[name]} times`);
      if (!name.startsWith(WEIR_HEADER_PREFIX)) continue;
      if (!KNOWN_WEIR_HEADERS.has(name)) problems.add(`${where}: unknown weir header '${name}'`);
      const bytes = Buffer.byteLength(value);
      if ((name === WEIR_HEADERS.errorMessage || name === WEIR_HEADERS.errorStack) && bytes > ERROR_TEXT_CAP_BYTES)
        problems.add(`${where}: '${name}' is ${bytes} bytes, over the ${ERROR_TEXT_CAP_BYTES}-byte cap`);
      else if (name !== WEIR_HEADERS.errorMessage && name !== WEIR_HEADERS.errorStack) weirBytes += Buffer.byteLength(name) + bytes;
    }
    const path = copy.headers[WEIR_HEADERS.retryPath];
    if (path !== undefined && path.split('>').length > RETRY_PATH_KEEP)
      problems.add(`${where}: '${WEIR_HEADERS.retryPath}' has ${path.split('>').length} hops, more than ${RETRY_PATH_KEEP}`);
    if (weirBytes > WEIR_HEADER_BUDGET_BYTES)
      problems.add(`${where}: weir headers take ${weirBytes} bytes, over ${WEIR_HEADER_BUDGET_BYTES}`);
    // A chain step's copy carries its input's headers: an earlier step may have added some.
    if (input !== undefined && copy.headers[WEIR_HEADERS.step] === undefined) {
      const own = Object.keys(copy.headers).filter((n) => !n.startsWith(WEIR_HEADER_PREFIX) && n !== TEST_INPUT_HEADER);
      const changed = own.filter((n) => copy.headers[n] !== input.headers[n]);
      const missing = Object.keys(input.headers).filter((n) => !n.startsWith(WEIR_HEADER_PREFIX) && copy.headers[n] === undefined);
      if (changed.length + missing.length > 0)
        problems.add(`${where}: the input's own headers changed (${[...changed, ...missing].map((n) => `'${n}'`).join(', ')})`);
    }
  }
  problems.throwIfAny();
}
