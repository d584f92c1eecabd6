// A newer instance took over: a producer, a static group member or a replay run was fenced.
import { WeirError } from './weir-error.js';

/**
 * The task's transactional producer was fenced by a newer instance with the same
 * transactional id (a zombie task). The worker drops the task; it does not crash.
 */
export class ProducerFencedError extends WeirError {
  constructor(transactionalId: string, options?: { cause?: unknown }) {
    super('WEIR_PRODUCER_FENCED', `producer '${transactionalId}' was fenced by a newer instance`, options);
  }
}

/**
 * A static member (`group.instance.id`, KIP-345) was fenced: another consumer joined the group
 * with the same `group.instance.id`, and the group coordinator gave it this member's place
 * (`FENCED_INSTANCE_ID`). The Kafka client binding reports it; the worker decides (see
 * {@link GroupInstanceConflictError}).
 */
export class MemberFencedError extends WeirError {
  readonly groupInstanceId: string;

  constructor(groupInstanceId: string, options?: { cause?: unknown }) {
    super('WEIR_MEMBER_FENCED', `group member '${groupInstanceId}' was fenced by another member with the same group.instance.id`, options);
    this.groupInstanceId = groupInstanceId;
  }
}

/**
 * Another worker runs with this worker's `group.instance.id`: this worker, which took the id
 * last, stops (exit 2), and the one that had it keeps its partitions. Give every worker (and
 * every stream thread) its own id, e.g. the pod name.
 */
export class GroupInstanceConflictError extends WeirError {
  readonly groupInstanceId: string;

  constructor(groupInstanceId: string, options?: { cause?: unknown }) {
    super(
      'WEIR_GROUP_INSTANCE_CONFLICT',
      `another worker of the group runs with group.instance.id '${groupInstanceId}' (--group-instance-id): this one stops, the other keeps its partitions; give each worker its own id`,
      options,
    );
    this.groupInstanceId = groupInstanceId;
  }
}

/**
 * A `weir dlq replay` run was fenced: a newer run of the same replay group initialized the
 * same transactional id (`InitProducerId` bumps its epoch, KIP-98). The fenced run's open
 * chunk is aborted by the broker; what it committed stays replayed, and the newer run goes on
 * from there. The CLI exits 1.
 */
export class ReplayFencedError extends WeirError {
  readonly transactionalId: string;

  constructor(dlqTopic: string, transactionalId: string, options?: { cause?: unknown }) {
    super(
      'WEIR_REPLAY_FENCED',
      `this replay of '${dlqTopic}' was fenced: a newer replay with transactional id '${transactionalId}' started, so this one stopped; its open chunk was aborted, the newer run goes on from the last committed chunk`,
      options,
    );
    this.transactionalId = transactionalId;
  }
}
