import { KafkajsClient } from '../kafkajs/kafkajs-client.js';
import type { KafkaClient, KafkaClientName, KafkaClientOptions } from '../kafka/kafka-client.js';

/**
 * The Kafka client binding named `name`, connected with `options` (see `KafkaClient`).
 *
 * @example const client = await createKafkaClient('kafkajs', { brokers: ['127.0.0.1:9092'], clientId: 'weir-app', logger });
 */
export async function createKafkaClient(name: KafkaClientName, options: KafkaClientOptions): Promise<KafkaClient> {
  switch (name) {
    case 'kafkajs':
      return new KafkajsClient(options);
  }
}
