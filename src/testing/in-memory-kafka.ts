import { ProducerFencedError, TestDriverError } from '../errors.js';
import type { InputRecord, OutputRecord, TopicPartitionOffset } from '../record/record-types.js';
import type { Clock, OffsetCommitter, OffsetReader, RecordProducer, TransactionalProducer } from '../runtime/ports.js';
import { murmur2Partition } from '../record/murmur2.js';

/** Operations of the in-memory broker that a fault hook can intercept. */
export type BrokerOperation = 'produce' | 'commit' | 'txn-begin' | 'txn-send' | 'txn-send-offsets' | 'txn-commit' | 'txn-abort';

/**
 * Called before and after every broker operation. Throw to make the operation fail (before:
 * nothing happens; after: it happened, the caller sees an error), or return a promise that
 * never settles to freeze the caller, as a crashed process would be.
 */
export type BrokerFaultHook = (
  operation: BrokerOperation,
  phase: 'before' | 'after',
  detail: { readonly producer?: string },
) => void | Promise<void>;

interface Txn {
  state: 'open' | 'committed' | 'aborted';
  groupId: string;
  offsets: TopicPartitionOffset[];
}

interface StoredRecord {
  readonly offset: number;
  readonly record: OutputRecord;
  readonly timestamp: number;
  readonly txn: Txn | null;
}

/**
 * An in-memory Kafka for the TopologyTestDriver and unit tests: topics with partitions,
 * consumer-group offsets, an idempotent producer, and transactional producers with
 * read_committed visibility and zombie fencing (a newer producer with the same
 * transactional id aborts the older one's open transaction and fences it).
 * Records without an explicit partition are partitioned by murmur2 of the key, as kafkajs
 * and the Java client do.
 */
export class InMemoryKafka {
  private readonly topics = new Map<string, StoredRecord[][]>();
  private readonly groups = new Map<string, Map<string, { readonly offset: number; readonly metadata: string | undefined }>>();
  private readonly epochs = new Map<string, { open: Txn | null }>();
  private roundRobin = 0;
  /** Set to intercept operations (fault injection). */
  faultHook: BrokerFaultHook | undefined;

  constructor(private readonly clock: Clock) {}

  /** Creates a topic; a no-op when it exists. */
  createTopic(topic: string, partitions = 1): void {
    if (!this.topics.has(topic))
      this.topics.set(
        topic,
        Array.from({ length: partitions }, () => []),
      );
  }

  hasTopic(topic: string): boolean {
    return this.topics.has(topic);
  }

  /** Partition count of a topic. @throws Error when the topic does not exist */
  partitionCount(topic: string): number {
    return this.log(topic).length;
  }

  /** The offset after the last record of a partition (the log-end offset). */
  endOffset(topic: string, partition: number): number {
    return this.partitionLog(topic, partition).length;
  }

  /**
   * Reads records from `fromOffset`. With `read_committed` (the default), reading stops at the
   * first record of an open transaction and skips records of aborted ones.
   *
   * @returns the records and the offset to read next
   */
  read(
    topic: string,
    partition: number,
    fromOffset: number,
    maxRecords = Infinity,
    isolation: 'read_committed' | 'read_uncommitted' = 'read_committed',
  ): { records: InputRecord[]; nextOffset: number } {
    const log = this.partitionLog(topic, partition);
    const records: InputRecord[] = [];
    let next = fromOffset;
    while (next < log.length && records.length < maxRecords) {
      const stored = log[next]!;
      if (isolation === 'read_committed' && stored.txn !== null) {
        if (stored.txn.state === 'open') break;
        if (stored.txn.state === 'aborted') {
          next++;
          continue;
        }
      }
      const { key, value, headers } = stored.record;
      records.push({ topic, partition, offset: stored.offset, timestamp: stored.timestamp, key, value, headers });
      next++;
    }
    return { records, nextOffset: next };
  }

  /** Every visible record of a topic (all partitions, each in offset order). */
  readAll(topic: string, isolation: 'read_committed' | 'read_uncommitted' = 'read_committed'): InputRecord[] {
    if (!this.topics.has(topic)) return [];
    return this.log(topic).flatMap((_, p) => this.read(topic, p, 0, Infinity, isolation).records);
  }

  /** A group's committed offset (next offset to read), if any. */
  committedOffset(groupId: string, topic: string, partition: number): number | undefined {
    return this.groups.get(groupId)?.get(`${topic}/${partition}`)?.offset;
  }

  /** An idempotent producer (acks=-1): `send` appends every record before it resolves. */
  producer(): RecordProducer {
    return {
      send: async (records) => {
        await this.fault('produce', 'before', {});
        for (const record of records) this.append(record, null);
        await this.fault('produce', 'after', {});
      },
    };
  }

