import { describe, expect, it } from 'vitest';
import { DeliveryTracker } from './librdkafka-delivery.js';
import { ERR } from './librdkafka-errors.js';
import type { NativeProducer } from './librdkafka-native.js';

/** A stand-in for the binding's producer: records each produce call; reports come from the test. */
function producer(failWith?: (n: number) => unknown) {
  const produced: Array<{ topic: string; partition: number | null; opaque: unknown; headers: unknown }> = [];
  const p = {
    produce: (topic: string, partition: number | null, _v: unknown, _k: unknown, _ts: unknown, opaque: unknown, headers: unknown) => {
      const failure = failWith?.(produced.length);
      if (failure !== undefined) throw failure;
      produced.push({ topic, partition, opaque, headers });
    },
  } as unknown as NativeProducer;
  return { p, produced };
}

const rec = (partition?: number) => ({
  topic: 't',
  key: null,
  value: Buffer.from('v'),
  headers: { h: 'x' },
  ...(partition === undefined ? {} : { partition }),
});

describe('DeliveryTracker', () => {
  it('resolves a send when every record is acknowledged, in produce order', async () => {
    const { p, produced } = producer();
    let heard = 0;
    const tracker = new DeliveryTracker(
      () => p,
      () => heard++,
    );
    const sent = tracker.send([rec(1), rec(), rec(1)]);
    await Promise.resolve();
    expect(produced.map((r) => r.partition)).toEqual([1, null, 1]);
    expect(produced[0]!.headers).toEqual([{ h: 'x' }]);
    expect(tracker.pending).toBe(1);
    for (const r of produced) tracker.delivered(null, { topic: 't', partition: 0, offset: 0, opaque: r.opaque });
    await sent;
    expect(heard).toBe(1);
    expect(tracker.pending).toBe(0);
  });

  it('rejects with the first failure once every record has its report', async () => {
    const { p, produced } = producer();
    const tracker = new DeliveryTracker(() => p);
    const sent = tracker.send([rec(), rec()]);
    await Promise.resolve();
    const timedOut = Object.assign(new Error('Local: Message timed out'), { code: ERR.MSG_TIMED_OUT });
    tracker.delivered(timedOut, { topic: 't', partition: 0, offset: -1, opaque: produced[0]!.opaque });
    let settled = false;
    sent.catch(() => undefined).finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    tracker.delivered(null, { topic: 't', partition: 0, offset: 3, opaque: produced[1]!.opaque });
    await expect(sent).rejects.toBe(timedOut);
  });

  it('waits while the queue is full, and fails the records not produced on any other error', async () => {
    const full = Object.assign(new Error('Local: Queue full'), { code: ERR.QUEUE_FULL });
    let fullOnce = true;
    const { p, produced } = producer((n) => (n === 1 && fullOnce ? ((fullOnce = false), full) : undefined));
    const tracker = new DeliveryTracker(() => p);
    const sent = tracker.send([rec(), rec()]);
    for (let i = 0; i < 50 && produced.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const r of produced) tracker.delivered(null, { topic: 't', partition: 0, offset: 0, opaque: r.opaque });
    await sent;

    const unknown = Object.assign(new Error('Local: Unknown partition'), { code: -190 });
    const failing = producer((n) => (n === 0 ? unknown : undefined));
    await expect(new DeliveryTracker(() => failing.p).send([rec(), rec()])).rejects.toBe(unknown);
  });

  it('enqueue resolves once every record is queued, before any acknowledgement; acknowledged settles with the reports', async () => {
    const { p, produced } = producer();
    const tracker = new DeliveryTracker(() => p);
    const { acknowledged } = await tracker.enqueue([rec(0), rec(1)]);
    expect(produced).toHaveLength(2);
    expect(tracker.pending).toBe(1);
    let acked = false;
    void acknowledged.then(() => (acked = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(acked).toBe(false);
    for (const r of produced) tracker.delivered(null, { topic: 't', partition: 0, offset: 0, opaque: r.opaque });
    await acknowledged;
    expect(tracker.pending).toBe(0);
  });

  it('enqueue rejects at once when a record cannot be queued: nothing after it is produced', async () => {
    const tooLarge = Object.assign(new Error('Broker: Message size too large'), { code: 10 });
    const { p, produced } = producer((n) => (n === 1 ? tooLarge : undefined));
    const tracker = new DeliveryTracker(() => p);
    await expect(tracker.enqueue([rec(), rec(), rec()])).rejects.toBe(tooLarge);
    expect(produced).toHaveLength(1);
    // The queued record's report still arrives, and settles the batch without an unhandled rejection.
    tracker.delivered(null, { topic: 't', partition: 0, offset: 0, opaque: produced[0]!.opaque });
    await new Promise((resolve) => setImmediate(resolve));
    expect(tracker.pending).toBe(0);
  });
});
