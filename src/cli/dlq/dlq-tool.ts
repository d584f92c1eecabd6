import { randomUUID } from 'node:crypto';
import { createKafka } from '../../kafkajs/kafka-client.js';
import { KafkaAdminClient } from '../../kafkajs/kafka-admin-client.js';
import { topicRanges, type OffsetRange } from '../../kafkajs/topic-range-reader.js';
import { resolveBrokers, toolLogger } from './dlq-options.js';

/** A connection of the `weir dlq` tools: a kafkajs client and a connected admin. */
export interface DlqTool {
  readonly brokers: readonly string[];
  readonly kafka: ReturnType<typeof createKafka>;
  readonly admin: KafkaAdminClient;
  /** The ranges to read of `topic` (from `from`, else its start, to its end now); undefined when it does not exist. */
  ranges(topic: string, from?: ReadonlyMap<number, number>): Promise<Map<number, OffsetRange> | undefined>;
  /**
   * A fresh consumer group id for a read that commits nothing. kafkajs cannot consume without
   * a group, so the tools read in a throw-away group and delete it in `close()`.
   */
  throwawayGroup(purpose: string): string;
  close(): Promise<void>;
}

/** Thrown when no broker answers: the message names the brokers tried. */
export class BrokerUnreachableError extends Error {
  override readonly name = 'BrokerUnreachableError';
}

/**
 * Connects the DLQ tools to Kafka (`--brokers` / `KAFKA_BROKERS`, as `weir run`). kafkajs
 * retries a little (about 3 s) before giving up, so a stopped broker is reported quickly.
 *
 * @throws ConfigError for a bad `--brokers` / `KAFKA_BROKERS` value
 * @throws BrokerUnreachableError when no broker answers
 */
export async function openDlqTool(flags: { readonly brokers?: string; readonly verbose?: boolean }, env: NodeJS.ProcessEnv): Promise<DlqTool> {
  const brokers = resolveBrokers(flags.brokers, env);
  const kafka = createKafka({
    brokers,
    clientId: 'weir-dlq',
    logger: toolLogger(flags.verbose === true),
    retry: { retries: 3, initialRetryTime: 250, maxRetryTime: 2_000 },
  });
  const admin = new KafkaAdminClient(kafka);
  try {
    await admin.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BrokerUnreachableError(`cannot reach Kafka at ${brokers.join(',')} (set --brokers or KAFKA_BROKERS): ${reason}`, { cause: error });
  }
  const throwaway: string[] = [];
  return {
    brokers,
    kafka,
    admin,
    ranges: (topic, from) => topicRanges(admin, topic, from),
    throwawayGroup: (purpose) => {
      const id = `weir-dlq-${purpose}-${randomUUID()}`;
      throwaway.push(id);
      return id;
    },
    close: async () => {
      // Best effort: an empty group without offsets is harmless, the broker expires it.
      if (throwaway.length > 0) await admin.raw.deleteGroups(throwaway).catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    },
  };
}

/** Records in `ranges`. */
export function rangeSize(ranges: ReadonlyMap<number, OffsetRange>): number {
  let n = 0;
  for (const r of ranges.values()) n += Math.max(0, r.to - r.from);
  return n;
}

/** A "topic does not exist" message, with the DLQ-looking topics that do. */
export async function missingTopicMessage(tool: DlqTool, topic: string, what: string): Promise<string> {
  const topics = (await tool.admin.raw.listTopics()).filter((t) => /dlq|dead/i.test(t)).sort();
  const hint = topics.length === 0 ? '' : ` (dead-letter topics here: ${topics.slice(0, 10).join(', ')}${topics.length > 10 ? ', …' : ''})`;
  return `${what} '${topic}' does not exist${hint}`;
}
