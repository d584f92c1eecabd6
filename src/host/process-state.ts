import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of a {@link StreamProcess} (`weir run`), as an explicit state table — Kafka
 * Streams' `KafkaStreams.State` in weir's words. Rebalances and thread replacements happen
 * inside the stream threads (see `WorkerState` and `StreamThreads`): the process stays `running`.
 *
 * | state      | meaning                                                                          | Kafka Streams      |
 * |------------|----------------------------------------------------------------------------------|--------------------|
 * | `created`  | the config and topology are loaded; nothing started                              | `CREATED`          |
 * | `starting` | the metrics server binds; every stream thread starts and joins the group         | `REBALANCING`      |
 * | `running`  | every thread started; a thread that crashes is replaced                          | `RUNNING`          |
 * | `stopping` | a stop signal came: graceful shutdown, bounded by the shutdown timeout           | `PENDING_SHUTDOWN` |
 * | `failing`  | the start failed or a worker gave up for good: the other threads stop            | `PENDING_ERROR`    |
 * | `stopped`  | shut down cleanly (or stopped before it started): exit code 0                    | `NOT_RUNNING`      |
 * | `failed`   | ended by an error or a shutdown that timed out: exit code 1 or 2                 | `ERROR`            |
 */
export type ProcessState = 'created' | 'starting' | 'running' | 'stopping' | 'failing' | 'stopped' | 'failed';

/** Allowed transitions: from → to. */
export const PROCESS_TRANSITIONS: Readonly<Record<ProcessState, readonly ProcessState[]>> = Object.freeze({
  created: ['starting', 'stopped'],
  starting: ['running', 'stopping', 'failing'],
  running: ['stopping', 'failing'],
  stopping: ['stopped', 'failed'],
  failing: ['failed'],
  stopped: [],
  failed: [],
});

/**
 * Checks a transition against {@link PROCESS_TRANSITIONS}.
 *
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertProcessTransition(from: ProcessState, to: ProcessState): void {
  if (!PROCESS_TRANSITIONS[from].includes(to)) throw new IllegalStateError(`stream process: illegal state transition ${from} → ${to}`);
}
