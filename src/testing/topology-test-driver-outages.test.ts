import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee, type ProcessOptions } from '../index.js';
import { ManualClock } from './manual-clock.js';
import { TopologyTestDriver } from './topology-test-driver.js';

/** A processor whose dependency is down while `state.down`; it counts its calls. */
function dependent(state: { down: boolean; calls: number }, options: ProcessOptions, guarantee: ProcessingGuarantee = 'at_least_once') {
  return topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', 'json')
    .process(
      'p',
      (r) => {
        state.calls++;
        if (state.down) throw new Error('dependency down');
        return r.value;
      },
      options,
    )
    .branch({ success: sink('out'), dlq: sink('dlq') });
}

const breakerOptions: ProcessOptions = {
  retry: { maxAttempts: 3, backoff: { initialMs: 10, jitter: 'none' } },
  circuitBreaker: { minimumCalls: 2, failureRateThreshold: 1, openMs: 1_000, maxOpenMs: 4_000 },
};

describe('TopologyTestDriver: outages', () => {
  it('under exactly_once, a task commits what is done before it waits on an open breaker', async () => {
    const state = { down: false, calls: 0 };
    // Record 4 fails its 3 attempts: 3 failures of 6 calls in the window reach the 0.5 threshold on its last attempt.
    const options = { ...breakerOptions, circuitBreaker: { ...breakerOptions.circuitBreaker, failureRateThreshold: 0.5 } };
    const driver = new TopologyTestDriver(dependent(state, options, 'exactly_once'));
    await driver.pipeInput(
      'in',
      [1, 2, 3].map((n) => ({ key: `k${n}`, value: { n } })),
    );
    state.down = true;
    await driver.pipeInput(
      'in',
      [4, 5].map((n) => ({ key: `k${n}`, value: { n } })),
    );
    await driver.advanceTime(100);
    expect(driver.resilience.forProcessor('p')?.breaker?.state).toBe('open');
    // The three done before the outage are committed (read_committed) while the task waits.
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(driver.committedOffset('in', 0)).toBe(3);
    expect(driver.taskStatus()[0]?.next).toMatchObject({ kind: 'wait', reason: 'circuit-open' });
    const callsWhileOpen = state.calls;
    await driver.advanceTime(900);
    expect(state.calls).toBe(callsWhileOpen);
    state.down = false;
    await driver.drain();
    expect(driver.readOutput('out')).toHaveLength(5);
    expect(driver.deadLetters()).toEqual([]);
    expect(driver.history.circuitTransitions.map((t) => t.to)).toEqual(['open', 'half-open', 'closed']);
  });

  it('a failed probe reopens with the wait doubled; a record is held at most maxAttempts times, then charged again', async () => {
    const state = { down: true, calls: 0 };
    const clock = new ManualClock();
    const driver = new TopologyTestDriver(dependent(state, breakerOptions), { clock });
    await driver.pipeInput('in', { key: 'k', value: { n: 1 } });
    await driver.advanceTime(8_000); // it opens at 10 ms; the probes at about 1 s, 3 s and 7 s all fail
    const opens = driver.history.circuitTransitions.filter((t) => t.to === 'open');
    expect(opens.map((t) => t.openForMs)).toEqual([1_000, 2_000, 4_000, 4_000]);
    const events = driver.history.records.map((e) => [e.outcome, e.attempt]);
    // Attempt 1 fails (a retry), attempt 2 opens the breaker (held), the next two probes are
    // attempt 2 again (held: 3 holds = maxAttempts), and the third probe is charged: attempt 2 is spent.
    expect(events).toEqual([
      ['retry', 1],
      ['held', 2],
      ['held', 2],
      ['held', 2],
      ['retry', 2],
    ]);
    state.down = false;
    await driver.drain();
    expect(driver.readOutput('out')).toHaveLength(1);
    expect(driver.history.records.at(-1)).toMatchObject({ outcome: 'success', attempt: 3 });
  });

  it('a record that fails on its own cannot hold the breaker open forever: it reaches the DLQ and the records behind it go on', async () => {
    const calls: string[] = [];
    const t = topology({ applicationId: 'app', commitIntervalMs: 100 })
      .source('in', 'json')
      .process(
        'p',
        (r) => {
          const { id, poison } = r.value as { id: string; poison?: boolean };
          calls.push(id);
          if (poison) throw new Error('bug');
          return { id };
        },
        { ...breakerOptions, circuitBreaker: { minimumCalls: 2, failureRateThreshold: 0.5, openMs: 1_000, maxOpenMs: 4_000 } },
      )
      .branch({ success: sink('out'), dlq: sink('dlq') });
    const driver = new TopologyTestDriver(t);
    const values: Array<{ id: string; poison?: boolean }> = [{ id: 'bad', poison: true }, { id: 'a' }, { id: 'b' }, { id: 'c' }];
    await driver.pipeInput(
      'in',
      values.map((value) => ({ key: 'k', value })),
    );
    await driver.drain({ maxMs: 3_600_000 });
    expect(driver.deadLetters().map((d) => [d.value, d.attempts])).toEqual([[{ id: 'bad', poison: true }, 3]]);
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    // 3 free holds (maxAttempts) plus 3 charged attempts, then the records behind it.
    expect(calls.filter((id) => id === 'bad').length).toBeLessThanOrEqual(6);
    expect(driver.history.circuitTransitions.at(-1)?.to).toBe('closed');
  });

  it('a retry that finds the budget spent waits for a token instead of running or dead-lettering', async () => {
    const state = { down: true, calls: 0 };
    const options: ProcessOptions = {
      retry: { maxAttempts: 2, backoff: { initialMs: 0, jitter: 'none' } },
      retryBudget: { ratio: 0, minPerSecond: 0.1 },
    };
    const driver = new TopologyTestDriver(dependent(state, options), { partitions: 2 });
    await driver.pipeInput('in', [
      { key: 'a', value: { n: 1 }, partition: 0 },
      { key: 'b', value: { n: 2 }, partition: 1 },
    ]);
    // One retry per 10 s window: one partition's retry runs, the other's waits for the slot to expire.
    expect(driver.history.retriesDelayed).toBe(1);
    expect(
      driver
        .taskStatus()
        .map((s) => (s.next.kind === 'wait' ? s.next.reason : s.next.kind))
        .sort(),
    ).toEqual(['commit', 'retry-budget']);
    state.down = false;
    await driver.drain();
    expect(driver.deadLetters().map((d) => d.value)).toEqual([{ n: 1 }]);
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ n: 2 }]);
    expect(driver.now() - Date.UTC(2024, 0, 1)).toBe(11_000);
  });

  it('times out an attempt at timeoutMs of virtual time and aborts ctx.signal with an AttemptTimeoutError', async () => {
    const reasons: unknown[] = [];
    const t = topology({ applicationId: 'app' })
      .source('in', 'json')
      .process(
        'p',
        (r, ctx) =>
          ctx.attempt === 1
            ? new Promise((_, reject) =>
                ctx.signal.addEventListener('abort', () => (reasons.push(ctx.signal.reason), reject(ctx.signal.reason))),
              )
            : r.value,
        { timeoutMs: 5_000, retry: { backoff: { initialMs: 0, jitter: 'none' } } },
      )
      .branch({ success: sink('out') });
    const driver = new TopologyTestDriver(t);
    await driver.pipeInput('in', { key: 'k', value: { n: 1 } });
    await driver.drain();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ name: 'AttemptTimeoutError', code: 'WEIR_ATTEMPT_TIMEOUT', retriable: true, timeoutMs: 5_000 });
    expect(driver.history.records.map((e) => [e.outcome, e.attempt, e.errorClass])).toEqual([
      ['retry', 1, 'AttemptTimeoutError'],
      ['success', 2, undefined],
    ]);
    expect(driver.now() - Date.UTC(2024, 0, 1)).toBeGreaterThanOrEqual(5_000);
  });
});
