import { ProducerFencedError, ReplayFencedError } from '../../errors.js';
import type { KafkaClient, TransactionalProducerClient } from '../../kafka/kafka-client.js';
import type { OutputRecord, TopicPartitionOffset } from '../../record/record-types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { CappedBackoff } from '../../failure/capped-backoff.js';
import { errorMessageOf } from '../../failure/classify-error.js';

/**
 * How often a chunk's transaction is tried again when it fails before its commit: the broker
 * answers CONCURRENT_TRANSACTIONS to a transaction begun while the previous one's markers are
 * still being written. It was aborted, so trying again writes nothing twice.
 */
const PRE_COMMIT_TRIES = 6;

/** `transaction.timeout.ms` of a replay's producer: a chunk's transaction never waits for `--rate` (the wait comes first). */
const REPLAY_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * The `transactional.id` of `weir dlq replay` through the consumer group `group`:
 * `<group>.producer`. Every run of one group shares it, so a new run fences the older one.
 */
export function replayTransactionalId(group: string): string {
  return `${group}.producer`;
}

/**
 * Writes a replay's chunks exactly once: each chunk's re-published records and the replay
 * group's new position in the DLQ topic go in one Kafka transaction (begin → send →
 * `sendOffsets` for the replay group → commit, KIP-98), so a crash at any moment leaves, for
 * `read_committed` readers, either the whole chunk and its position or neither.
 *
 * Concurrency is guarded by transactional-id fencing, not by group membership: `open()` runs
 * `InitProducerId` for {@link replayTransactionalId}, which bumps the producer epoch (an
 * older run still alive is fenced at its next write) and completes the transaction a crashed
 * run left open (aborted), before the new run reads the group's position.
 *
 * @example
 * const txns = await ReplayTransactions.open(client, 'orders.dlq', 'weir-replay.orders.dlq');
 * await txns.write(records, { topic: 'orders.dlq', partition: 0, offset: 500 });
 * await txns.close();
 */
export class ReplayTransactions {
  private constructor(
    private readonly producer: TransactionalProducerClient,
    private readonly dlqTopic: string,
    private readonly group: string,
  ) {}

  /**
   * Initializes the replay's transactional producer, fencing older runs of `group`.
   *
   * @throws ReplayFencedError when an even newer run fenced this one meanwhile
   * @throws the client's error when the broker cannot be reached
   */
  static async open(client: KafkaClient, dlqTopic: string, group: string): Promise<ReplayTransactions> {
    const producer = client.transactionalProducer({
      transactionalId: replayTransactionalId(group),
      transactionTimeoutMs: REPLAY_TRANSACTION_TIMEOUT_MS,
    });
    const txns = new ReplayTransactions(producer, dlqTopic, group);
    await txns.fencedAs(() => producer.init());
    return txns;
  }

  /**
   * Commits `records` (possibly none: a chunk of refused or filtered-out records moves only
   * the position) and the replay group's `position` (the next DLQ offset to read) in one
   * transaction. A failed transaction is aborted.
   *
   * @throws ReplayFencedError when a newer run of the group fenced this one
   * @throws the client's error when the transaction failed (the outcome of a failed commit is
   *   in doubt; the next run's `open()` resolves it)
   * @throws AggregateError of the failure and the abort's error when the abort failed too (not
   *   tried again: kafkajs leaves a producer whose abort failed unable to begin another), a
   *   fence included when the failure was the commit's (its outcome is in doubt)
   */
  async write(records: readonly OutputRecord[], position: TopicPartitionOffset): Promise<void> {
    const backoff = new CappedBackoff(50, 1_000);
    for (let tries = 1; ; tries++) {
      let committing = false;
      let abortFailed = false;
      try {
        await this.fencedAs(async () => {
          try {
            await this.producer.begin();
            if (records.length > 0) await this.producer.send(records);
            await this.producer.sendOffsets(this.group, [position]);
            committing = true;
            await this.producer.commit();
          } catch (error) {
            if (error instanceof ProducerFencedError) throw error;
            abortFailed = true;
            await this.abortAfter(error, committing);
            abortFailed = false;
            throw error;
          }
        });
        return;
      } catch (error) {
        // A commit that failed is in doubt (it may have committed), and a producer whose abort
        // failed is left mid-abort (kafkajs refuses to begin again): never try either again here.
        // Not `reset()` either: its InitProducerId would fence a newer run of the group.
        if (committing || abortFailed || error instanceof ReplayFencedError || tries >= PRE_COMMIT_TRIES) throw error;
        await sleep(backoff.next());
      }
    }
  }

  /**
   * Aborts the transaction that `failure` broke. A fence that only the abort reveals (the
   * broker bumped the epoch for a newer run while this transaction failed for another reason)
   * is the outcome, so its ProducerFencedError goes through, unless `failure` was the commit's:
   * that commit may have landed before the fence, so the run must not report its chunk as not
   * written. Any other failed abort is thrown as an AggregateError of both, named in its message.
   */
  private async abortAfter(failure: unknown, commitInDoubt: boolean): Promise<void> {
    try {
      await this.producer.abort();
    } catch (abortError) {
      if (abortError instanceof ProducerFencedError && !commitInDoubt) throw abortError;
      const doubt = commitInDoubt ? " (the commit's outcome is in doubt: the next run of the group resolves it)" : '';
      const message = `${errorMessageOf(failure)}; aborting that transaction failed too: ${errorMessageOf(abortError)}${doubt}`;
      throw new AggregateError([failure, abortError], message, { cause: abortError });
    }
  }

  async close(): Promise<void> {
    await this.producer.disconnect().catch(() => undefined);
  }

  private async fencedAs<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (error instanceof ProducerFencedError) throw new ReplayFencedError(this.dlqTopic, this.producer.transactionalId, { cause: error });
      throw error;
    }
  }
}
