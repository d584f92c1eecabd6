import { IllegalStateError } from '../errors.js';
import type { CommittedPosition } from '../runtime/ports.js';
import type { GroupDescription, KafkaAdmin, TopicToCreate } from '../kafka/kafka-admin.js';
import { CommittedOffsetReader } from './committed-offset-reader.js';
import { describeGroupInHelper } from './isolated-describe-groups.js';
import { ERR, codeOf } from './librdkafka-errors.js';
import { call, type NativeAdmin, type NativeTopicDescription } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';

/**
 * {@link KafkaAdmin} on librdkafka's admin client (the binding's `AdminClient`). Requests time
 * out after 10 s (`failFast`, the CLI tools: 5 s); `connect()` asks for the topic list, so an
 * unreachable broker fails there (`failFast`: within about 3 s). Committed offsets are the last
 * committed ones (offsets of a transaction still in flight are not read, as with kafkajs), or,
 * with `requireStable` (a new task's start offsets, and always for `committedPosition`), only once
 * no transaction holds them; they are read through consumers of the group
 * ({@link CommittedOffsetReader}).
 * End offsets are the last stable offsets (`isolation.level=read_committed`).
 */
export class LibrdkafkaAdmin implements KafkaAdmin {
  private client: NativeAdmin | undefined;
  private readonly timeout: number;
  /** Committed offsets are read through consumers of the group, not this admin client. */
  private readonly offsetReader: CommittedOffsetReader;

  constructor(private readonly clients: NativeClients) {
    this.timeout = clients.options.failFast ? 5_000 : 10_000;
    this.offsetReader = new CommittedOffsetReader(clients, this.timeout);
  }

  /** @throws the binding's error when no broker answers */
  async connect(): Promise<void> {
    this.client ??= this.clients.admin();
    try {
      // The CLI tools (failFast) report an unreachable broker within about 3 s.
      const timeout = this.clients.options.failFast ? 3_000 : this.timeout;
      await this.request((a, cb) => a.listTopics({ timeout }, cb));
    } catch (error) {
      this.disconnectNow();
      throw error;
    }
  }

  async disconnect(): Promise<void> {
    this.disconnectNow();
    await this.offsetReader.close();
  }

  private disconnectNow(): void {
    const client = this.client;
    this.client = undefined;
    client?.disconnect();
  }

  async listTopics(): Promise<string[]> {
    return this.request((a, cb) => a.listTopics({ timeout: this.timeout }, cb));
  }

