import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RebalanceStalledError } from '../errors.js';
import type { AssignedTasks } from './assigned-tasks.js';
import { ConsumerRestart } from './consumer-restart.js';
import type { MemberConsumer } from './member-consumer.js';
import { ManualClock } from '../testing/manual-clock.js';
import { rebalanceDeadlineMs } from './rebalance-watchdog.js';

const SESSION_MS = 10_000;

/** The wait the pending backoff timer has left on `clock`, ms; undefined when none is pending. */
function backoffLeft(clock: ManualClock): number | undefined {
  const at = clock.nextTimerAt();
  return at === undefined ? undefined : at - clock.now();
}

/** Lets every settled promise run its continuations. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A restart on fakes: each `startWithin` answers with the next of `starts` (a consumer that
 * joined in time, or not) and may report a crash of the consumer it starts; `calls` records
 * what the restart asked of the tasks and the membership, in order.
 */
function restartOn(starts: Array<'joined' | 'late' | 'crashed'>) {
  const calls: string[] = [];
  const warnings: unknown[] = [];
  let stopping = false;
  const clock = new ManualClock(0);
  const tasks = {
    closeAll: async (mode: string) => {
      calls.push(`closeAll ${mode}`);
    },
  } as unknown as AssignedTasks;
  const membership = {
    stopWithin: async (ms: number) => {
      calls.push(`stopWithin ${ms}`);
    },
    startWithin: async (ms: number) => {
      calls.push(`startWithin ${ms}`);
      const next = starts.shift() ?? 'joined';
      if (next === 'crashed') restart.startFailed(new Error('join failed: coordinator not available'));
      return next !== 'late';
    },
  } as unknown as MemberConsumer;
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
  const restart = new ConsumerRestart({
    tasks: () => tasks,
    membership: () => membership,
    sessionTimeoutMs: SESSION_MS,
    logger,
    shuttingDown: () => stopping,
    clock,
  });
  /** Runs the pending backoff timer. */
  const fire = (): void => clock.set(clock.nextTimerAt() ?? Number.NaN);
  return { restart, calls, warnings, clock, fire, stop: () => (stopping = true) };
}

describe('ConsumerRestart', () => {
  it('closes the tasks, gives the old consumer a session timeout to stop, and starts one that must join by the rebalance deadline', async () => {
    const { restart, calls, clock } = restartOn(['joined']);
    restart.begin();
    expect(restart.underway).toBe(true);
    await settle();
    expect(calls).toEqual(['closeAll close', `stopWithin ${SESSION_MS}`, `startWithin ${rebalanceDeadlineMs(SESSION_MS)}`]);
    expect(restart.underway).toBe(false);
    expect(backoffLeft(clock)).toBeUndefined();
  });

  it('starts another consumer after a backoff when the new one crashes while joining, and another when one does not join in time', async () => {
    const { restart, calls, warnings, clock, fire } = restartOn(['crashed', 'late', 'joined']);
    restart.begin();
    await settle();
    // The crashed one: its tasks (none started) close, it is stopped, and the restart waits 1 s.
    expect(calls.slice(3)).toEqual(['closeAll close', `stopWithin ${SESSION_MS}`]);
    expect(backoffLeft(clock)).toBe(1_000);
    expect(restart.underway).toBe(true);
    fire();
    await settle();
    // The late one is given up as stalled, and the backoff doubles.
    expect(backoffLeft(clock)).toBe(2_000);
    const errors = warnings.map((w) => (w as { err?: { type?: string; message?: string } }).err);
    expect(errors[0]?.message).toContain('coordinator not available');
    expect(errors[1]?.type).toBe(RebalanceStalledError.name);
    fire();
    await settle();
    expect(calls.filter((c) => c.startsWith('startWithin'))).toHaveLength(3);
    expect(restart.underway).toBe(false);
  });

  it('starts no further consumer once a shutdown began, and a shutdown ends the backoff at once', async () => {
    const { restart, calls, clock, stop } = restartOn(['crashed', 'joined']);
    restart.begin();
    await settle();
    expect(backoffLeft(clock)).toBe(1_000);
    stop();
    restart.interrupt();
    await settle();
    expect(backoffLeft(clock)).toBeUndefined();
    expect(calls.filter((c) => c.startsWith('startWithin'))).toHaveLength(1);
    expect(restart.underway).toBe(false);
  });

  it('starts one restart at a time', async () => {
    const { restart, calls } = restartOn(['joined']);
    restart.begin();
    restart.begin();
    await settle();
    expect(calls.filter((c) => c.startsWith('closeAll'))).toHaveLength(1);
  });
});
