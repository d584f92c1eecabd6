import { randomUUID } from 'node:crypto';
import { BrokerUnreachableError } from '../../errors.js';
import type { KafkaAdmin } from '../../kafka/kafka-admin.js';
import type { KafkaClient } from '../../kafka/kafka-client.js';
import { topicRanges, type OffsetRange } from '../../kafka/topic-range.js';
import { createKafkaClient } from '../../config/kafka-clients.js';
import { EXIT, exitCodeOf, reportError } from '../../host/report-error.js';
import type { DeadLetterFilter } from './dead-letter-filter.js';
import { deadLetterFilterOf, resolveBrokers, resolveClient, toolLogger, usageError, type DeadLetterFilterFlags } from './dlq-options.js';

/** A connection of the `weir dlq` tools: a Kafka client and a connected admin. */
export interface DlqTool {
  readonly brokers: readonly string[];
  readonly client: KafkaClient;
  readonly admin: KafkaAdmin;
  /** The ranges to read of `topic` (from `from`, else its start, to its end now); undefined when it does not exist. */
  ranges(topic: string, from?: ReadonlyMap<number, number>): Promise<Map<number, OffsetRange> | undefined>;
  /**
   * A fresh consumer group id for a read that commits nothing. kafkajs cannot consume without
   * a group (librdkafka reads without joining, but takes a group id too), so the tools read in a
   * throw-away group and delete it in `close()`.
   */
  throwawayGroup(purpose: string): string;
  close(): Promise<void>;
}

/** Flags every `weir dlq` command takes. */
export interface DlqToolFlags extends DeadLetterFilterFlags {
  readonly brokers?: string;
  /** `--client` (`WEIR_KAFKA_CLIENT`): kafkajs or librdkafka. */
  readonly client?: string;
  readonly verbose?: boolean;
}

/**
 * Connects the DLQ tools to Kafka (`--brokers` / `KAFKA_BROKERS` and `--client` /
 * `WEIR_KAFKA_CLIENT`, as `weir run`). The client fails fast (a few seconds), so a stopped
 * broker is reported quickly.
 *
 * @throws ConfigError for a bad `--brokers` / `KAFKA_BROKERS` or `--client` / `WEIR_KAFKA_CLIENT`
 *   value, or a librdkafka client that is not installed
 * @throws BrokerUnreachableError when no broker answers
 */
export async function openDlqTool(flags: DlqToolFlags, env: NodeJS.ProcessEnv): Promise<DlqTool> {
  const brokers = resolveBrokers(flags.brokers, env);
  const client = await createKafkaClient(resolveClient(flags.client, env), {
    brokers,
    clientId: 'weir-dlq',
    logger: toolLogger(flags.verbose === true),
    failFast: true,
  });
  const admin = client.admin();
  try {
    await admin.connect();
  } catch (error) {
    throw new BrokerUnreachableError(brokers, { cause: error });
  }
  const throwaway: string[] = [];
  return {
    brokers,
    client,
    admin,
    ranges: (topic, from) => topicRanges(admin, topic, from),
    throwawayGroup: (purpose) => {
      const id = `weir-dlq-${purpose}-${randomUUID()}`;
      throwaway.push(id);
      return id;
    },
    close: async () => {
      // Best effort: an empty group without offsets is harmless, the broker expires it.
      await admin.deleteGroups(throwaway).catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    },
  };
}

/** A DLQ topic opened for a `weir dlq` command: the connection, the filters, and the topic's ranges now. */
export interface OpenedDlqTopic {
  readonly kind: 'open';
  readonly tool: DlqTool;
  readonly filter: DeadLetterFilter;
  /** The whole topic, from its start to its end as of now. */
  readonly ranges: Map<number, OffsetRange>;
}

/**
 * The opening `weir dlq inspect` and `weir dlq replay` share: resolve the filters, connect,
 * and find the topic. Problems are reported on stderr and come back as the exit code: 2 for a
 * bad filter or a topic that does not exist, 1 when Kafka cannot be reached. The caller closes
 * the tool.
 *
 * @param what how messages name the topic, e.g. `'dead-letter topic'`
 */
export async function openDlqTopic(
  topic: string,
  flags: DlqToolFlags,
  what: string,
): Promise<OpenedDlqTopic | { readonly kind: 'exit'; readonly code: number }> {
  const filter = deadLetterFilterOf(flags, Date.now());
  if ('problem' in filter) {
    usageError(filter.problem);
    return { kind: 'exit', code: EXIT.usage };
  }
  let tool: DlqTool;
  try {
    tool = await openDlqTool(flags, process.env);
  } catch (error) {
    reportError(error, flags.verbose === true);
    return { kind: 'exit', code: exitCodeOf(error) };
  }
  try {
    const ranges = await tool.ranges(topic);
    if (ranges !== undefined) return { kind: 'open', tool, filter, ranges };
    usageError(await missingTopicMessage(tool, topic, what));
    await tool.close();
    return { kind: 'exit', code: EXIT.usage };
  } catch (error) {
    reportError(error, flags.verbose === true);
    await tool.close();
    return { kind: 'exit', code: EXIT.failure };
  }
}

/** A "topic does not exist" message, with the DLQ-looking topics that do. */
async function missingTopicMessage(tool: DlqTool, topic: string, what: string): Promise<string> {
  const topics = (await tool.admin.listTopics()).filter((t) => /dlq|dead/i.test(t)).sort();
  const hint = topics.length === 0 ? '' : ` (dead-letter topics here: ${topics.slice(0, 10).join(', ')}${topics.length > 10 ? ', …' : ''})`;
  return `${what} '${topic}' does not exist${hint}`;
}
