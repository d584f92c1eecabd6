import type { TopicPartitionOffset } from '../record/record-types.js';
import type { LibrdkafkaError, NativeConsumer, NativeTopicPartitionOffset } from './librdkafka-native.js';

/** How long a commit may wait for the group coordinator's answer, ms (librdkafka defers commits while it has no coordinator). */
const COMMIT_ANSWER_TIMEOUT_MS = 60_000;

interface Waiting {
  readonly key: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/** A commit's partitions and offsets as one comparable string. */
function keyOf(offsets: ReadonlyArray<{ topic: string; partition: number; offset?: number }>): string {
  return offsets
    .map((o) => `${o.topic}\u0000${o.partition}\u0000${o.offset ?? ''}`)
    .sort()
    .join('\u0001');
}

/**
 * Offset commits through a librdkafka consumer that settle when the group coordinator has
 * answered. The binding's `commit`/`commitCb` only enqueue the commit (librdkafka's
 * `commitAsync`): its outcome comes later, as librdkafka's `offset_commit_cb` — the binding's
 * `offset.commit` event, enabled by `offset_commit_cb: true` in the consumer's configuration and
 * served while the consumer is polled (`consume`). A commit's answer is found by its partitions
 * and offsets (the event carries them), else — an error without offsets — it is the oldest
 * waiting commit's. librdkafka reports a partition's error (a stale generation, a rebalance in
 * progress) as the commit's error.
 *
 * Kafka's `commitSync` semantics, which the revocation callback of a cooperative rebalance
 * needs: the partitions go only once their offsets are committed.
 */
export class AwaitedCommits {
  private readonly waiting: Waiting[] = [];
  /** Set once the consumer stopped polling: commits fail at once. */
  private abandoned: unknown;

  constructor(private readonly consumer: NativeConsumer) {
    consumer.on('offset.commit', (err: LibrdkafkaError | undefined, offsets: NativeTopicPartitionOffset[] | undefined) =>
      this.answered(err, offsets),
    );
  }

  /**
   * Commits `offsets` (next offset to read) with the member's generation.
   *
   * @throws the binding's error when librdkafka refuses the commit or the coordinator rejects
   *   it; an Error when no answer comes within 60 s; the {@link abandon} error once the consumer
   *   stopped polling
   */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    const list = offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset }));
    if (this.abandoned !== undefined) return Promise.reject(this.abandoned);
    return new Promise<void>((resolve, reject) => {
      const key = keyOf(list);
      const timer = setTimeout(() => {
        this.remove(waiting);
        reject(new Error(`no answer to the offset commit within ${COMMIT_ANSWER_TIMEOUT_MS} ms`));
      }, COMMIT_ANSWER_TIMEOUT_MS);
      const waiting: Waiting = { key, resolve, reject, timer };
      this.waiting.push(waiting);
      try {
        this.consumer.commit(list);
      } catch (error) {
        this.remove(waiting);
        clearTimeout(timer);
        reject(error);
      }
    });
  }

  /**
   * The consumer stopped polling (it stopped, or failed fatally): no answer will come, so every
   * waiting commit fails now with `error`, and so does every later one.
   */
  abandon(error: unknown): void {
    this.abandoned = error;
    for (const waiting of this.waiting.splice(0)) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
  }

  private answered(err: LibrdkafkaError | undefined, offsets: NativeTopicPartitionOffset[] | undefined): void {
    const key = offsets === undefined || offsets.length === 0 ? undefined : keyOf(offsets);
    const waiting = key === undefined ? this.waiting[0] : this.waiting.find((w) => w.key === key);
    if (waiting === undefined) return;
    this.remove(waiting);
    clearTimeout(waiting.timer);
    if (err) waiting.reject(err);
    else waiting.resolve();
  }

  private remove(waiting: Waiting): void {
    const at = this.waiting.indexOf(waiting);
    if (at >= 0) this.waiting.splice(at, 1);
  }
}
