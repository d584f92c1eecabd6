import type { Worker as Thread } from 'node:worker_threads';
import { CappedBackoff } from '../failure/capped-backoff.js';
import { assertSlotTransition, type SlotState } from './slot-state.js';
import type { StreamThreadsStartError } from './stream-threads-start-error.js';
import type { FromThread } from './stream-thread-protocol.js';
import type { ThreadJoin } from './thread-start-gate.js';

/**
 * One stream thread's place in the process: the thread running in it now, and its state (the
 * table of {@link SlotState}; every change goes through `transition()`).
 */
export class Slot {
  current: Thread | undefined = undefined;
  /** When its current thread was started, epoch ms. */
  startedAt = 0;
  /** The replacement backoff: 1 s, doubling to 30 s. */
  readonly backoff = new CappedBackoff(1_000, 30_000);
  /** The pending start of its replacement (state `replacing`), cleared on stop. */
  replaceTimer: NodeJS.Timeout | undefined = undefined;
  /** Requests waiting for this thread's answer, by id. */
  readonly waiting = new Map<number, (message: FromThread) => void>();
  /**
   * The current thread's latest join of the group; cleared when a thread starts and when its
   * worker left the group itself (it stopped, or gave up).
   */
  join: ThreadJoin | undefined = undefined;
  /** Settles with the outcome of the slot's first start: `undefined` when its thread started, else why not. */
  readonly firstStart: Promise<StreamThreadsStartError | undefined>;
  private settleFirstStart: ((failure: StreamThreadsStartError | undefined) => void) | undefined;
  private slotState: SlotState = { kind: 'created' };

  /** @param thread 1-based: the `thread` of its log lines and metrics */
  constructor(readonly thread: number) {
    this.firstStart = new Promise((resolve) => (this.settleFirstStart = resolve));
  }

  get state(): SlotState {
    return this.slotState;
  }

  /** The one place the slot's state changes, checked against the table of {@link SlotState}. */
  transition(to: SlotState): void {
    assertSlotTransition(this.thread, this.slotState.kind, to.kind);
    this.slotState = to;
  }

  /** Settles {@link firstStart} (the first call only; later ones do nothing). */
  firstStartEnded(failure?: StreamThreadsStartError): void {
    this.settleFirstStart?.(failure);
    this.settleFirstStart = undefined;
  }
}
