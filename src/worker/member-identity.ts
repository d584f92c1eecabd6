import { hostname } from 'node:os';
import { memberTransactionalId } from '../record/task-id.js';
import type { WorkerConfig } from '../config/worker-config.js';

/** How a worker (one group member: a process, or one of its stream threads) names itself to Kafka. */
export interface MemberIdentity {
  /**
   * `client.id` of its connections: `weir-<application.id>-<host>-<pid>`, so
   * `kafka-consumer-groups --describe` names the process, with `-thread-<n>` for a stream thread.
   */
  readonly clientId: string;
  /** Its `group.instance.id` (static membership, KIP-345), when configured: its thread's id. */
  readonly groupInstanceId?: string;
  /**
   * The `transactional.id` of its one producer under exactly_once_v2: `<application.id>-` and its
   * `group.instance.id` — a restarted static member fences its predecessor's producer at once —
   * else its host, pid and thread (see `memberTransactionalId`).
   */
  readonly transactionalId: string;
}

/** The identity of the worker of `applicationId` in this process (stream thread `thread`, 1-based, when there are several). */
export function memberIdentity(applicationId: string, config: Pick<WorkerConfig, 'groupInstanceIds'>, thread?: number): MemberIdentity {
  const suffix = thread === undefined ? '' : `-thread-${thread}`;
  const processName = `${hostname()}-${process.pid}${suffix}`;
  const groupInstanceId = config.groupInstanceIds?.[(thread ?? 1) - 1];
  return {
    clientId: `weir-${applicationId}-${processName}`,
    ...(groupInstanceId !== undefined ? { groupInstanceId } : {}),
    transactionalId: memberTransactionalId(applicationId, groupInstanceId ?? processName),
  };
}
