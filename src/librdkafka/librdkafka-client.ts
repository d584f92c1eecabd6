import type { GroupConsumer, GroupConsumerHandlers, GroupConsumerOptions } from '../kafka/group-consumer.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type {
  KafkaClient,
  KafkaClientFeatures,
  KafkaClientOptions,
  RecordProducerClient,
  TransactionalProducerClient,
  TransactionalProducerOptions,
} from '../kafka/kafka-client.js';
import { CLIENT_FEATURES } from '../kafka/kafka-client.js';
import type { TopicRangeReadOptions } from '../kafka/topic-range.js';
import type { TopicPartition } from '../record/record-types.js';
import { GroupMetadataConsumers } from './group-metadata-consumers.js';
import { describeGroupInHelper } from './isolated-describe-groups.js';
import { LibrdkafkaAdmin } from './librdkafka-admin.js';
import { LibrdkafkaGroupConsumer } from './librdkafka-group-consumer.js';
import { LibrdkafkaLogRouter } from './librdkafka-log-router.js';
import { NativeClients } from './librdkafka-native-clients.js';
import { LibrdkafkaRecordProducer } from './librdkafka-record-producer.js';
import { readLibrdkafkaTopicRange } from './librdkafka-topic-range-reader.js';
import { LibrdkafkaTransactionalProducer } from './librdkafka-transactional-producer.js';

/** The timeout of the member-id lookup's group description, ms (the admin client's default). */
const MEMBER_LOOKUP_TIMEOUT_MS = 10_000;

/**
 * The librdkafka binding of {@link KafkaClient}, on Confluent's `@confluentinc/kafka-javascript`
 * (librdkafka 2.x; an optional dependency built at install, see README.md). Beyond kafkajs it
 * has KIP-447 (`sendOffsets` with a live consumer's group metadata), the cooperative-sticky
 * assignor (KIP-429) and static membership (KIP-345). It uses the package's node-rdkafka-style
 * API (`KafkaConsumer`, `Producer`, `AdminClient`), not its KafkaJS-compatible layer: weir's
 * fetch loop needs explicit seeks, pauses, EOF events and rebalance control, and gets them
 * without the layer's message cache. librdkafka's logs go to the worker's pino logger under
 * `component: 'librdkafka'` ({@link LibrdkafkaLogRouter}).
 *
 * @throws the loader's error from the constructor when the package is not installed or its
 *   native module does not load (`createKafkaClient` turns it into a `ConfigError`)
 */
export class LibrdkafkaClient implements KafkaClient {
  readonly name = 'librdkafka' as const;
  readonly features: KafkaClientFeatures = CLIENT_FEATURES.librdkafka;
  private readonly clients: NativeClients;
  private readonly metadata: GroupMetadataConsumers;

  constructor(options: KafkaClientOptions) {
    this.clients = new NativeClients(options, new LibrdkafkaLogRouter(options.logger));
    this.metadata = new GroupMetadataConsumers(this.clients);
  }

  /** librdkafka's version, e.g. `2.15.1`. */
  get librdkafkaVersion(): string {
    return this.clients.module.librdkafkaVersion;
  }

  admin(): KafkaAdmin {
    return new LibrdkafkaAdmin(this.clients);
  }

  recordProducer(): RecordProducerClient {
    return new LibrdkafkaRecordProducer(this.clients);
  }

  transactionalProducer(options: TransactionalProducerOptions): TransactionalProducerClient {
    return new LibrdkafkaTransactionalProducer(this.clients, options, this.metadata);
  }

  groupConsumer(options: GroupConsumerOptions, handlers: GroupConsumerHandlers): GroupConsumer {
    return new LibrdkafkaGroupConsumer(this.clients, options, handlers, (groupId, clientId, assigned) =>
      this.memberIdOf(
        groupId,
        { clientId, ...(options.groupInstanceId !== undefined ? { groupInstanceId: options.groupInstanceId } : {}) },
        assigned,
      ),
    );
  }

  readTopicRange(options: TopicRangeReadOptions): Promise<Map<number, number>> {
    return readLibrdkafkaTopicRange(this.clients, options);
  }

  /**
   * The member id of this client's consumer in a group: the binding does not expose
   * librdkafka's `rd_kafka_memberid()`, so it is read from the group's description — a static
   * member by its `group.instance.id` (a restarted one keeps its predecessor's `client.id` in
   * the group's metadata, KIP-345: it rejoins without a rebalance), else the member with this
   * `client.id` (weir's are unique per process and stream thread), the one holding `assigned`
   * when several are.
   */
  private async memberIdOf(
    groupId: string,
    me: { readonly clientId: string; readonly groupInstanceId?: string },
    assigned: readonly TopicPartition[],
  ): Promise<string | undefined> {
    // The helper process connects on its own: no admin client of this process is needed.
    const mine = (await describeGroupInHelper(this.clients, groupId, MEMBER_LOOKUP_TIMEOUT_MS)).members.filter((m) =>
      me.groupInstanceId !== undefined ? m.groupInstanceId === me.groupInstanceId : m.clientId === me.clientId,
    );
    const holding = mine.filter((m) =>
      assigned.every((tp) => m.assignment.some((a) => a.topic === tp.topic && a.partition === tp.partition)),
    );
    return (holding[0] ?? mine[0])?.memberId;
  }
}
