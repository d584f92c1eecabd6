import { ClientMismatchError } from '../errors.js';
import type { KafkaClientName } from './kafka-client.js';

/** The broker's `INCONSISTENT_GROUP_PROTOCOL`: a member's protocols (assignors) are not the group's. */
export const INCONSISTENT_GROUP_PROTOCOL = 23;

/**
 * Tells a lasting `INCONSISTENT_GROUP_PROTOCOL` refusal from a passing one. The broker refuses
 * a member whose partition assignors the group's members do not share: workers of the other
 * Kafka client. Such a member may also be a crashed worker whose session has not timed out yet
 * (a group being switched to the other client), so one refusal proves nothing; refusals that
 * lasted `graceMs` (the session timeout) with no join between do: live members hold the group.
 *
 * @example
 * const refusals = new JoinRefusals('orders', 'librdkafka', 30_000);
 * const error = refusals.refused(Date.now(), cause); // retriable at first, final after 30 s
 */
export class JoinRefusals {
  /** When the current run of refusals began (undefined: none since the last join). */
  private since: number | undefined;

  constructor(
    private readonly groupId: string,
    private readonly client: KafkaClientName,
    private readonly graceMs: number,
  ) {}

  /**
   * A refusal at `now` (ms).
   *
   * @returns a retriable {@link ClientMismatchError} while the run of refusals is shorter than
   *   `graceMs`, a final one (not retriable) once it lasted that long
   */
  refused(now: number, cause?: unknown): ClientMismatchError {
    this.since ??= now;
    const refusedForMs = now - this.since;
    const options = cause === undefined ? {} : { cause };
    return refusedForMs >= this.graceMs
      ? new ClientMismatchError(this.groupId, this.client, { ...options, refusedForMs })
      : new ClientMismatchError(this.groupId, this.client, { ...options, retriable: true });
  }

  /** Whether a refusal run is open (a refusal came, and no join since). */
  get open(): boolean {
    return this.since !== undefined;
  }

  /** The member joined the group: a later refusal begins a new run. */
  joined(): void {
    this.since = undefined;
  }
}

/**
 * True when `error` (or an error it wraps, through `cause` or kafkajs' `originalError`) is the
 * broker's `INCONSISTENT_GROUP_PROTOCOL`: kafkajs' `KafkaJSProtocolError` (its `type`, and `code`
 * 23) and librdkafka's error (`code` 23) both carry it.
 */
export function isInconsistentGroupProtocol(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const e = error as { type?: unknown; code?: unknown; originalError?: unknown; cause?: unknown };
  if (e.type === 'INCONSISTENT_GROUP_PROTOCOL' || e.code === INCONSISTENT_GROUP_PROTOCOL) return true;
  return isInconsistentGroupProtocol(e.originalError, depth + 1) || isInconsistentGroupProtocol(e.cause, depth + 1);
}
