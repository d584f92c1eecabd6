import type { Admin, Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { isRetriableKafkaError } from '../kafka/retriable-kafka-error.js';
import { KafkajsAdmin } from './kafkajs-admin.js';

/** A kafkajs client whose admin's metadata reads fail as kafkajs' own do when no broker answered. */
function adminWhereNoBrokerAnswers(): KafkajsAdmin {
  // kafkajs' broker pool yields null when every broker failed; its admin then reads a property of it.
  const nullMetadata = (): never => {
    const metadata = null as unknown as { topicMetadata: unknown };
    return metadata.topicMetadata as never;
  };
  const admin = {
    listTopics: async () => nullMetadata(),
    fetchTopicMetadata: async () => nullMetadata(),
  } as unknown as Admin;
  return new KafkajsAdmin({ admin: () => admin } as unknown as Kafka);
}

describe('KafkajsAdmin metadata reads', () => {
  it("turns kafkajs' TypeError on a null metadata answer into a retriable connection error", async () => {
    const admin = adminWhereNoBrokerAnswers();
    const listed = await admin.listTopics().catch((error: unknown) => error);
    expect(listed).toMatchObject({ name: 'KafkaJSConnectionError', retriable: true });
    expect((listed as Error).message).toMatch(/no Kafka broker answered the metadata request \(kafkajs: .*topicMetadata/);
    expect(isRetriableKafkaError(listed)).toBe(true);
    const counted = await admin.partitionCounts(['a']).catch((error: unknown) => error);
    expect(isRetriableKafkaError(counted)).toBe(true);
  });

  it('lets any other error through as it is', async () => {
    const refused = new Error('TOPIC_AUTHORIZATION_FAILED');
    const admin = new KafkajsAdmin({
      admin: () => ({ listTopics: () => Promise.reject(refused) }) as unknown as Admin,
    } as unknown as Kafka);
    await expect(admin.listTopics()).rejects.toBe(refused);
  });
});
