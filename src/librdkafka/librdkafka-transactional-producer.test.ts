import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ProducerFencedError } from '../errors.js';
import type { GroupMetadataConsumers } from './group-metadata-consumers.js';
import { LibrdkafkaGroupConsumer } from './librdkafka-group-consumer.js';
import type { NativeConsumer, NativeProducer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';
import { LibrdkafkaTransactionalProducer } from './librdkafka-transactional-producer.js';

/** A binding producer that answers every transaction call at once (with `failures[name]`, else success) and records them. */
function fakeProducer(calls: string[], failures: Readonly<Record<string, Error>> = {}): NativeProducer {
  const done =
    (name: string) =>
    (...args: unknown[]) => {
      calls.push(name);
      (args.at(-1) as (err: Error | null) => void)(failures[name] ?? null);
    };
  return Object.assign(new EventEmitter(), {
    setPollInBackground: () => undefined,
    initTransactions: done('init'),
    beginTransaction: done('begin'),
    commitTransaction: done('commit'),
    abortTransaction: done('abort'),
    sendOffsetsToTransaction: done('sendOffsets'),
    disconnect: done('disconnect'),
    flush: done('flush'),
    produce: () => calls.push('produce'),
  }) as unknown as NativeProducer;
}

/** A group consumer of the binding whose assignment is lost or not, as `lost` says. */
function groupConsumer(lost: { value: boolean }): LibrdkafkaGroupConsumer {
  const consumer = Object.create(LibrdkafkaGroupConsumer.prototype) as LibrdkafkaGroupConsumer;
  return Object.assign(consumer, {
    native: () => ({}) as NativeConsumer,
    assignmentLost: () => lost.value,
  });
}

function producerFor(
  lost: { value: boolean },
  calls: string[],
  made: NativeProducer[] = [],
  failures: Readonly<Record<string, Error>> = {},
): LibrdkafkaTransactionalProducer {
  const clients = {
    options: { brokers: ['b:9092'], clientId: 'c' },
    router: { heard: () => undefined, errorEvent: () => undefined },
    producer: () => {
      const producer = fakeProducer(calls, failures);
      made.push(producer);
      return producer;
    },
    connect: async () => () => undefined,
  } as unknown as NativeClients;
  return new LibrdkafkaTransactionalProducer(
    clients,
    { transactionalId: 'app-host-1', transactionTimeoutMs: 10_000, groupConsumer: groupConsumer(lost) },
    {} as GroupMetadataConsumers,
  );
}

describe('LibrdkafkaTransactionalProducer (exactly_once_v2)', () => {
  it('sends offsets and commits while the member holds its assignment', async () => {
    const calls: string[] = [];
    const producer = producerFor({ value: false }, calls);
    await producer.init();
    await producer.begin();
    await producer.sendOffsets('app', [{ topic: 't', partition: 0, offset: 5 }]);
    await producer.commit();
    expect(calls).toEqual(['init', 'begin', 'sendOffsets', 'commit']);
  });

  it('refuses offsets and the commit of a member whose assignment was lost (generation -1 is not fenced by the coordinator)', async () => {
    const calls: string[] = [];
    const lost = { value: true };
    const producer = producerFor(lost, calls);
    await producer.init();
    await producer.begin();
    await expect(producer.sendOffsets('app', [{ topic: 't', partition: 0, offset: 5 }])).rejects.toBeInstanceOf(ProducerFencedError);
    lost.value = false;
    await producer.sendOffsets('app', [{ topic: 't', partition: 0, offset: 5 }]);
    lost.value = true;
    await expect(producer.commit()).rejects.toBeInstanceOf(ProducerFencedError);
    expect(calls).toEqual(['init', 'begin', 'sendOffsets']);
  });

  it("fails the offsets on its own producer's delivery failure, not on a replaced producer's late reports", async () => {
    const calls: string[] = [];
    const made: NativeProducer[] = [];
    const producer = producerFor({ value: false }, calls, made);
    const record = { topic: 'out', key: null, value: Buffer.from('v'), headers: {} };
    const report = (native: NativeProducer, message: string) =>
      (native as unknown as EventEmitter).emit('delivery-report', Object.assign(new Error(message), { code: -192 }), {});
    await producer.init();
    await producer.begin();
    await producer.send([record]);
    await producer.reset();
    await producer.begin();
    await producer.send([record]);
    report(made[0]!, 'Local: Message timed out (the replaced producer)');
    await producer.sendOffsets('app', [{ topic: 't', partition: 0, offset: 5 }]);
    await producer.commit();

    await producer.begin();
    await producer.send([record]);
    report(made[1]!, 'Local: Message timed out');
    await expect(producer.sendOffsets('app', [{ topic: 't', partition: 0, offset: 6 }])).rejects.toThrow('Local: Message timed out');
    expect(made).toHaveLength(2);
  });

  it("reports a fence as ProducerFencedError when librdkafka purged the transaction's records first", async () => {
    const calls: string[] = [];
    const made: NativeProducer[] = [];
    const fenced = Object.assign(new Error('Local: This instance has been fenced by a newer instance'), { code: -144 });
    const producer = producerFor({ value: false }, calls, made, { sendOffsets: fenced });
    await producer.init();
    await producer.begin();
    await producer.send([{ topic: 'out', key: null, value: Buffer.from('v'), headers: {} }]);
    (made[0] as unknown as EventEmitter).emit('delivery-report', Object.assign(new Error('Local: Purged in queue'), { code: -152 }), {});
    await expect(producer.sendOffsets('app', [{ topic: 't', partition: 0, offset: 5 }])).rejects.toBeInstanceOf(ProducerFencedError);
  });
});
