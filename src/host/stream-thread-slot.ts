import type { Worker as Thread } from 'node:worker_threads';
import type { CappedBackoff } from '../failure/capped-backoff.js';
import type { StreamThreadsStartError } from './stream-threads-start-error.js';
import type { FromThread } from './stream-thread-protocol.js';
import type { ThreadJoin } from './thread-start-gate.js';

/**
 * A stream-thread slot's state: `starting` (its thread loads and joins), `running`,
 * `replacing` (its thread ended; a new one starts after a backoff), `stopping`, `stopped`.
 */
export type SlotState = 'starting' | 'running' | 'replacing' | 'stopping' | 'stopped';

/** One stream thread's place in the process: the thread running in it now, and its state. */
export interface Slot {
  /** 1-based: the `thread` of its log lines and metrics. */
  readonly thread: number;
  /** Its worker gave up for good: it is not replaced. */
  dead?: boolean;
  current: Thread | undefined;
  state: SlotState;
  /** When its current thread was started, epoch ms. */
  startedAt: number;
  readonly backoff: CappedBackoff;
  /** Settles the first start of this slot (the process's start waits for every slot). */
  onStart?: (failure?: StreamThreadsStartError) => void;
  /** The pending start of its replacement (state `replacing`), cleared on stop. */
  replaceTimer?: NodeJS.Timeout;
  /** Requests waiting for this thread's answer, by id. */
  readonly waiting: Map<number, (message: FromThread) => void>;
  /**
   * The current thread's latest join of the group; cleared when a thread starts and when its
   * worker left the group itself (it stopped, or gave up).
   */
  join?: ThreadJoin;
}
