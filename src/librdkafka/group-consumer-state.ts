import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of a {@link LibrdkafkaGroupConsumer}, as an explicit state table.
 *
 * | state        | meaning                                                                     |
 * |--------------|-----------------------------------------------------------------------------|
 * | `created`    | not started; also after a start whose connection failed (it may start again) |
 * | `connecting` | `start()` connects librdkafka's consumer to the cluster                     |
 * | `running`    | subscribed: the fetch loop runs, rebalances reach the handlers              |
 * | `crashed`    | a fatal error ended the fetch loop (`onCrash` was called); rebalances still reach the handlers until `stop()` |
 * | `stopping`   | `stop()` came: the fetch loop and the rebalances under way end; a start still connecting closes its consumer itself |
 * | `closing`    | librdkafka leaves the group and closes: its last revocation unassigns without the handlers (the worker closed its tasks) |
 * | `stopped`    | stopped; never runs again                                                   |
 */
export type GroupConsumerState = 'created' | 'connecting' | 'running' | 'crashed' | 'stopping' | 'closing' | 'stopped';

/**
 * Allowed transitions: from → to. `connecting → created` is a failed connection;
 * `stopping → stopped` a consumer that never connected, or is disconnected already.
 */
export const GROUP_CONSUMER_TRANSITIONS: Readonly<Record<GroupConsumerState, readonly GroupConsumerState[]>> = Object.freeze({
  created: ['connecting', 'stopping'],
  connecting: ['created', 'running', 'stopping'],
  running: ['crashed', 'stopping'],
  crashed: ['stopping'],
  stopping: ['closing', 'stopped'],
  closing: ['stopped'],
  stopped: [],
});

/**
 * Checks a transition against {@link GROUP_CONSUMER_TRANSITIONS}.
 *
 * @param groupId the consumer's group, which names it in the error
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertGroupConsumerTransition(groupId: string, from: GroupConsumerState, to: GroupConsumerState): void {
  if (!GROUP_CONSUMER_TRANSITIONS[from].includes(to))
    throw new IllegalStateError(`librdkafka group consumer of group '${groupId}': illegal state transition ${from} → ${to}`);
}
