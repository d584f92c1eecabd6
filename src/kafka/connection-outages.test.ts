import { describe, expect, it } from 'vitest';
import { captureLog } from '../observability/log-capture.test-support.js';
import { ConnectionOutages, UNKNOWN_BROKER } from './connection-outages.js';

/** An outage tracker on a manual clock, and the messages it logged. */
function setup() {
  let now = 0;
  const { logger, lines } = captureLog('info');
  const outages = new ConnectionOutages(logger, 'kafkajs', { connectionWarnIntervalMs: 10_000, now: () => now });
  return { outages, lines, advance: (ms: number) => (now += ms) };
}

describe('ConnectionOutages', () => {
  it.each([
    ['the broker first, then errors that name none', ['127.0.0.1:9092', UNKNOWN_BROKER, UNKNOWN_BROKER]],
    ['an error that names none first, then the broker', [UNKNOWN_BROKER, '127.0.0.1:9092', '127.0.0.1:9092']],
  ])('one outage of one broker is one warning, %s', (_, brokers) => {
    const { outages, lines, advance } = setup();
    for (const broker of brokers) {
      outages.failed(broker, 'ECONNREFUSED');
      advance(1_000);
    }
    expect(lines.map((l) => l['msg'])).toEqual(['kafka broker unreachable; kafkajs retries']);
    advance(10_000);
    outages.failed(UNKNOWN_BROKER, 'ECONNREFUSED');
    expect(lines.at(-1)).toMatchObject({ msg: 'kafka broker still unreachable; kafkajs retries', errors: 3 });
    outages.recovered('127.0.0.1:9092');
    expect(lines.at(-1)).toMatchObject({ msg: 'kafka broker connection is back', broker: '127.0.0.1:9092', errors: 4 });
    expect(outages.open).toBe(false);
  });

  it('a second broker that fails during the outage of the first gets its own warning', () => {
    const { outages, lines } = setup();
    outages.failed('127.0.0.1:9092', 'ECONNREFUSED');
    outages.failed('127.0.0.1:9093', 'ECONNREFUSED');
    expect(lines.map((l) => l['broker'])).toEqual(['127.0.0.1:9092', '127.0.0.1:9093']);
  });
});
