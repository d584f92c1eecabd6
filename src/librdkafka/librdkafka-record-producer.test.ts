import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../errors.js';
import { ERR } from './librdkafka-errors.js';
import type { NativeDeliveryReport, NativeProducer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';
import { LibrdkafkaRecordProducer } from './librdkafka-record-producer.js';

const fatal = Object.assign(new Error('Local: Fatal error'), { code: ERR.FATAL });

/**
 * Stand-ins for the binding's producers of a {@link NativeClients}: each instance acknowledges
 * what it is given at once, unless it has failed fatally (`fatalFrom` instances are failed from
 * their first produce on, as librdkafka's are after a fatal error; the others throw
 * `produceError` if given). Connecting fails while `brokerDown` is set.
 */
function nativeClients(options: { fatalInstances: number; produceError?: Error }) {
  const instances: Array<{ produced: number; disconnected: boolean }> = [];
  const warnings: string[] = [];
  const state = { brokerDown: false };
  const clients = {
    producer: () => {
      const instance = { produced: 0, disconnected: false };
      const failed = instances.push(instance) <= options.fatalInstances;
      let onReport: (err: unknown, report: NativeDeliveryReport) => void = () => undefined;
      const native = {
        on: (event: string, listener: typeof onReport) => {
          if (event === 'delivery-report') onReport = listener;
          return native;
        },
        setPollInBackground: () => undefined,
        produce: (topic: string, partition: number | null, _v: unknown, _k: unknown, _ts: unknown, opaque: unknown) => {
          if (failed) throw fatal;
          if (options.produceError !== undefined) throw options.produceError;
          instance.produced++;
          queueMicrotask(() => onReport(null, { topic, partition: partition ?? 0, offset: 0, opaque } as NativeDeliveryReport));
        },
        flush: (_ms: number, cb: (err: null) => void) => cb(null),
        disconnect: (cb: (err: null) => void) => {
          instance.disconnected = true;
          cb(null);
        },
      };
      return native as unknown as NativeProducer;
    },
    connect: () => (state.brokerDown ? Promise.reject(new Error('Local: Broker transport failure')) : Promise.resolve(() => undefined)),
    router: { heard: () => undefined, warn: (_fields: unknown, message: string) => warnings.push(message) },
  } as unknown as NativeClients;
  return { clients, instances, warnings, state };
}

const record = { topic: 't', partition: 0, key: null, value: Buffer.from('v'), headers: {} };

describe('LibrdkafkaRecordProducer', () => {
  it('replaces an instance that failed fatally: the send that met the error fails, later sends go through the new instance', async () => {
    const { clients, instances, warnings } = nativeClients({ fatalInstances: 1 });
    const producer = new LibrdkafkaRecordProducer(clients);
    await producer.connect();
    await expect(producer.send([record])).rejects.toBe(fatal);
    expect(warnings).toEqual(['the librdkafka producer failed fatally; replacing it with a new instance (the tasks retry their sends)']);
    await expect.poll(() => instances.length, { timeout: 5_000 }).toBe(2);
    expect(instances[0]!.disconnected).toBe(true);
    await producer.send([record, record]);
    expect(instances[1]!.produced).toBe(2);
    await producer.disconnect();
    expect(instances[1]!.disconnected).toBe(true);
  });

  it('keeps trying to connect the new instance while the broker is down; sends meanwhile fail as not connected', async () => {
    const { clients, instances, state } = nativeClients({ fatalInstances: 1 });
    const producer = new LibrdkafkaRecordProducer(clients);
    await producer.connect();
    state.brokerDown = true;
    await expect(producer.send([record])).rejects.toBe(fatal);
    await expect.poll(() => instances.length).toBe(2);
    await expect(producer.send([record])).rejects.toThrow(IllegalStateError);
    state.brokerDown = false;
    // The second try comes after a 1 s backoff.
    await expect.poll(() => instances.length, { timeout: 5_000 }).toBe(3);
    await expect.poll(() => producer.send([record]).then(() => 'sent'), { timeout: 5_000 }).toBe('sent');
    expect(instances[2]!.produced).toBe(1);
    await producer.disconnect();
  });

  it('does not replace an instance on an error that is not fatal', async () => {
    const tooLarge = Object.assign(new Error('Broker: Message size too large'), { code: 10 });
    const { clients, instances, warnings } = nativeClients({ fatalInstances: 0, produceError: tooLarge });
    const producer = new LibrdkafkaRecordProducer(clients);
    await producer.connect();
    await expect(producer.send([record])).rejects.toBe(tooLarge);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(instances).toHaveLength(1);
    expect(warnings).toEqual([]);
    await producer.disconnect();
  });
});
