import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../errors.js';
import { SLOT_TRANSITIONS, type SlotStateKind } from './slot-state.js';
import { Slot } from './stream-thread-slot.js';
import { StreamThreadsStartError } from './stream-threads-start-error.js';

describe('the stream-thread slot state table', () => {
  it('leaves stopped never, and reaches it from every state', () => {
    expect(SLOT_TRANSITIONS.stopped).toEqual([]);
    const reachesStopped = (from: SlotStateKind, seen: ReadonlySet<SlotStateKind> = new Set()): boolean =>
      from === 'stopped' || SLOT_TRANSITIONS[from].some((to) => !seen.has(to) && reachesStopped(to, new Set([...seen, from])));
    for (const state of Object.keys(SLOT_TRANSITIONS) as SlotStateKind[]) expect(reachesStopped(state), state).toBe(true);
  });

  it('checks every change: a slot that gave up is never replaced', () => {
    const slot = new Slot(2);
    expect(slot.state).toEqual({ kind: 'created' });
    slot.transition({ kind: 'starting', first: true });
    slot.transition({ kind: 'given-up' });
    expect(() => slot.transition({ kind: 'replacing' })).toThrow(IllegalStateError);
    expect(() => slot.transition({ kind: 'replacing' })).toThrow(/stream thread 2: illegal slot state transition given-up → replacing/);
    slot.transition({ kind: 'stopped' });
    expect(slot.state).toEqual({ kind: 'stopped' });
  });

  it('settles its first start once', async () => {
    const slot = new Slot(1);
    const failure = new StreamThreadsStartError(2, ['weir: bad topology']);
    slot.firstStartEnded(failure);
    slot.firstStartEnded();
    await expect(slot.firstStart).resolves.toBe(failure);
  });
});
