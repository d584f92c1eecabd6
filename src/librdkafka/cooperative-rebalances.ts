import type { GroupConsumerHandlers } from '../kafka/group-consumer.js';
import type { TopicPartition } from '../record/record-types.js';
import { ERR } from './librdkafka-errors.js';
import type { LibrdkafkaLogRouter } from './librdkafka-log-router.js';
import type { LibrdkafkaError, NativeConsumer } from './librdkafka-native.js';
import type { PartitionFetches } from './partition-fetches.js';

/** Finds the member id the group coordinator gave a consumer (librdkafka's binding does not expose it). */
export type MemberIdLookup = (groupId: string, clientId: string, assigned: readonly TopicPartition[]) => Promise<string | undefined>;

/** What {@link CooperativeRebalances} works with. */
export interface CooperativeRebalancesParts {
  readonly fetches: PartitionFetches;
  readonly handlers: Pick<GroupConsumerHandlers, 'onAssigned' | 'onRevoked'>;
  readonly router: Pick<LibrdkafkaLogRouter, 'errorEvent'>;
  /** The member id the coordinator gave this consumer, given its assignment (undefined when not found). */
  readonly memberIdOf: (assignment: readonly TopicPartition[]) => Promise<string | undefined>;
  /** The subscribed consumer; undefined before (a callback then is ignored). */
  readonly consumer: () => NativeConsumer | undefined;
  /** Whether the consumer closes: its partitions then go without the handlers (the worker closed its tasks). */
  readonly closing: () => boolean;
  /** Told when the group assigns partitions: it accepted this member (ends a run of refused joins). */
  readonly joined: () => void;
}

/**
 * librdkafka's rebalance callback under cooperative-sticky assignment (KIP-429): assignments
 * and revocations, one after the other.
 *
 * - on revocation it awaits `onRevoked` — the partitions' tasks finish, flush and commit while
 *   the partitions are still assigned — before `incrementalUnassign`; their fetches are marked
 *   `revoking` first, and removed after;
 * - on assignment it calls `onAssigned` with the whole assignment and what was added, and the
 *   member id (looked up once, and again after the member lost its partitions).
 */
export class CooperativeRebalances {
  /** The steps under way, one after the other. */
  private steps: Promise<void> = Promise.resolve();
  private memberId: string | undefined;

  constructor(private readonly parts: CooperativeRebalancesParts) {}

  /** Settles when the steps asked for so far have run. */
  settled(): Promise<void> {
    return this.steps;
  }

  /** librdkafka's `rebalance_cb`: queues the assignment or revocation; any other error is reported. */
  callback(err: LibrdkafkaError, partitions: TopicPartition[]): void {
    const consumer = this.parts.consumer();
    if (consumer === undefined) return;
    const tps = partitions.map((p) => ({ topic: p.topic, partition: p.partition }));
    let step: () => Promise<void>;
    if (err?.code === ERR.ASSIGN_PARTITIONS) step = () => this.assigned(consumer, tps);
    else if (err?.code === ERR.REVOKE_PARTITIONS) {
      const lost = consumer.assignmentLost();
      step = () => this.revoked(consumer, tps, lost);
    } else return this.parts.router.errorEvent(err);
    this.steps = this.steps.then(step).catch((error: unknown) => this.parts.router.errorEvent(error as LibrdkafkaError));
  }

  private async assigned(consumer: NativeConsumer, added: TopicPartition[]): Promise<void> {
    const { fetches, handlers } = this.parts;
    this.parts.joined();
    consumer.incrementalAssign(added);
    for (const tp of added) fetches.add(tp);
    if (this.parts.closing()) return;
    const assignment = fetches.partitions();
    this.memberId ??= await this.parts.memberIdOf(assignment).catch(() => undefined);
    handlers.onAssigned({ assignment, added, protocol: 'cooperative', memberId: this.memberId ?? '' });
  }

  private async revoked(consumer: NativeConsumer, partitions: TopicPartition[], lost: boolean): Promise<void> {
    const { fetches, handlers } = this.parts;
    for (const tp of partitions) fetches.markRevoking(tp);
    try {
      if (!this.parts.closing()) await handlers.onRevoked({ partitions, protocol: 'cooperative', lost });
    } finally {
      for (const tp of partitions) fetches.remove(tp);
      // A member that lost its partitions may have lost its member id too.
      if (lost) this.memberId = undefined;
      try {
        consumer.incrementalUnassign(partitions);
      } catch (error) {
        this.parts.router.errorEvent(error as LibrdkafkaError);
      }
    }
  }
}
