import { IllegalStateError } from '../errors.js';
import type { AwaitedCommits } from './awaited-commits.js';
import type { FetchDispatcher } from './fetch-dispatcher.js';
import { ERR } from './librdkafka-errors.js';
import type { LibrdkafkaLogRouter } from './librdkafka-log-router.js';
import {
  call,
  type LibrdkafkaError,
  type NativeConsumer,
  type NativeMessage,
  type NativeTopicPartitionOffset,
} from './librdkafka-native.js';
import type { PartitionFetches } from './partition-fetches.js';

/**
 * Most records one `consume` call returns: about what librdkafka prefetched, so a fetched batch
 * reaches its task whole (as kafkajs hands over a whole fetch). Pausing a partition makes
 * librdkafka drop what it prefetched for it, to fetch it again on resume; smaller calls left
 * more behind (1 000: 21 k records/s in bench/run.ts at 100 B, 5 000: 30 k).
 */
const CONSUME_BATCH = 5_000;
/** How long one `consume` call waits for a first record, ms (also the longest a seek or a stop waits for the loop). */
const CONSUME_WAIT_MS = 100;
/** How long a seek lets librdkafka apply it, ms. */
const SEEK_TIMEOUT_MS = 5_000;

/** What a {@link ConsumeLoop} works with. */
export interface ConsumeLoopParts {
  readonly fetches: PartitionFetches;
  readonly dispatcher: FetchDispatcher;
  readonly router: Pick<LibrdkafkaLogRouter, 'errorEvent' | 'heard'>;
  /** The consumer's commits waiting for the coordinator's answer: the loop's `consume` calls serve them. */
  readonly awaitedCommits: AwaitedCommits;
  /** Whether the loop goes on: its consumer is running (checked before and after every `consume` call). */
  readonly running: () => boolean;
  /**
   * What a failed `consume` call means (`GroupConsumerFailures.consumeFailed`): `{ error }`
   * when the loop must end with `error`, undefined when librdkafka goes on by itself (reported).
   */
  readonly failed: (error: unknown) => Promise<{ readonly error: unknown } | undefined>;
  /**
   * Whether the consumer failed fatally although its `consume` call did not say so
   * (`GroupConsumerFailures.fatalSeen`): undefined at once while it is sound, else a promise of
   * `{ error }`, which ends the loop as a failed call would.
   */
  readonly fatalSeen: () => Promise<{ readonly error: unknown }> | undefined;
  /**
   * A fatal error ended the loop (the consumer cannot be used again). It must leave `running`
   * at once; the loop ends when the returned promise settles.
   */
  readonly crash: (error: unknown) => Promise<void>;
}

/**
 * The one fetch loop of a {@link LibrdkafkaGroupConsumer}: `consume` in batches (up to
 * {@link CONSUME_BATCH} records, waiting up to {@link CONSUME_WAIT_MS} ms for a first one),
 * handed to its {@link FetchDispatcher} with the partition EOF events of the same call.
 * Requested seeks run between `consume` calls, so no record fetched before a seek is ever
 * handed over after it.
 */
export class ConsumeLoop {
  /** Partition EOF events of the `consume` call in hand. */
  private eofs: NativeTopicPartitionOffset[] = [];

  /** Sets the consumer's `consume` defaults and listens to its EOF events (before it subscribes). */
  constructor(
    private readonly consumer: NativeConsumer,
    private readonly parts: ConsumeLoopParts,
  ) {
    consumer.on('partition.eof', (eof) => this.eofs.push(eof));
    consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
    consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
  }

  /** Fetches until its consumer stops running or crashes; then commits waiting for an answer it would have served fail. */
  async run(): Promise<void> {
    try {
      await this.fetchUntilStopped();
    } finally {
      this.parts.awaitedCommits.abandon(new IllegalStateError('the librdkafka group consumer stopped fetching: its commits get no answer'));
    }
  }

  private async fetchUntilStopped(): Promise<void> {
    const { dispatcher, router, running } = this.parts;
    while (running()) {
      await this.applySeeks();
      let messages: NativeMessage[];
      this.eofs = [];
      try {
        messages = await call<NativeMessage[]>((cb) => this.consumer.consume(CONSUME_BATCH, cb));
      } catch (error) {
        if (!running()) return;
        const end = await this.parts.failed(error);
        if (end !== undefined) {
          await this.parts.crash(end.error);
          return;
        }
        // An error librdkafka retries itself (e.g. a broker connection lost): the loop goes on
        // after a short pause rather than spinning on the same error.
        await new Promise((resolve) => setTimeout(resolve, CONSUME_WAIT_MS));
        continue;
      }
      // A fatal error the call lost (see fatalSeen): nothing fetched now can be committed.
      const fatal = this.parts.fatalSeen();
      if (fatal !== undefined) {
        const { error } = await fatal;
        if (running()) await this.parts.crash(error);
        return;
      }
      if (messages.length > 0) router.heard();
      dispatcher.dispatch(messages, this.eofs);
    }
  }

  /** Applies the requested seeks, one partition at a time, while no `consume` call is in flight. */
  private async applySeeks(): Promise<void> {
    for (const [fetch, offset] of this.parts.fetches.seeks()) {
      try {
        await call((cb) => this.consumer.seek({ topic: fetch.topic, partition: fetch.partition, offset }, SEEK_TIMEOUT_MS, cb));
        // A newer seek may have come meanwhile: it runs on the next turn.
        if (fetch.seekTo === offset) fetch.seekTo = undefined;
        fetch.next = offset;
      } catch (error) {
        // Still requested: tried again on the next turn (a partition still being set up answers ERR__STATE).
        if ((error as LibrdkafkaError).code !== ERR.STATE) this.parts.router.errorEvent(error as LibrdkafkaError);
      }
    }
  }
}
