import { describe, expect, it } from 'vitest';
import { CircuitBreaker, HALF_OPEN_RECHECK_MS, type CircuitTransition } from './circuit-breaker.js';
import { CIRCUIT_BREAKER_DEFAULTS, type CircuitBreakerPolicy } from './circuit-breaker-policy.js';

const T0 = 1_000_000;

function breaker(policy: Partial<CircuitBreakerPolicy> = {}) {
  const transitions: CircuitTransition[] = [];
  const b = new CircuitBreaker('p', { ...CIRCUIT_BREAKER_DEFAULTS, minimumCalls: 4, openMs: 1_000, maxOpenMs: 3_000, ...policy }, (t) =>
    transitions.push(t),
  );
  return { b, transitions };
}

/** Calls through the breaker at `now` with `result`; returns what record() answered, or 'refused'. */
function call(b: CircuitBreaker, now: number, result: 'success' | 'failure' | 'ignored'): 'held' | 'counted' | 'refused' {
  const permit = b.acquire(now);
  if (permit.kind === 'wait') return 'refused';
  return b.record(now, result, permit.probe, new Error(`boom at ${now}`));
}

describe('CircuitBreaker', () => {
  it('opens when the failure rate over at least minimumCalls reaches the threshold, and holds the failure that opened it', () => {
    const { b, transitions } = breaker({ failureRateThreshold: 0.5 });
    expect(call(b, T0, 'success')).toBe('counted');
    expect(call(b, T0 + 1, 'failure')).toBe('counted');
    expect(call(b, T0 + 2, 'success')).toBe('counted');
    expect(b.state).toBe('closed');
    expect(call(b, T0 + 3, 'failure')).toBe('held'); // 2 of 4 = 0.5
    expect(b.state).toBe('open');
    expect(transitions).toEqual([
      expect.objectContaining({ from: 'closed', to: 'open', atMs: T0 + 3, failureRate: 0.5, calls: 4, openForMs: 1_000 }),
    ]);
    expect((transitions[0]?.lastError as Error).message).toBe(`boom at ${T0 + 3}`);
  });

  it('only retriable failures count: ignored outcomes neither fail nor succeed', () => {
    const { b } = breaker({ failureRateThreshold: 1 });
    for (let i = 0; i < 10; i++) expect(call(b, T0 + i, 'ignored')).toBe('counted');
    expect(b.state).toBe('closed');
    for (let i = 0; i < 3; i++) call(b, T0 + 20 + i, 'failure');
    expect(b.state).toBe('closed'); // 3 calls < minimumCalls 4: ignored ones were not counted
    call(b, T0 + 30, 'failure');
    expect(b.state).toBe('open');
  });

  it('forgets calls older than the window', () => {
    const { b } = breaker({ windowMs: 1_000, failureRateThreshold: 1 });
    for (let i = 0; i < 3; i++) call(b, T0 + i, 'failure');
    call(b, T0 + 5_000, 'failure');
    expect(b.state).toBe('closed');
  });

  it('refuses every call while open, goes half-open after openMs and closes when the probe succeeds', () => {
    const { b, transitions } = breaker();
    for (let i = 0; i < 4; i++) call(b, T0, 'failure');
    expect(b.acquire(T0 + 999)).toEqual({ kind: 'wait', untilMs: T0 + 1_000 });
    expect(b.reopensAt).toBe(T0 + 1_000);
    const probe = b.acquire(T0 + 1_000);
    expect(probe).toEqual({ kind: 'call', probe: true });
    expect(b.state).toBe('half-open');
    expect(b.acquire(T0 + 1_001)).toEqual({ kind: 'wait', untilMs: T0 + 1_001 + HALF_OPEN_RECHECK_MS }); // one probe at a time
    expect(b.record(T0 + 1_010, 'success', true)).toBe('counted');
    expect(b.state).toBe('closed');
    expect(transitions.map((t) => t.to)).toEqual(['open', 'half-open', 'closed']);
    expect(transitions[2]?.openedForMs).toBe(1_010);
  });

  it('a failed probe is held and reopens the breaker with the wait doubled, up to maxOpenMs; a close resets the wait', () => {
    const { b, transitions } = breaker();
    for (let i = 0; i < 4; i++) call(b, T0, 'failure');
    let now = T0;
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const until = b.reopensAt ?? 0;
      waits.push(until - now);
      now = until;
      expect(call(b, now, 'failure')).toBe('held');
    }
    expect(waits).toEqual([1_000, 2_000, 3_000, 3_000]);
    now = b.reopensAt ?? 0;
    expect(call(b, now, 'success')).toBe('counted');
    expect(transitions[transitions.length - 1]).toMatchObject({ to: 'closed', openedForMs: now - T0 });
    for (let i = 0; i < 4; i++) call(b, now + 1, 'failure');
    expect((b.reopensAt ?? 0) - (now + 1)).toBe(1_000);
  });

  it('judges halfOpenCalls probes together, and an ignored probe gives its permit back', () => {
    const { b } = breaker({ halfOpenCalls: 2, failureRateThreshold: 0.5 });
    for (let i = 0; i < 4; i++) call(b, T0, 'failure');
    const at = T0 + 1_000;
    const first = b.acquire(at);
    const second = b.acquire(at);
    expect([first.kind, second.kind, b.acquire(at).kind]).toEqual(['call', 'call', 'wait']);
    expect(b.record(at, 'ignored', true)).toBe('counted');
    const third = b.acquire(at);
    expect(third).toEqual({ kind: 'call', probe: true });
    expect(b.record(at, 'success', true)).toBe('counted');
    expect(b.state).toBe('half-open');
    expect(b.record(at, 'failure', true)).toBe('held'); // 1 of 2 = 0.5 ≥ threshold
    expect(b.state).toBe('open');
  });

  it('a probe whose task never answers is taken as lost after the open wait, so the breaker cannot stick', () => {
    const { b } = breaker();
    for (let i = 0; i < 4; i++) call(b, T0, 'failure');
    expect(b.acquire(T0 + 1_000).kind).toBe('call'); // never recorded: the task crashed
    expect(b.acquire(T0 + 1_500).kind).toBe('wait');
    expect(b.acquire(T0 + 2_000)).toEqual({ kind: 'call', probe: true });
  });

  it('a late failure of a call allowed before the breaker opened is held, a late success ignored', () => {
    const { b } = breaker();
    const late = b.acquire(T0);
    for (let i = 0; i < 4; i++) call(b, T0, 'failure');
    expect(late.kind === 'call' && b.record(T0 + 1, 'failure', late.probe)).toBe('held');
    expect(b.record(T0 + 2, 'success', false)).toBe('counted');
    expect(b.state).toBe('open');
  });
});
