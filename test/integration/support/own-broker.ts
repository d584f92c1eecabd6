/**
 * A broker instance of a test file's own (free ports, its own data dir under `.kafka/`), for
 * tests that stop, restart or kill their broker without disturbing the shared one.
 *
 * @example
 * const broker = ownBroker('crash');
 * const fx = useIntegrationFixture('weir-it-crash', { brokers: broker.start, hookTimeoutMs: 180_000 });
 * fx.onTeardown(broker.remove);
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { instanceBrokers, type BrokerInstance } from '../../../scripts/lib/broker-instance.js';
import { freePort } from '../../../scripts/lib/free-port.js';
import { removeBrokerInstance, startBroker } from '../../../scripts/lib/kafka-broker.js';
import { createTopics } from '../../../scripts/lib/topic-io.js';

/** The broker's JVM heap and how long a start may take, ms. */
export const OWN_BROKER_START = { heap: '512m', timeoutMs: 120_000 } as const;

export interface OwnBroker {
  /** The instance (its ports are set by `start`). */
  readonly instance: BrokerInstance;
  /** Picks free ports, starts the broker and returns its bootstrap servers. */
  start(): Promise<string>;
  /** Stops the broker if it runs and removes its files. */
  remove(): Promise<void>;
}

/** A broker instance named `<prefix>-<random>`. */
export function ownBroker(prefix: string): OwnBroker {
  // A controller of its own: a SIGKILLed broker is fenced while it is down (see BrokerInstance.separateController).
  const instance: BrokerInstance = {
    name: `${prefix}-${randomBytes(3).toString('hex')}`,
    port: 0,
    controllerPort: 0,
    separateController: true,
  };
  return {
    instance,
    start: async () => {
      Object.assign(instance, { port: await freePort(), controllerPort: await freePort() });
      await startBroker({ instance, ...OWN_BROKER_START });
      return instanceBrokers(instance);
    },
    remove: async () => {
      await removeBrokerInstance(instance);
    },
  };
}

/**
 * Creates topics (see topic-io.ts) on a broker that may have just been (re)started: such a broker
 * may answer metadata requests before it hosts new partitions, so a failure is tried again, every
 * 500 ms, up to 10 times.
 *
 * @throws the last error after 10 attempts
 */
export async function createTopicsOnRestartedBroker(kafka: Kafka, topics: Parameters<typeof createTopics>[1]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const admin = kafka.admin();
    try {
      await admin.connect();
      await createTopics(admin, topics);
      return;
    } catch (error) {
      if (attempt >= 10) throw error;
      await sleep(500);
    } finally {
      await admin.disconnect();
    }
  }
}