  /** Commits consumer-group offsets for `groupId`. */
  committer(groupId: string): OffsetCommitter {
    return {
      commit: async (offsets) => {
        await this.fault('commit', 'before', {});
        this.storeOffsets(groupId, offsets);
        await this.fault('commit', 'after', {});
      },
    };
  }

  /**
   * A transactional producer. Creating it is `initTransactions`: it fences every earlier
   * producer with the same id and aborts that producer's open transaction.
   */
  transactionalProducer(transactionalId: string): TransactionalProducer {
    const detail = { producer: transactionalId };
    let entry = this.initTransactions(transactionalId);
    const check = (): void => {
      if (this.epochs.get(transactionalId) !== entry) throw new ProducerFencedError(transactionalId);
    };
    const current = (): Txn => {
      check();
      if (entry.open === null) throw new TestDriverError(`producer '${transactionalId}': no transaction in progress`);
      return entry.open;
    };
    const step = async (op: BrokerOperation, action: () => void): Promise<void> => {
      await this.fault(op, 'before', detail);
      action();
      await this.fault(op, 'after', detail);
    };
    return {
      transactionalId,
      begin: () =>
        step('txn-begin', () => {
          check();
          if (entry.open !== null) throw new TestDriverError(`producer '${transactionalId}': a transaction is already in progress`);
          entry.open = { state: 'open', groupId: '', offsets: [] };
        }),
      send: (records) =>
        step('txn-send', () => {
          const txn = current();
          for (const record of records) this.append(record, txn);
        }),
      sendOffsets: (groupId, offsets) =>
        step('txn-send-offsets', () => {
          const txn = current();
          txn.groupId = groupId;
          txn.offsets.push(...offsets);
        }),
      commit: () =>
        step('txn-commit', () => {
          const txn = current();
          txn.state = 'committed';
          if (txn.offsets.length > 0) this.storeOffsets(txn.groupId, txn.offsets);
          entry.open = null;
        }),
      abort: () =>
        step('txn-abort', () => {
          check();
          if (entry.open !== null) entry.open.state = 'aborted';
          entry.open = null;
        }),
      // As on a real broker, re-initializing succeeds even for a fenced producer: it fences
      // the newer one in turn (the writer then finds out from the committed offset).
      reset: async () => {
        entry = this.initTransactions(transactionalId);
      },
    };
  }

  /** Reads committed offsets of consumer groups. */
  offsetReader(): OffsetReader {
    return {
      committedOffset: async (groupId, topic, partition) => this.committedOffset(groupId, topic, partition),
      committedPosition: async (groupId, topic, partition) => {
        const stored = this.groups.get(groupId)?.get(`${topic}/${partition}`);
        return stored === undefined ? undefined : { offset: stored.offset, metadata: stored.metadata };
      },
    };
  }

  /** `InitProducerId`: a new epoch for the id; the previous epoch's open transaction is aborted. */
  private initTransactions(transactionalId: string): { open: Txn | null } {
    const previous = this.epochs.get(transactionalId);
    if (previous?.open) previous.open.state = 'aborted';
    const entry = { open: null as Txn | null };
    this.epochs.set(transactionalId, entry);
    return entry;
  }

  private async fault(operation: BrokerOperation, phase: 'before' | 'after', detail: { producer?: string }): Promise<void> {
    if (this.faultHook) await this.faultHook(operation, phase, detail);
  }

  private storeOffsets(groupId: string, offsets: readonly TopicPartitionOffset[]): void {
    let group = this.groups.get(groupId);
    if (group === undefined) this.groups.set(groupId, (group = new Map()));
    for (const o of offsets) group.set(`${o.topic}/${o.partition}`, { offset: o.offset, metadata: o.metadata || undefined });
  }

  private append(record: OutputRecord, txn: Txn | null): void {
    const log = this.log(record.topic);
    const partition = record.partition ?? (record.key === null ? this.roundRobin++ % log.length : murmur2Partition(record.key, log.length));
    const partitionLog = log[partition];
    if (partitionLog === undefined) throw new TestDriverError(`topic '${record.topic}' has no partition ${partition}`);
    partitionLog.push({ offset: partitionLog.length, record, timestamp: record.timestamp ?? this.clock.now(), txn });
  }

  private log(topic: string): StoredRecord[][] {
    const log = this.topics.get(topic);
    if (log === undefined) throw new TestDriverError(`unknown topic '${topic}': create it first`);
    return log;
  }

  private partitionLog(topic: string, partition: number): StoredRecord[] {
    const log = this.log(topic)[partition];
    if (log === undefined) throw new TestDriverError(`topic '${topic}' has no partition ${partition}`);
    return log;
  }
}
