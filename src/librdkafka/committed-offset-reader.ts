import type { CommittedPosition } from '../runtime/ports.js';
import { call, type NativeConsumer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';

/** A partition's answer in the binding's `committed()`: its offset and metadata, or an Error (the message only). */
type CommittedAnswer = { readonly partition: number; readonly offset?: number; readonly metadata?: string } | Error;

/** librdkafka's text of UNSTABLE_OFFSET_COMMIT: the binding gives a partition's error as its message alone. */
const UNSTABLE_OFFSET_COMMIT_MESSAGE = 'Broker: There are unstable offsets that need to be cleared';

/**
 * Reads a consumer group's committed offsets, with their metadata, on librdkafka through a
 * consumer of the group that never joins it (`committed()`, librdkafka's `rd_kafka_committed`:
 * an OffsetFetch through the consumer's group coordinator connection), one per group and
 * isolation level, kept until {@link close}.
 *
 * Not through the admin client's `listConsumerGroupOffsets`: in librdkafka 2.15 that request
 * aborts the whole process when the coordinator's connection drops under it or the coordinator
 * moves (`rd_kafka_enq_once_del_source_return: Assertion 'eonce->refcnt > 0' failed`,
 * librdkafka issue 4605 and pull request 5397; a NULL consumer group on NOT_COORDINATOR,
 * confluent-kafka-javascript issue 374) — a broker restart killed a worker reading its start
 * offsets in the fault campaign. The consumer's own OffsetFetch path is the one every
 * librdkafka consumer uses at each assignment.
 *
 * With `requireStable` the consumer reads `isolation.level=read_committed`, for which librdkafka
 * sets KIP-447's `require_stable` on the OffsetFetch and asks again while the broker answers
 * UNSTABLE_OFFSET_COMMIT; a partition still unstable after that is asked again every 20 ms
 * within the timeout.
 */
export class CommittedOffsetReader {
  private readonly consumers = new Map<string, Promise<NativeConsumer>>();
  /** Reads under way: {@link close} waits for them, since a consumer disconnected under its `committed()` call crashes the process. */
  private readonly reading = new Set<Promise<unknown>>();
  private closed = false;

  /** @param timeoutMs how long one read may take, ms (the coordinator found, the offsets answered) */
  constructor(
    private readonly clients: NativeClients,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Committed offsets (with metadata) of `partitions` of `topic` in `groupId`; a partition with
   * none is absent. A partition's error fails the read: it is never taken for "no offset",
   * which would start a task at the log start.
   *
   * @throws the binding's error (e.g. `Local: Timed out` when no coordinator answered), a
   *   partition's error, UNSTABLE_OFFSET_COMMIT still after the timeout, or an Error once
   *   {@link close} was called
   */
  read(groupId: string, topic: string, partitions: readonly number[], requireStable: boolean): Promise<Map<number, CommittedPosition>> {
    if (this.closed) return Promise.reject(new Error('the committed-offset reader is closed'));
    const reading = this.readOffsets(groupId, topic, partitions, requireStable);
    const settled = reading.then(
      () => undefined,
      () => undefined,
    );
    this.reading.add(settled);
    void settled.then(() => this.reading.delete(settled));
    return reading;
  }

  private async readOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    requireStable: boolean,
  ): Promise<Map<number, CommittedPosition>> {
    const consumer = await this.consumer(groupId, requireStable);
    const offsets = new Map<number, CommittedPosition>();
    const deadline = Date.now() + this.timeoutMs;
    let pending = [...partitions];
    while (pending.length > 0) {
      const asked = pending;
      const answers = await call<CommittedAnswer[]>((cb) =>
        consumer.committed(
          asked.map((partition) => ({ topic, partition })),
          Math.max(1, deadline - Date.now()),
          cb,
        ),
      );
      pending = [];
      answers.forEach((answer, i) => {
        if (answer instanceof Error) {
          if (requireStable && answer.message === UNSTABLE_OFFSET_COMMIT_MESSAGE && Date.now() < deadline) pending.push(asked[i]!);
          else throw answer;
        } else if (answer.offset !== undefined && answer.offset >= 0)
          offsets.set(answer.partition, { offset: answer.offset, metadata: answer.metadata || undefined });
      });
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.clients.router.heard();
    return offsets;
  }

  /**
   * Disconnects the consumers, once the reads under way ended (each within its timeout): the
   * binding crashes the process (SIGSEGV) when a consumer is disconnected under a `committed()`
   * call. Reads asked for after this fail.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.reading]);
    const consumers = [...this.consumers.values()];
    this.consumers.clear();
    await Promise.all(
      consumers.map(async (c) => {
        const consumer = await c.catch(() => undefined);
        if (consumer !== undefined) await call((cb) => consumer.disconnect(cb)).catch(() => undefined);
      }),
    );
  }

  private consumer(groupId: string, requireStable: boolean): Promise<NativeConsumer> {
    const key = `${requireStable ? 'stable' : 'last'} ${groupId}`;
    let consumer = this.consumers.get(key);
    if (consumer === undefined) {
      consumer = this.connect(groupId, requireStable);
      this.consumers.set(key, consumer);
      // One that failed to connect is not kept: the next read tries again.
      const failed = consumer;
      failed.catch(() => this.consumers.get(key) === failed && this.consumers.delete(key));
    }
    return consumer;
  }

  private connect(groupId: string, requireStable: boolean): Promise<NativeConsumer> {
    return this.clients.nonJoiningConsumer({
      'group.id': groupId,
      'isolation.level': requireStable ? 'read_committed' : 'read_uncommitted',
    });
  }
}
