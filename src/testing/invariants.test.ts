import { describe, expect, it } from 'vitest';
import { sink, topology, WEIR_HEADERS, type ProcessingGuarantee, type ProcessorFn, type ProcessOptions } from '../index.js';
import { plannedProcessor, type PlannedValue } from './failure-plan.js';
import { invariants } from './invariants.js';
import { InvariantViolation } from './invariant-violation.js';
import { TEST_INPUT_HEADER } from './test-records.js';
import { TopologyTestDriver } from './topology-test-driver.js';

function driverFor(fn: ProcessorFn<any, any, any>, options: ProcessOptions = {}, guarantee: ProcessingGuarantee = 'at_least_once') {
  return new TopologyTestDriver(
    topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
      .source('in', 'json')
      .process('p', fn, options)
      .branch({ success: sink('out'), dlq: sink('dlq') }),
  );
}

/** Appends a record straight to a topic of the in-memory broker (tampering, to prove a checker bites). */
async function tamper(driver: TopologyTestDriver, topic: string, headers: Record<string, string | string[]>, value = '{}') {
  await driver.kafka.producer().send([{ topic, key: Buffer.from('k'), value: Buffer.from(value), headers, partition: 0 }]);
}

const violation = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvariantViolation);
    return (error as Error).message;
  }
  throw new Error('expected an InvariantViolation');
};

