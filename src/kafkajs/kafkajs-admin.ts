import type { Admin, Kafka } from 'kafkajs';
import { IllegalStateError } from '../errors.js';
import type { CommittedPosition } from '../runtime/ports.js';
import type { GroupDescription, KafkaAdmin, TopicToCreate } from '../kafka/kafka-admin.js';
import { createKafkajsCluster, KafkaJSConnectionError, type KafkajsCluster } from './kafkajs-library.js';

/**
 * Runs a kafkajs admin call that reads the cluster's metadata. kafkajs asks any broker and, when
 * every one fails (a broker restarting, a request timing out on a loaded machine), its broker
 * pool's `withBroker` swallows their errors and yields `null`, on which `listTopics` and
 * `fetchTopicMetadata` fail with a TypeError (`Cannot destructure property 'topicMetadata'…`).
 * That is a connection failure, so it is thrown as kafkajs' own `KafkaJSConnectionError`
 * (retriable): a worker's start waits it out as it does a broker restarting.
 *
 * @throws KafkaJSConnectionError in place of that TypeError; any other error as it is
 */
async function metadataRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof TypeError && error.message.includes('topicMetadata'))
      throw new KafkaJSConnectionError(`no Kafka broker answered the metadata request (kafkajs: ${error.message})`);
    throw error;
  }
}

/** {@link KafkaAdmin} on the kafkajs admin client. */
export class KafkajsAdmin implements KafkaAdmin {
  private readonly admin: Admin;
  /** kafkajs' internal cluster, for the requests its admin lacks (`LeaveGroup`); connected on first use. */
  private cluster: Promise<KafkajsCluster> | undefined;

  constructor(private readonly kafka: Kafka) {
    // Fewer retries than the client's: an unreachable broker fails a start in seconds.
    this.admin = kafka.admin({ retry: { retries: 4, initialRetryTime: 300, maxRetryTime: 3_000 } });
  }

  /** @throws the kafkajs error when no broker answers */
  async connect(): Promise<void> {
    await this.admin.connect();
  }

  async disconnect(): Promise<void> {
    const cluster = this.cluster;
    this.cluster = undefined;
    await cluster?.then((c) => c.disconnect()).catch(() => undefined);
    await this.admin.disconnect();
  }

  /** @throws KafkaJSConnectionError (retriable) when no broker answered the metadata request */
  async listTopics(): Promise<string[]> {
    return metadataRead(() => this.admin.listTopics());
  }

