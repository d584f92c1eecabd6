import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LibrdkafkaLogRouter, pinoLevelOf } from './librdkafka-log-router.js';
import type { LibrdkafkaError } from './librdkafka-native.js';

function capture(level = 'trace') {
  const lines: Array<{ level: number; msg: string; [field: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

const WARN = 40;
const INFO = 30;
const refused = {
  severity: 3,
  fac: 'FAIL',
  message: '127.0.0.1:9092/1: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)',
};
const error = (code: number, message: string, isFatal = false): LibrdkafkaError => Object.assign(new Error(message), { code, isFatal });

describe('pinoLevelOf', () => {
  it('maps syslog severities 0–7 to pino levels', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(pinoLevelOf)).toEqual(['fatal', 'fatal', 'fatal', 'error', 'warn', 'info', 'debug', 'trace']);
  });
});

describe('LibrdkafkaLogRouter', () => {
  it("logs librdkafka's events at their mapped level under component librdkafka", () => {
    const { logger, lines } = capture();
    const router = new LibrdkafkaLogRouter(logger);
    router.logEvent({ severity: 5, fac: 'CONFWARN', message: 'Configuration property x is not used' });
    router.logEvent({ severity: 7, fac: 'FETCH', message: 'Fetch topic t [0] at offset 4' });
    router.logEvent({ severity: 4, fac: 'SSL', message: 'a certificate expires soon' });
    expect(lines.map((l) => [l.level, l['component'], l['facility'], l.msg])).toEqual([
      [30, 'librdkafka', 'CONFWARN', 'Configuration property x is not used'],
      [10, 'librdkafka', 'FETCH', 'Fetch topic t [0] at offset 4'],
      [40, 'librdkafka', 'SSL', 'a certificate expires soon'],
    ]);
  });

  it('sends what librdkafka retries or weir reports itself to debug: rebalances, coordinators, fencing, fatal errors', () => {
    const { logger, lines } = capture();
    const router = new LibrdkafkaLogRouter(logger);
    router.logEvent({ severity: 4, fac: 'COMMITFAIL', message: 'Offset commit failed: Broker: Group rebalance in progress' });
    router.logEvent({
      severity: 3,
      fac: 'FENCED',
      message: 'Producer fenced by newer instance: Broker: Producer attempted an operation with an old epoch',
    });
    router.errorEvent(error(-150, 'Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id', true));
    router.errorEvent(error(16, 'Broker: Not coordinator'));
    router.logEvent({
      severity: 4,
      fac: 'COMMITFAIL',
      message:
        '[thrd:main]: Offset commit (manual) failed for 1/1 partition(s) in join-state wait-metadata: Broker: Specified group generation id is not valid',
    });
    router.logEvent({
      severity: 3,
      fac: 'TXNERR',
      message:
        '[thrd:main]: Fatal transaction error: Failed to end transaction: Broker: Producer attempted a transactional operation in an invalid state',
    });
    expect(lines.map((l) => l.level)).toEqual([20, 20, 20, 20, 20, 20]);
    router.errorEvent(error(-151, 'Local: Something else went wrong'));
    expect(lines.at(-1)).toMatchObject({ level: WARN, code: -151 });
  });

  it('aggregates connection errors per broker: one warning, then one per interval with a count, info when heard from again', () => {
    const { logger, lines } = capture('info');
    let now = 0;
    const router = new LibrdkafkaLogRouter(logger, { now: () => now, connectionWarnIntervalMs: 10_000 });
    router.logEvent(refused);
    router.errorEvent(error(-195, '127.0.0.1:9092/1: Connect to ipv4#127.0.0.1:9092 failed: Connection refused'));
    router.errorEvent(error(-187, '1/1 brokers are down'));
    // The binding lowercases the text of some errors and loses their code.
    router.errorEvent(error(-1, 'broker transport failure'));
    now = 4_000;
    router.logEvent(refused);
    now = 10_000;
    router.logEvent(refused);
    now = 12_000;
    router.heard();
    router.heard();
    expect(lines.map((l) => [l.level, l.msg, l['broker'], l['errors']])).toEqual([
      // The errors that name no broker ("1/1 brokers are down") count into its outage: one warning.
      [WARN, 'kafka broker unreachable; librdkafka retries', '127.0.0.1:9092', undefined],
      [WARN, 'kafka broker still unreachable; librdkafka retries', '127.0.0.1:9092', 5],
      [INFO, 'kafka broker connection is back', '127.0.0.1:9092', 6],
    ]);
  });

  it("names the broker, not the thread, of a log line that carries librdkafka's thread prefix", () => {
    const { logger, lines } = capture('info');
    const router = new LibrdkafkaLogRouter(logger);
    router.logEvent({ ...refused, message: `[thrd:127.0.0.1:9999/bootstrap]: ${refused.message.replaceAll('9092', '9999')}` });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: WARN, broker: '127.0.0.1:9999' });
    expect(lines[0]!['error']).toMatch(/^127\.0\.0\.1:9999\/1: Connect to/);
    // A text that names no broker is filed under the broker thread that logged it.
    router.logEvent({ ...refused, message: '[thrd:10.0.0.7:9093/bootstrap]: Connection refused' });
    expect(lines.at(-1)).toMatchObject({ level: WARN, broker: '10.0.0.7:9093', error: 'Connection refused' });
  });

  it('probes a registered client during an outage and says the connection is back when it answers', async () => {
    const { logger, lines } = capture('info');
    const router = new LibrdkafkaLogRouter(logger, { probeIntervalMs: 10 });
    let up = false;
    const remove = router.addProbe(async () => {
      if (!up) throw new Error('down');
    });
    router.logEvent(refused);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.map((l) => l.msg)).toEqual(['kafka broker unreachable; librdkafka retries']);
    up = true;
    for (let i = 0; i < 50 && lines.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lines.at(-1)).toMatchObject({ level: INFO, msg: 'kafka broker connection is back', broker: '127.0.0.1:9092' });
    remove();
  });
});
