import { IllegalStateError } from '../errors.js';

/**
 * The lifecycle of one round of a {@link SharedTransaction} (one transaction of the shared
 * producer), as an explicit state table.
 *
 * | state          | meaning                                                                       |
 * |----------------|-------------------------------------------------------------------------------|
 * | `open`         | begun: tasks that begin join it; it commits once every member asked to and its join window has passed by the clock |
 * | `window-ended` | still open (late tasks join it), and its join-window timer fired: it commits as soon as every member asked to |
 * | `committing`   | every member's offsets, then the commit: tasks that begin now join the next round |
 * | `aborting`     | a member could not send, or reset: the producer aborts it                     |
 * | `done`         | committed, aborted, in doubt, or fenced; its outcome is settled               |
 *
 * A round the producer was fenced in goes from `open` or `window-ended` straight to `done`: a
 * fenced producer can neither commit nor abort it (the member's next producer of the
 * transactional id aborts it at its `InitProducerId`, or the broker after
 * `transaction.timeout.ms`), and its members must not wait for it.
 */
export type RoundState = 'open' | 'window-ended' | 'committing' | 'aborting' | 'done';

/**
 * Allowed transitions: from → to. `open → committing` is a round whose window the clock saw end
 * before its timer fired; a round commits or aborts only while open; `open → done` and
 * `window-ended → done` are a round whose producer was fenced.
 */
export const ROUND_TRANSITIONS: Readonly<Record<RoundState, readonly RoundState[]>> = Object.freeze({
  open: ['window-ended', 'committing', 'aborting', 'done'],
  'window-ended': ['committing', 'aborting', 'done'],
  committing: ['done'],
  aborting: ['done'],
  done: [],
});

/** Whether a round in `state` takes members, sends and commit requests (`open` or `window-ended`). */
export function isRoundOpen(state: RoundState): boolean {
  return state === 'open' || state === 'window-ended';
}

/**
 * Checks a transition against {@link ROUND_TRANSITIONS}.
 *
 * @param transactionalId the shared producer's transactional id, named in the error
 * @throws IllegalStateError when the transition is not allowed (a bug in the caller)
 */
export function assertRoundTransition(transactionalId: string, from: RoundState, to: RoundState): void {
  if (!ROUND_TRANSITIONS[from].includes(to))
    throw new IllegalStateError(`shared transaction ${transactionalId}: illegal round state transition ${from} → ${to}`);
}
