import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { CLIENT_FEATURES } from '../kafka/kafka-client.js';
import { createKafkaClient, librdkafkaMissing, librdkafkaProblem } from './kafka-clients.js';

const options = { brokers: ['127.0.0.1:9092'], clientId: 'weir-test', logger: pino({ level: 'silent' }) };

describe('createKafkaClient', () => {
  it('builds the kafkajs binding, and the librdkafka one on demand', async () => {
    const kafkajs = await createKafkaClient('kafkajs', options);
    expect(kafkajs.name).toBe('kafkajs');
    // Each binding's features are its row of the table, not a copy of it.
    expect(kafkajs.features).toBe(CLIENT_FEATURES.kafkajs);
    const librdkafka = await createKafkaClient('librdkafka', options).catch((error: unknown) => error);
    // Where the optional package does not load, the error says so (next test); here it loads.
    if (librdkafka instanceof ConfigError) expect(librdkafka.message).toMatch(/--client/);
    else {
      expect(librdkafka).toMatchObject({ name: 'librdkafka' });
      expect((librdkafka as { features: unknown }).features).toBe(CLIENT_FEATURES.librdkafka);
    }
  });

  it('names --client and says how to install the package when librdkafka is not installed or does not load', () => {
    const missing = librdkafkaMissing(
      Object.assign(new Error("Cannot find module '@confluentinc/kafka-javascript'"), { code: 'MODULE_NOT_FOUND' }),
    );
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing.key).toBe('--client');
    expect(missing.message).toMatch(/@confluentinc\/kafka-javascript is not installed/);
    expect(missing.message).toMatch(/npm install/);
    expect(missing.message).toMatch(/WEIR_KAFKA_CLIENT/);
    const broken = librdkafkaMissing(new Error('libssl.so.3: cannot open shared object file\n  at Module._extensions'));
    expect(broken.message).toMatch(/does not load \(libssl\.so\.3: cannot open shared object file\)/);
  });

  it('librdkafkaProblem agrees with createKafkaClient: undefined where librdkafka loads, else the reason --client reports', async () => {
    const problem = await librdkafkaProblem();
    const client = await createKafkaClient('librdkafka', options).catch((error: unknown) => error);
    if (problem === undefined) expect(client).toMatchObject({ name: 'librdkafka' });
    else expect((client as ConfigError).message).toContain(`but ${problem};`);
  });
});
