import { describe, expect, it } from 'vitest';
import type { OutputRecord } from '../record/record-types.js';
import type { LibrdkafkaError, NativeProducer } from './librdkafka-native.js';
import { TransactionDeliveries } from './transaction-deliveries.js';

const record = (value: string): OutputRecord => ({ topic: 'out', key: null, value: Buffer.from(value), headers: {} });

/** A binding producer that records what it was given; `flush` answers with `flushError`. */
function fakeProducer(flushError: LibrdkafkaError | null = null) {
  const produced: Array<{ value: string; opaque: unknown }> = [];
  let flushes = 0;
  const producer = {
    produce: (_t: string, _p: number | null, value: Buffer, _k: unknown, _ts: unknown, opaque: unknown) => {
      produced.push({ value: value.toString(), opaque });
    },
    flush: (_timeoutMs: number, cb: (err: LibrdkafkaError | null) => void) => {
      flushes++;
      cb(flushError);
      return producer;
    },
  } as unknown as NativeProducer;
  return { producer, produced, flushes: () => flushes };
}

/** A TransactionDeliveries on a fake producer, counting the times it says the broker answered. */
function tracked(flushError: LibrdkafkaError | null = null) {
  const fake = fakeProducer(flushError);
  let heard = 0;
  const deliveries = new TransactionDeliveries(
    () => fake.producer,
    () => heard++,
  );
  return { fake, deliveries, heard: () => heard };
}

const failure = (message: string): LibrdkafkaError => Object.assign(new Error(message), { code: 10 }) as LibrdkafkaError;

describe('TransactionDeliveries (delivery.report.only.error)', () => {
  it('queues in order without an opaque, flushes once per batch of sends, and tells the client the broker answered', async () => {
    const { fake, deliveries, heard } = tracked();
    await deliveries.send([record('a'), record('b')]);
    await deliveries.send([record('c')]);
    await deliveries.acknowledged(1_000);
    await deliveries.acknowledged(1_000);
    expect(fake.produced.map((p) => p.value)).toEqual(['a', 'b', 'c']);
    // An opaque would be a persistent handle the binding never frees under delivery.report.only.error.
    expect(fake.produced.map((p) => p.opaque)).toEqual([undefined, undefined, undefined]);
    expect(fake.flushes()).toBe(1);
    expect(heard()).toBe(1);
  });

  it("fails with the transaction's first reported failure, and forgets it when a new transaction begins", async () => {
    const { deliveries } = tracked();
    await deliveries.send([record('a'), record('b')]);
    deliveries.delivered(failure('Broker: Message size too large'));
    deliveries.delivered(failure('second'));
    await expect(deliveries.acknowledged(1_000)).rejects.toThrow('Broker: Message size too large');
    await expect(deliveries.acknowledged(1_000)).rejects.toThrow('Broker: Message size too large');

    deliveries.reset();
    await deliveries.send([record('c')]);
    await expect(deliveries.acknowledged(1_000)).resolves.toBeUndefined();
  });

  it("ignores the purges of an aborted transaction's records, which reach JavaScript after the next begin", async () => {
    const { deliveries } = tracked();
    await deliveries.send([record('a'), record('b')]);
    deliveries.reset();
    await deliveries.send([record('c')]);
    deliveries.delivered(Object.assign(failure('Local: Purged in queue'), { code: -152 }));
    deliveries.delivered(Object.assign(failure('Local: Purged in flight'), { code: -151 }));
    deliveries.delivered(null);
    await expect(deliveries.acknowledged(1_000)).resolves.toBeUndefined();
  });

  it('does not tell the client the broker answered when the flush found only purged records', async () => {
    const { deliveries, heard } = tracked();
    await deliveries.send([record('a')]);
    deliveries.delivered(Object.assign(failure('Local: Purged in queue'), { code: -152 }));
    await deliveries.acknowledged(1_000);
    expect(heard()).toBe(0);
    deliveries.reset();
    await deliveries.send([record('b')]);
    await deliveries.acknowledged(1_000);
    expect(heard()).toBe(1);
  });

  it("takes a real failure reported after the next begin as that transaction's (one more abort, documented)", async () => {
    const { deliveries } = tracked();
    await deliveries.send([record('a')]);
    deliveries.reset();
    await deliveries.send([record('b')]);
    deliveries.delivered(failure('Local: Message timed out'));
    await expect(deliveries.acknowledged(1_000)).rejects.toThrow('Local: Message timed out');
  });

  it('fails when the flush times out', async () => {
    const { deliveries } = tracked(failure('Local: Timed out'));
    await deliveries.send([record('a')]);
    await expect(deliveries.acknowledged(10)).rejects.toThrow('Local: Timed out');
  });
});
