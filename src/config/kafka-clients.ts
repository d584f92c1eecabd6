import { ConfigError } from '../errors.js';
import { KafkajsClient } from '../kafkajs/kafkajs-client.js';
import type { KafkaClient, KafkaClientName, KafkaClientOptions } from '../kafka/kafka-client.js';

/** How to install the librdkafka client, as README.md says it ("The librdkafka client"). */
export const LIBRDKAFKA_INSTALL_HINT =
  'install the optional package @confluentinc/kafka-javascript: `npm install` in weir builds it ' +
  '(CKJS_LINKING=dynamic against the system zlib and OpenSSL; needs a C/C++ toolchain, make and python3), ' +
  'or run `node scripts/install-librdkafka.mjs` after fixing what its build reported';

/**
 * The Kafka client binding named `name`, connected with `options` (see `KafkaClient`). The
 * librdkafka binding is loaded on demand (a dynamic `import()`), so kafkajs users never load
 * its native module.
 *
 * @throws ConfigError naming `--client` when `librdkafka` is asked for and its package is not
 *   installed or its native module does not load (the message says how to install it)
 * @example const client = await createKafkaClient('kafkajs', { brokers: ['127.0.0.1:9092'], clientId: 'weir-app', logger });
 */
export async function createKafkaClient(name: KafkaClientName, options: KafkaClientOptions): Promise<KafkaClient> {
  switch (name) {
    case 'kafkajs':
      return new KafkajsClient(options);
    case 'librdkafka': {
      try {
        const { LibrdkafkaClient } = await import('../librdkafka/librdkafka-client.js');
        return new LibrdkafkaClient(options);
      } catch (error) {
        throw librdkafkaMissing(error);
      }
    }
  }
}

/**
 * Whether the librdkafka client can run here: its native module is loaded (into this process,
 * as `createKafkaClient('librdkafka', …)` loads it) without making a client.
 *
 * @returns undefined when it loads, else why not, as `--client librdkafka` would report it
 *   (`@confluentinc/kafka-javascript is not installed`, or `… does not load (<the loader's error>)`)
 */
export async function librdkafkaProblem(): Promise<string | undefined> {
  try {
    const { loadLibrdkafka } = await import('../librdkafka/librdkafka-native.js');
    loadLibrdkafka();
    return undefined;
  } catch (error) {
    return whyNotLoaded(error);
  }
}

/** The ConfigError of a librdkafka client that cannot be loaded: why, and how to install it. */
export function librdkafkaMissing(error: unknown): ConfigError {
  return new ConfigError(
    '--client',
    `librdkafka (also WEIR_KAFKA_CLIENT) needs its native client, but ${whyNotLoaded(error)}; ${LIBRDKAFKA_INSTALL_HINT}`,
  );
}

function whyNotLoaded(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND'
    ? '@confluentinc/kafka-javascript is not installed'
    : `@confluentinc/kafka-javascript does not load (${firstLine(error)})`;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
