import type { Logger } from 'pino';
import type { GroupConsumerOptions } from '../kafka/group-consumer.js';
import { isInconsistentGroupProtocol, JoinRefusals } from '../kafka/join-refusals.js';
import { FatalErrorWatch, isFatalError, memberCrashError } from './librdkafka-errors.js';
import type { LibrdkafkaLogRouter } from './librdkafka-log-router.js';
import type { LibrdkafkaError, NativeLogEvent } from './librdkafka-native.js';

/**
 * What the failures of a {@link LibrdkafkaGroupConsumer}'s `consume` calls mean, in weir's terms:
 *
 * - a fatal error ends the consumer, as librdkafka stated it in its log ({@link FatalErrorWatch}:
 *   the call fails with a bare `ERR__FATAL`), or as a `MemberFencedError` when a static member
 *   was fenced by another consumer with its `group.instance.id` (librdkafka's `FENCED_INSTANCE_ID`),
 *   whether a `consume` call failed with it or only its log line or a failed commit told
 *   ({@link fatalSeen});
 * - a join the broker refused with `INCONSISTENT_GROUP_PROTOCOL` (the group's members run the
 *   other Kafka client) librdkafka retries every few seconds: one `warn` at the first refusal of
 *   a run, and the run ends the consumer with a final `ClientMismatchError` once it lasted a
 *   session timeout with no assignment ({@link JoinRefusals});
 * - anything else librdkafka retries itself: it goes to the log router.
 *
 * One per consumer.
 */
export class GroupConsumerFailures {
  private readonly fatal = new FatalErrorWatch();
  private readonly refusals: JoinRefusals;
  /** A call other than `consume` that failed fatally. */
  private fatalCall: unknown;

  constructor(
    private readonly options: GroupConsumerOptions,
    private readonly logger: Logger,
    private readonly router: Pick<LibrdkafkaLogRouter, 'errorEvent'>,
  ) {
    this.refusals = new JoinRefusals(options.groupId, 'librdkafka', options.sessionTimeoutMs);
  }

  /** A log event of the consumer (a fatal error's cause is stated there). */
  logged(event: NativeLogEvent): void {
    this.fatal.logged(event);
  }

  /**
   * A `consume` call failed with `error` at `now` (ms).
   *
   * @returns `{ error }` when the consumer must stop and report `error` to `onCrash`; undefined
   *   when librdkafka goes on by itself
   */
  async consumeFailed(error: unknown, now: number): Promise<{ readonly error: unknown } | undefined> {
    if (isFatalError(error)) return { error: memberCrashError(await this.fatal.explain(error), this.options.groupInstanceId) };
    if (isInconsistentGroupProtocol(error)) {
      const first = !this.refusals.open;
      const mismatch = this.refusals.refused(now, error);
      if (!mismatch.retriable) return { error: mismatch };
      if (first) this.logger.warn({ err: mismatch }, 'the consumer group refuses this member');
      return undefined;
    }
    this.router.errorEvent(error as LibrdkafkaError);
    return undefined;
  }

  /**
   * Another call of the consumer (a commit) failed with `error`: a fatal one ends the consumer
   * at the loop's next turn ({@link fatalSeen}), as a failed `consume` would.
   */
  callFailed(error: unknown): void {
    if (isFatalError(error)) this.fatalCall ??= error;
  }

  /**
   * Whether the consumer failed fatally although no `consume` call said so. librdkafka puts its
   * fatal error on the consumer's queue once, and the binding's batch `consume` drops an error
   * that comes after records in the same call (confluent-kafka-javascript 1.10, `workers.cc`,
   * `KafkaConsumerConsumeNum`): later calls return nothing and the member's commits fail with a
   * bare `ERR__FATAL`. So the loop asks after every call: a `FATAL` log line, or a commit that
   * failed fatally, ends the consumer as the lost error would have.
   *
   * @returns undefined at once while the consumer is sound (no promise on the fetch loop's every
   *   turn), else a promise of `{ error }` for `onCrash` (a `MemberFencedError` for a fenced
   *   static member)
   */
  fatalSeen(): Promise<{ readonly error: unknown }> | undefined {
    const error = this.fatal.stated ?? this.fatalCall;
    if (error === undefined) return undefined;
    return this.fatal.explain(error).then((stated) => ({ error: memberCrashError(stated, this.options.groupInstanceId) }));
  }

  /** The member got an assignment: the group accepted it. */
  joined(): void {
    this.refusals.joined();
  }
}