  /** @throws KafkaJSConnectionError (retriable) when no broker answered the metadata request */
  async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    const existing = new Set(await this.listTopics());
    const wanted = topics.filter((t) => existing.has(t));
    const counts = new Map<string, number>();
    if (wanted.length === 0) return counts;
    const { topics: metadata } = await metadataRead(() => this.admin.fetchTopicMetadata({ topics: [...new Set(wanted)] }));
    for (const t of metadata) counts.set(t.name, t.partitions.length);
    return counts;
  }

  /**
   * A KRaft broker learns of a new topic from the controller a moment after it was created, and
   * kafkajs gives up at once when the broker does not know it yet (`UNKNOWN_TOPIC_OR_PARTITION`):
   * then this waits (up to `timeoutMs`) until the broker has leaders for every partition.
   *
   * @throws the kafkajs error when the topics cannot be created, IllegalStateError when they get no leaders in time
   */
  async createTopics(topics: readonly TopicToCreate[], timeoutMs = 30_000): Promise<boolean> {
    if (topics.length === 0) return false;
    let created = true;
    try {
      // kafkajs answers false when every topic existed already: another worker (or stream
      // thread) starting at the same moment may have created them a moment ago, and this
      // broker may not know them yet either, so the wait below runs in that case too.
      created = await this.admin.createTopics({
        waitForLeaders: true,
        timeout: timeoutMs,
        topics: topics.map((t) => ({
          topic: t.topic,
          numPartitions: t.partitions,
          ...(t.config ? { configEntries: Object.entries(t.config).map(([name, value]) => ({ name, value })) } : {}),
        })),
      });
    } catch (error) {
      if ((error as { type?: unknown }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error;
    }
    const names = topics.map((t) => t.topic);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const metadata = await metadataRead(() => this.admin.fetchTopicMetadata({ topics: names })).catch((error: unknown) => {
        if (Date.now() > deadline) throw error;
        return undefined;
      });
      if (metadata?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return created;
      if (Date.now() > deadline)
        throw new IllegalStateError(`topics ${names.join(', ')} have no leaders ${timeoutMs} ms after they were created`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async committedOffset(groupId: string, topic: string, partition: number): Promise<number | undefined> {
    return (await this.committedOffsets(groupId, topic)).get(partition);
  }

  async committedPosition(groupId: string, topic: string, partition: number): Promise<CommittedPosition | undefined> {
    const [result] = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    const p = result?.partitions.find((q) => q.partition === partition);
    const offset = Number(p?.offset ?? -1);
    return p === undefined || offset < 0 ? undefined : { offset, metadata: p.metadata || undefined };
  }

  async committedOffsets(groupId: string, topic: string, partitions?: readonly number[]): Promise<Map<number, number>> {
    const [result] = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    const wanted = partitions === undefined ? undefined : new Set(partitions);
    const offsets = new Map<number, number>();
    for (const p of result?.partitions ?? []) {
      const offset = Number(p.offset);
      if (offset >= 0 && (wanted === undefined || wanted.has(p.partition))) offsets.set(p.partition, offset);
    }
    return offsets;
  }

  async earliestOffsets(topic: string): Promise<Map<number, number>> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, Number(o.low)]));
  }

  async latestOffsets(topic: string): Promise<Map<number, number>> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    const { groups } = await this.admin.describeGroups([groupId]);
    const group = groups[0];
    if (group === undefined) return { groupId, state: 'Dead', protocol: '', members: [] };
    return {
      groupId,
      state: group.state,
      protocol: group.protocol,
      members: group.members.map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        host: m.clientHost,
        assignment: decodeAssignment(m.memberAssignment),
      })),
    };
  }

  async deleteGroups(groupIds: readonly string[]): Promise<void> {
    if (groupIds.length > 0) await this.admin.deleteGroups([...groupIds]);
  }

  /**
   * kafkajs' admin has no `LeaveGroup` (nor Java's `removeMembersFromConsumerGroup`), so this
   * sends it through kafkajs' internal cluster and coordinator broker (see
   * `createKafkajsCluster`), as kafkajs' consumer does when it leaves.
   */
  async leaveGroup(groupId: string, memberId: string): Promise<void> {
    this.cluster ??= (async () => {
      const cluster = createKafkajsCluster(this.kafka);
      await cluster.connect();
      return cluster;
    })();
    const cluster = await this.cluster.catch((error: unknown) => {
      this.cluster = undefined;
      throw error;
    });
    const coordinator = await cluster.findGroupCoordinator({ groupId });
    try {
      await coordinator.leaveGroup({ groupId, memberId });
    } catch (error) {
      if ((error as { type?: unknown }).type !== 'UNKNOWN_MEMBER_ID') throw error;
    }
  }
}

/**
 * A member's assignment as the consumer protocol encodes it (`ConsumerProtocolAssignment`:
 * version int16, then an array of topic name + int32 partitions).
 */
function decodeAssignment(bytes: Buffer): Array<{ topic: string; partition: number }> {
  const out: Array<{ topic: string; partition: number }> = [];
  if (bytes.length < 6) return out;
  let at = 2;
  const topics = bytes.readInt32BE(at);
  at += 4;
  for (let t = 0; t < topics && at < bytes.length; t++) {
    const length = bytes.readInt16BE(at);
    at += 2;
    const topic = bytes.toString('utf8', at, at + length);
    at += length;
    const partitions = bytes.readInt32BE(at);
    at += 4;
    for (let p = 0; p < partitions; p++, at += 4) out.push({ topic, partition: bytes.readInt32BE(at) });
  }
  return out;
}
