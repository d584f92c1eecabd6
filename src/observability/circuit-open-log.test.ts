import { describe, expect, it } from 'vitest';
import { captureLog } from './log-capture.test-support.js';
import type { CircuitTransition } from '../failure/circuit-breaker.js';
import { CircuitOpenLog, OPEN_SUMMARY_EVERY_MS } from './circuit-open-log.js';

const T0 = Date.UTC(2026, 11, 3);
const open = (atMs: number, from: CircuitTransition['from'], error = 'dependency answered 503'): CircuitTransition => ({
  processor: 'enrich',
  from,
  to: 'open',
  atMs,
  failureRate: 1,
  calls: 10,
  openForMs: 4_000,
  lastError: new Error(error),
});

describe('circuit breaker log during an outage', () => {
  it('a 2-minute outage with a failed probe every 4 s: the first opening in full, one summary a minute, then the close with the total', () => {
    const { logger, lines } = captureLog();
    const log = new CircuitOpenLog(logger);
    log.transition(open(T0, 'closed'));
    let t = T0;
    let probes = 0;
    while (t + 4_000 < T0 + 120_000) {
      t += 4_000;
      log.transition({ processor: 'enrich', from: 'open', to: 'half-open', atMs: t });
      log.transition(open(t, 'half-open', `probe ${++probes} failed`));
    }
    t += 4_000;
    log.transition({ processor: 'enrich', from: 'open', to: 'half-open', atMs: t });
    log.transition({ processor: 'enrich', from: 'half-open', to: 'closed', atMs: t, openedForMs: t - T0 });

    expect(probes).toBe(29);
    const warnings = lines.filter((l) => l['level'] === 40);
    expect(warnings.map((l) => l['msg'])).toEqual([
      "circuit breaker of 'enrich' opened: its tasks stop calling it for 4000 ms; records wait in place",
      "circuit breaker of 'enrich' still open: 15 failed probe(s) in the last 60 s, open for 60 s",
    ]);
    expect(warnings[0]).toMatchObject({ failureRate: 1, calls: 10, error: 'dependency answered 503' });
    expect(warnings[1]).toMatchObject({ failedProbes: 15, error: 'probe 15 failed', openedForMs: 60_000 });
    // 3 lines for 31 transitions; the 14 probes after the summary are counted in the close line.
    expect(lines.at(-1)).toMatchObject({
      level: 30,
      failedProbes: probes,
      msg: `circuit breaker of 'enrich' closed after ${120_000} ms (${probes} failed probe(s))`,
    });
    expect(lines.filter((l) => String(l['msg']).includes('half-open'))).toEqual([]);
  });

  it('a breaker that opens again after it closed starts a new spell with a full line', () => {
    const { logger, lines } = captureLog();
    const log = new CircuitOpenLog(logger);
    log.transition(open(T0, 'closed'));
    log.transition({ processor: 'enrich', from: 'half-open', to: 'closed', atMs: T0 + 4_000, openedForMs: 4_000 });
    log.transition(open(T0 + 5_000, 'closed'));
    expect(lines.map((l) => String(l['msg']).split(':')[0])).toEqual([
      "circuit breaker of 'enrich' opened",
      "circuit breaker of 'enrich' closed after 4000 ms (0 failed probe(s))",
      "circuit breaker of 'enrich' opened",
    ]);
    expect(OPEN_SUMMARY_EVERY_MS).toBe(60_000);
  });
});