  async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const existing = new Set(await this.listTopics());
    const wanted = [...new Set(topics)].filter((t) => existing.has(t));
    if (wanted.length === 0) return counts;
    for (const t of await this.describeTopics(wanted)) if (t.error === undefined) counts.set(t.name, t.partitions.length);
    return counts;
  }

  /**
   * Creates each topic (`CreateTopics`, replication factor: the broker's default); a topic that
   * exists already (another worker or stream thread created it a moment before) is not an
   * error. Then waits until every partition has a leader, up to `timeoutMs`.
   *
   * @throws the binding's error when a topic cannot be created, IllegalStateError when they get no leaders in time
   */
  async createTopics(topics: readonly TopicToCreate[], timeoutMs = 30_000): Promise<boolean> {
    if (topics.length === 0) return false;
    const created = await Promise.all(
      topics.map((t) =>
        this.request<void>((a, cb) =>
          a.createTopic(
            { topic: t.topic, num_partitions: t.partitions, replication_factor: -1, ...(t.config ? { config: { ...t.config } } : {}) },
            Math.min(timeoutMs, 30_000),
            cb,
          ),
        ).then(
          () => true,
          (error: unknown) => {
            if (codeOf(error) === ERR.TOPIC_ALREADY_EXISTS) return false;
            throw error;
          },
        ),
      ),
    );
    const names = topics.map((t) => t.topic);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const described = await this.describeTopics(names).catch((error: unknown) => {
        if (Date.now() > deadline) throw error;
        return undefined;
      });
      if (described?.every((t) => t.error === undefined && t.partitions.length > 0 && t.partitions.every((p) => (p.leader?.id ?? -1) >= 0)))
        return created.some((c) => c);
      if (Date.now() > deadline)
        throw new IllegalStateError(`topics ${names.join(', ')} have no leaders ${timeoutMs} ms after they were created`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async committedOffset(groupId: string, topic: string, partition: number): Promise<number | undefined> {
    return (await this.committed(groupId, topic, [partition], false)).get(partition)?.offset;
  }

  /**
   * Read with `require_stable`: a transaction whose commit the coordinator has decided but whose
   * markers are not yet written answers UNSTABLE_OFFSET_COMMIT (asked again), so the position
   * read is the one the last ended transaction left, never the one before it.
   */
  async committedPosition(groupId: string, topic: string, partition: number): Promise<CommittedPosition | undefined> {
    return (await this.committed(groupId, topic, [partition], true)).get(partition);
  }

  async committedOffsets(
    groupId: string,
    topic: string,
    partitions?: readonly number[],
    options: { readonly requireStable?: boolean } = {},
  ): Promise<Map<number, number>> {
    let asked = partitions;
    if (asked === undefined) {
      const [described] = await this.describeTopics([topic]);
      if (described === undefined || described.error !== undefined) return new Map();
      asked = described.partitions.map((p) => p.partition);
    }
    const positions = await this.committed(groupId, topic, asked, options.requireStable === true);
    return new Map([...positions].map(([partition, p]) => [partition, p.offset]));
  }

  /**
   * Committed offsets, with their metadata, of partitions of one topic, read through
   * {@link CommittedOffsetReader} (not the admin client's `listConsumerGroupOffsets`, which can
   * abort the process when the coordinator's connection drops). A partition's error fails the
   * read: it is never taken for "no offset", which would start a task at the log start.
   *
   * - By default the last committed ones: offsets a transaction still in flight added are not
   *   read (as kafkajs reads them; `weir status` and the DLQ tools of a busy exactly_once group
   *   never wait).
   * - `requireStable` (KIP-447's `require_stable`, as Kafka Streams' consumer reads a new task's
   *   offsets): a partition whose offsets sit in an open transaction — a zombie's, whose commit
   *   may still land — answers `UNSTABLE_OFFSET_COMMIT` until that transaction ends (at most
   *   `transaction.timeout.ms`), so it is asked again within the request timeout.
   *
   * @throws the binding's error, or UNSTABLE_OFFSET_COMMIT still after the request timeout
   */
  private async committed(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    requireStable: boolean,
  ): Promise<Map<number, CommittedPosition>> {
    if (this.client === undefined) throw new IllegalStateError('the librdkafka admin client is not connected');
    return this.offsetReader.read(groupId, topic, partitions, requireStable);
  }

  async earliestOffsets(topic: string): Promise<Map<number, number>> {
    return this.logOffsets(topic, 'EARLIEST');
  }

  async latestOffsets(topic: string): Promise<Map<number, number>> {
    return this.logOffsets(topic, 'LATEST');
  }

  private async logOffsets(topic: string, spec: 'EARLIEST' | 'LATEST'): Promise<Map<number, number>> {
    const offsets = new Map<number, number>();
    const [described] = await this.describeTopics([topic]);
    if (described === undefined || described.error !== undefined) return offsets;
    const { OffsetSpec, IsolationLevel } = this.clients.module;
    const partitions = described.partitions.map((p) => ({ topic, partition: p.partition, offset: OffsetSpec[spec] }));
    const result = await this.request<Array<{ partition: number; offset: number; error?: Error }>>((a, cb) =>
      a.listOffsets(partitions, { timeout: this.timeout, isolationLevel: IsolationLevel.READ_COMMITTED }, cb),
    );
    for (const r of result) {
      if (r.error !== undefined) throw r.error;
      offsets.set(r.partition, r.offset);
    }
    return offsets;
  }

  /**
   * The group's state, protocol and members, described in a helper process
   * ({@link describeGroupInHelper}: the binding crashes the process on a group description with
   * an error, e.g. while the group coordinator loads).
   *
   * @throws the binding's error, or DescribeGroupsHelperError when every try crashed
   */
  async describeGroup(groupId: string): Promise<GroupDescription> {
    if (this.client === undefined) throw new IllegalStateError('the librdkafka admin client is not connected');
    return describeGroupInHelper(this.clients, groupId, this.timeout);
  }

  async deleteGroups(groupIds: readonly string[]): Promise<void> {
    if (groupIds.length === 0) return;
    // Best effort: a group with members (or already gone) stays as it is.
    await this.request((a, cb) => a.deleteGroups([...groupIds], { timeout: this.timeout }, cb)).catch(() => undefined);
  }

  private async describeTopics(topics: string[]): Promise<NativeTopicDescription[]> {
    return this.request((a, cb) => a.describeTopics(topics, { timeout: this.timeout }, cb));
  }

  /** One admin request; a success tells the log router the cluster answers. */
  private async request<T>(start: (admin: NativeAdmin, cb: (err: any, value?: T) => void) => void): Promise<T> {
    const admin = this.client;
    if (admin === undefined) throw new IllegalStateError('the librdkafka admin client is not connected');
    const value = await call<T>((cb) => start(admin, cb));
    this.clients.router.heard();
    return value;
  }
}
