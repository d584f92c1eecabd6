import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { ClientMismatchError } from '../errors.js';
import type { GroupConsumer, GroupConsumerHandlers } from '../kafka/group-consumer.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import { compile } from '../topology/compile.js';
import { JOIN_PROGRESS_INTERVAL_MS, MemberConsumer } from './member-consumer.js';
import { memberIdentity } from './member-identity.js';
import { loadWorkerConfig } from '../config/worker-config.js';
import type { Clock } from '../runtime/ports.js';
import { ManualClock } from '../testing/manual-clock.js';

/** A group consumer that stopped under the worker (kafkajs after a crash): flow control throws. */
function stoppedConsumer(calls: string[]): GroupConsumer {
  const refuse = (call: string) => () => {
    calls.push(call);
    throw new Error('Consumer group was not initialized, consumer#run must be called first');
  };
  return {
    protocol: 'eager',
    start: async () => undefined,
    stop: async () => undefined,
    commit: async () => undefined,
    pause: refuse('pause'),
    resume: refuse('resume'),
    seek: refuse('seek'),
  };
}

/** A member of group `app` on a fake client whose consumers `consumer()` makes; `crashes` collects what the worker hears. */
function memberOn(
  consumer: () => GroupConsumer,
  config = loadWorkerConfig({}, {}),
  now: () => number = () => 0,
  parts: { readonly clock?: Clock; readonly logger?: Logger } = {},
) {
  let adapter: GroupConsumerHandlers | undefined;
  const crashes: unknown[] = [];
  const client = {
    name: 'kafkajs',
    features: { groupMetadataInTransactions: false },
    groupConsumer: (_options: unknown, handlers: GroupConsumerHandlers) => {
      adapter = handlers;
      return consumer();
    },
  } as unknown as KafkaClient;
  const member = new MemberConsumer({
    client,
    topology: compile(
      topology('app')
        .source('in')
        .process('p', (r) => r.value)
        .branch({ success: sink('out') }),
    ),
    config,
    identity: memberIdentity('app', config),
    logger: parts.logger ?? pino({ level: 'silent' }),
    clock: parts.clock ?? { now },
    handlers: {
      onBatch: () => false,
      onRevoked: async () => undefined,
      onAssigned: () => undefined,
      onCrash: (error) => crashes.push(error),
      onSkipped: () => undefined,
    },
    onFenced: () => undefined,
  });
  /** The handlers the latest consumer got (the adapter's side). */
  const handlers = (): GroupConsumerHandlers => adapter!;
  return { member, crashes, handlers };
}