describe('invariants', () => {
  it('hold on a clean run', async () => {
    const driver = driverFor(plannedProcessor(), { retry: { maxAttempts: 3, backoff: { initialMs: 10, jitter: 'full' } } }, 'exactly_once');
    await driver.pipeInput('in', [
      { key: 'a', value: { id: 'a', plan: ['retriable'] } },
      { key: 'a', value: { id: 'b', plan: ['non-retriable'] } },
    ]);
    await driver.drain();
    expect(() => invariants.all(driver, { planOf: (i) => (i.value as PlannedValue).plan })).not.toThrow();
  });

  it('conservation: refuses an unsettled run, and names a duplicated input', async () => {
    const driver = driverFor(plannedProcessor(), { retry: { maxAttempts: 3, backoff: { initialMs: 1_000, jitter: 'none' } } });
    await driver.pipeInput('in', { key: 'a', value: { id: 'a', plan: ['retriable'] } });
    expect(violation(() => invariants.conservation(driver))).toMatch(
      /not settled: task in-0#1 waits \(backoff\) until 2024-01-01T00:00:01.000Z — call drain\(\)/,
    );
    const dup = driverFor((r) => r.value);
    dup.crashAt('after-produce');
    await dup.pipeInput('in', { key: 'k1', value: { n: 1 } });
    await dup.drain();
    expect(violation(() => invariants.conservation(dup))).toContain(
      'input #0 (in/0@0, key "k1") has 2 sink outputs (out/0@0, out/0@1) but its success produced 1: duplicated output',
    );
    expect(() => invariants.conservation(dup, { duplicates: 'allowed' })).not.toThrow();
  });

  it('conservation and exactly_once: an output that cannot be traced to its input is an orphan, its input lost', async () => {
    const driver = driverFor((r, ctx) => ctx.forward({ value: r.value, headers: { [TEST_INPUT_HEADER]: 'gone' } }), {}, 'exactly_once');
    await driver.pipeInput('in', { key: 'k1', value: { n: 1 } });
    await driver.drain();
    expect(violation(() => invariants.conservation(driver))).toContain(
      'input #0 (in/0@0, key "k1") was lost: it ended as success at attempt 1 of in/0@0 in in-0#1',
    );
    expect(violation(() => invariants.exactlyOnce(driver))).toContain('output out/0@0 comes from no piped input');
    expect(violation(() => invariants.exactlyOnce(driverFor((r) => r.value)))).toContain(
      'the topology runs processing.guarantee at_least_once',
    );
  });

  it('attempt bound: names a dead letter over maxAttempts', async () => {
    const driver = driverFor((r) => r.value, { retry: { maxAttempts: 2 } });
    await tamper(driver, 'dlq', {
      [WEIR_HEADERS.attempts]: '7',
      [WEIR_HEADERS.originalTopic]: 'in',
      [WEIR_HEADERS.originalPartition]: '0',
      [WEIR_HEADERS.originalOffset]: '9',
    });
    expect(violation(() => invariants.attemptBound(driver))).toContain(
      'dead letter dlq/0@0 (from in/0@9) says weir.attempts 7 > maxAttempts 2',
    );
  });

  it('delays: names a retry-tier copy whose delay is out of the policy bounds', async () => {
    const driver = driverFor((r) => r.value, {
      retry: { mode: 'topics', maxAttempts: 3, backoff: { initialMs: 1_000, multiplier: 2, jitter: 'equal' } },
    });
    await tamper(driver, 'app.p.retry.0', {
      [WEIR_HEADERS.attempts]: '1',
      [WEIR_HEADERS.lastFailureMs]: '1000',
      [WEIR_HEADERS.retryDueMs]: '1300',
    });
    expect(violation(() => invariants.delaysWithinPolicy(driver))).toContain(
      "retry-tier copy app.p.retry.0/0@0 (after attempt 1): delay 300 ms is outside [500, 1000] ms (retry 0, jitter 'equal')",
    );
  });

  it('order: names inputs whose outputs overtook each other', async () => {
    const driver = driverFor((r) => ((r.value as { skip?: boolean }).skip ? undefined : r.value));
    await driver.pipeInput('in', [
      { key: 'k', value: { n: 0, skip: true } },
      { key: 'k', value: { n: 1 } },
    ]);
    await tamper(driver, 'out', { [TEST_INPUT_HEADER]: '0' }); // input #0's output, late
    await driver.drain();
    expect(violation(() => invariants.perKeyOrder(driver))).toContain(
      'input #0 (in/0@0, key "k") reached out/0@1 after input #1 (in/0@1, key "k") reached out/0@0: per-key order broken',
    );
  });

  it('dedup: names a dedup key with two outcomes (the store was down under skip-dedup)', async () => {
    const dedup = {
      key: (r: { value: unknown }) => (r.value as { id: string }).id,
      ttlMs: 60_000,
      store: 'memory' as const,
      onStoreError: 'skip-dedup' as const,
    };
    const driver = driverFor((r) => r.value, { dedup });
    await driver.pipeInput('in', { key: 'a', value: { id: 'x' } });
    await driver.advanceTime(1_000);
    driver.setDedupStoreDown(true);
    await driver.pipeInput('in', { key: 'a', value: { id: 'x' } });
    driver.setDedupStoreDown(false);
    await driver.drain();
    expect(violation(() => invariants.dedup(driver))).toContain(
      `dedup key "x" of processor 'p' has 2 outcomes: input #0 (in/0@0, key "a"), input #1 (in/0@1, key "a")`,
    );
  });

  it('headers: names a copy with a repeated header or an unknown weir header', async () => {
    const driver = driverFor((r) => r.value);
    await tamper(driver, 'dlq', { trace: ['a', 'b'], 'weir.made.up': '1' });
    const message = violation(() => invariants.headersBounded(driver));
    expect(message).toContain("dlq/0@0: header 'trace' appears 2 times");
    expect(message).toContain("dlq/0@0: unknown weir header 'weir.made.up'");
  });

  it('failure plans: names an input that ended otherwise than its plan says', async () => {
    const driver = driverFor(plannedProcessor(), { retry: { maxAttempts: 2, backoff: { initialMs: 10 } } });
    await driver.pipeInput('in', { key: 'a', value: { id: 'a', plan: [] } });
    await driver.drain();
    expect(violation(() => invariants.followsFailurePlans(driver, () => ['retriable', 'retriable']))).toContain(
      'input #0 (in/0@0, key "a") with plan [retriable, retriable] should be dead-lettered after 2 attempt(s) with PlannedFailure, but it has no dead letter and it has 1 sink output(s)',
    );
  });
});
