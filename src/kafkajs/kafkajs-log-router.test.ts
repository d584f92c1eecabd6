import { Writable } from 'node:stream';
import { logLevel } from './kafkajs-library.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KafkajsLogRouter, type KafkajsLogEntry } from './kafkajs-log-router.js';

function capture(level = 'info') {
  const lines: Array<{ level: number; msg: string; [field: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

const BROKER = '127.0.0.1:9092';
const entry = (level: number, namespace: string, message: string, fields: Record<string, unknown> = {}): KafkajsLogEntry => ({
  namespace,
  level,
  log: { message, timestamp: 'now', logger: 'kafkajs', ...fields },
});
const refused = entry(logLevel.ERROR, 'Connection', `Connection error: connect ECONNREFUSED ${BROKER}`, { broker: BROKER });
const seedRefused = entry(
  logLevel.ERROR,
  'BrokerPool',
  `Failed to connect to seed broker, trying another broker from the list: Connection error: connect ECONNREFUSED ${BROKER}`,
);
const response = entry(logLevel.DEBUG, 'Connection', 'Response Metadata(key: 3, version: 6)', { broker: BROKER, data: {} });
const WARN = 40;
const INFO = 30;

describe('KafkajsLogRouter', () => {
  it('sends heartbeat, join, sync and rebalance chatter to debug, never warn', () => {
    const { logger, lines } = capture();
    const router = new KafkajsLogRouter(logger);
    router.route(
      entry(logLevel.ERROR, 'Connection', 'Response Heartbeat(key: 12, version: 3)', {
        broker: BROKER,
        error: 'The group is rebalancing, so a rejoin is needed',
      }),
    );
    router.route(
      entry(logLevel.ERROR, 'Connection', 'Response JoinGroup(key: 11, version: 5)', {
        broker: BROKER,
        error: 'The group member needs to have a valid member id before actually entering a consumer group',
      }),
    );
    router.route(entry(logLevel.WARN, 'Runner', 'The group is rebalancing, re-joining', { groupId: 'g' }));
    router.route(entry(logLevel.ERROR, 'Runner', 'The coordinator is not aware of this member, re-joining the group', { groupId: 'g' }));
    router.route(entry(logLevel.INFO, 'ConsumerGroup', 'Consumer has joined the group', { groupId: 'g' }));
    router.route(
      entry(logLevel.ERROR, 'Connection', 'Response GroupCoordinator(key: 10, version: 2)', {
        broker: BROKER,
        error: "The coordinator is loading and hence can't process requests for this group",
      }),
    );
    router.route(
      entry(
        logLevel.ERROR,
        'Consumer',
        "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group",
        { groupId: 'g' },
      ),
    );
    // Two stream threads (or workers) creating the same missing sink at once.
    router.route(
      entry(logLevel.ERROR, 'Connection', 'Response CreateTopics(key: 19, version: 3)', { broker: BROKER, error: 'Topic creation errors' }),
    );
    expect(lines).toEqual([]);
  });

  it('keeps other kafkajs errors and warnings at warn, under component kafkajs', () => {
    const { logger, lines } = capture();
    new KafkajsLogRouter(logger).route(
      entry(logLevel.ERROR, 'Producer', 'Failed to send messages: This server does not host this topic-partition', { retryCount: 1 }),
    );
    expect(lines).toMatchObject([
      {
        level: WARN,
        component: 'kafkajs',
        namespace: 'Producer',
        retryCount: 1,
        msg: 'Failed to send messages: This server does not host this topic-partition',
      },
    ]);
  });

  it('takes an Error passed as the message (as kafkajs does in places)', () => {
    const { logger, lines } = capture();
    new KafkajsLogRouter(logger).route({
      namespace: 'BrokerPool',
      level: logLevel.ERROR,
      log: { message: new Error('Closed connection'), retryCount: 2 },
    });
    expect(lines).toMatchObject([{ level: WARN, msg: 'kafka broker unreachable; kafkajs retries', error: 'Closed connection' }]);
  });

  it('aggregates connection errors: one warn per broker per interval with a count, one info when the connection is back', () => {
    const { logger, lines } = capture();
    let now = 1_000_000;
    const router = new KafkajsLogRouter(logger, { connectionWarnIntervalMs: 10_000, now: () => now });
    for (let i = 0; i < 44; i++) {
      router.route(i % 2 === 0 ? refused : seedRefused);
      now += 500; // 22 s of errors
    }
    router.route(response);
    const summary = lines.map((l) => [l.level, l.msg, l['broker'], l['errors']]);
    expect(summary).toEqual([
      [WARN, 'kafka broker unreachable; kafkajs retries', BROKER, undefined],
      [WARN, 'kafka broker still unreachable; kafkajs retries', BROKER, 20],
      [WARN, 'kafka broker still unreachable; kafkajs retries', BROKER, 20],
      [INFO, 'kafka broker connection is back', BROKER, 44],
    ]);
    expect(lines[3]!['outageMs']).toBe(22_000);
    expect(lines[0]!['error']).toContain('ECONNREFUSED');
  });

  it('does not count a response that carries an error as the connection being back', () => {
    const { logger, lines } = capture();
    const router = new KafkajsLogRouter(logger);
    router.route(refused);
    router.route(
      entry(logLevel.DEBUG, 'Connection', 'Response Metadata(key: 3, version: 6)', { broker: BROKER, error: 'Connection error' }),
    );
    router.route(response);
    expect(lines.map((l) => l.msg)).toEqual(['kafka broker unreachable; kafkajs retries', 'kafka broker connection is back']);
  });
});
