/**
 * Waiting for a consumer group's progress, for the demo, benchmarks and integration tests (kafkajs).
 *
 * @module
 */
import type { Kafka } from '../../src/kafkajs/kafkajs-library.js';
import { endOffsets } from './topic-io.js';
import { pollUntil } from './wait-for.js';

/**
 * Waits until a consumer group's committed offsets reach the log-end offsets of `topics` (every
 * record consumed and committed).
 *
 * @returns whether they did within `timeoutMs`
 */
export async function waitForGroupCaughtUp(kafka: Kafka, groupId: string, topics: readonly string[], timeoutMs: number): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await pollUntil(
      async () => {
        const ends = await endOffsets(admin, topics);
        let caughtUp = true;
        for (const topic of topics) {
          // A retriable answer (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS on a young broker): ask again.
          const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] }).catch((error: unknown) => {
            if ((error as { retriable?: unknown }).retriable === true) return [undefined];
            throw error;
          });
          if (committed === undefined) return false;
          for (const [partition, end] of ends.get(topic) ?? new Map<number, number>()) {
            const offset = Number(committed?.partitions.find((p) => p.partition === partition)?.offset ?? -1);
            if (end > 0 && offset < end) caughtUp = false;
          }
        }
        return caughtUp;
      },
      timeoutMs,
      200,
    );
  } finally {
    await admin.disconnect();
  }
}