describe('MemberConsumer', () => {
  it('a consumer that stopped refusing pause, resume or seek does not throw into the task that asked (the worker replaces the consumer and its tasks)', async () => {
    const calls: string[] = [];
    const { member } = memberOn(() => stoppedConsumer(calls));
    await member.start();
    const tp = { topic: 'in', partition: 0 };
    expect(() => member.pause(tp)).not.toThrow();
    expect(() => member.resume(tp)).not.toThrow();
    expect(() => member.seek(tp, 5)).not.toThrow();
    expect(calls).toEqual(['pause', 'resume', 'seek']);
  });

  it('turns refused joins of consumers that stop at each refusal (kafkajs) into a final ClientMismatchError once they lasted a session timeout', async () => {
    let now = 0;
    const { member, crashes, handlers } = memberOn(
      () => stoppedConsumer([]),
      loadWorkerConfig({ sessionTimeoutMs: '10000' }, {}),
      () => now,
    );
    const cause = Object.assign(new Error('protocols incompatible'), { type: 'INCONSISTENT_GROUP_PROTOCOL', code: 23 });
    const refuse = async (at: number): Promise<ClientMismatchError> => {
      now = at;
      // The worker builds a new consumer after each crash: the count outlives consumers.
      await member.start();
      handlers().onCrash(new ClientMismatchError('app', 'kafkajs', { cause, retriable: true }));
      return crashes.at(-1) as ClientMismatchError;
    };
    expect((await refuse(0)).retriable).toBe(true);
    expect((await refuse(9_999)).retriable).toBe(true);
    const final = await refuse(10_000);
    expect(final).toBeInstanceOf(ClientMismatchError);
    expect(final).toMatchObject({ retriable: false, client: 'kafkajs', groupId: 'app', cause });
    // A join in between starts the count again; other crashes pass as they are.
    handlers().onAssigned({ assignment: [], added: [], protocol: 'eager', memberId: 'm-1' });
    expect((await refuse(30_000)).retriable).toBe(true);
    const other = new Error('coordinator loading');
    handlers().onCrash(other);
    expect(crashes.at(-1)).toBe(other);
  });

  it('says every JOIN_PROGRESS_INTERVAL_MS that it is still joining, until its consumer is assigned or stopped', async () => {
    const clock = new ManualClock(0);
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const { member, handlers } = memberOn(() => stoppedConsumer([]), undefined, undefined, { clock, logger });
    const waits = (): unknown[] =>
      lines.filter((l) => String(l['msg']).startsWith('still joining the consumer group')).map((l) => l['waitedMs']);
    await member.start();
    clock.advance(JOIN_PROGRESS_INTERVAL_MS - 1);
    expect(waits()).toEqual([]);
    clock.advance(1);
    clock.advance(JOIN_PROGRESS_INTERVAL_MS);
    expect(waits()).toEqual([JOIN_PROGRESS_INTERVAL_MS, 2 * JOIN_PROGRESS_INTERVAL_MS]);
    expect(lines.at(-1)).toMatchObject({ groupId: 'app', sessionTimeoutMs: loadWorkerConfig({}, {}).sessionTimeoutMs });
    // Assigned (even nothing): no more lines.
    handlers().onAssigned({ assignment: [], added: [], protocol: 'eager', memberId: 'm-1' });
    clock.advance(5 * JOIN_PROGRESS_INTERVAL_MS);
    expect(waits()).toHaveLength(2);
    // A new consumer counts from its own start; a stop ends its lines.
    await member.start();
    clock.advance(JOIN_PROGRESS_INTERVAL_MS);
    expect(waits().at(-1)).toBe(JOIN_PROGRESS_INTERVAL_MS);
    await member.stop();
    clock.advance(5 * JOIN_PROGRESS_INTERVAL_MS);
    expect(waits()).toHaveLength(3);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it("stops saying it is still joining when its consumer fails to start, and a replaced consumer's late assignment leaves the new one's lines alone", async () => {
    const clock = new ManualClock(0);
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const failing: GroupConsumer = { ...stoppedConsumer([]), start: async () => Promise.reject(new Error('no broker')) };
    const consumers = [failing, stoppedConsumer([]), stoppedConsumer([])];
    const { member, handlers } = memberOn(() => consumers.shift()!, undefined, undefined, { clock, logger });
    const waits = (): number => lines.filter((l) => String(l['msg']).startsWith('still joining the consumer group')).length;
    await expect(member.start()).rejects.toThrow('no broker');
    clock.advance(3 * JOIN_PROGRESS_INTERVAL_MS);
    expect(waits()).toBe(0);
    // A consumer replaced while joining (stopWithin, then a new start) reports its assignment late.
    await member.start();
    const replaced = handlers();
    await member.stopWithin(1_000);
    await member.start();
    replaced.onAssigned({ assignment: [], added: [], protocol: 'eager', memberId: 'm-old' });
    clock.advance(JOIN_PROGRESS_INTERVAL_MS);
    expect(waits()).toBe(1);
  });

  it('stopWithin returns after its bound while a stuck consumer still stops, and that late stop leaves the next consumer alone', async () => {
    const log: string[] = [];
    let release: () => void = () => undefined;
    const stuck: GroupConsumer = {
      ...stoppedConsumer([]),
      stop: () => {
        log.push('stuck: stop called');
        return new Promise<void>((resolve) => (release = resolve)).then(() => void log.push('stuck: stopped'));
      },
    };
    const next: GroupConsumer = {
      ...stoppedConsumer([]),
      stop: async () => void log.push('next: stopped'),
      commit: async () => void log.push('next: commit'),
    };
    const consumers = [stuck, next];
    const { member } = memberOn(() => consumers.shift()!);
    await member.start();
    const t0 = Date.now();
    await member.stopWithin(50);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(log).toEqual(['stuck: stop called']);
    await member.start();
    release();
    await new Promise((resolve) => setImmediate(resolve));
    // The late stop ended the stuck consumer only: the new one is current and was not stopped.
    await member.commit([{ topic: 'in', partition: 0, offset: 1 }]);
    expect(log).toEqual(['stuck: stop called', 'stuck: stopped', 'next: commit']);
  });

  it('startWithin says false when the start has not finished within its bound, and throws a start failure that came in time', async () => {
    const hanging: GroupConsumer = { ...stoppedConsumer([]), start: () => new Promise<void>(() => undefined) };
    const failing: GroupConsumer = { ...stoppedConsumer([]), start: async () => Promise.reject(new Error('no broker')) };
    const late: GroupConsumer = {
      ...stoppedConsumer([]),
      start: () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error('too late')), 80)),
    };
    const consumers = [hanging, failing, late, stoppedConsumer([])];
    const { member } = memberOn(() => consumers.shift()!);
    expect(await member.startWithin(30)).toBe(false);
    await expect(member.startWithin(1_000)).rejects.toThrow('no broker');
    // A failure after the bound is the abandoned consumer's: nothing throws, nothing is unhandled.
    expect(await member.startWithin(20)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await member.startWithin(1_000)).toBe(true);
  });
});
