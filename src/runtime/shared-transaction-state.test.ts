import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../errors.js';
import { ROUND_TRANSITIONS, assertRoundTransition, isRoundOpen, type RoundState } from './shared-transaction-state.js';

const STATES = Object.keys(ROUND_TRANSITIONS) as RoundState[];

describe('the shared-transaction round state table', () => {
  it('leaves done never, and reaches it from every state', () => {
    expect(ROUND_TRANSITIONS.done).toEqual([]);
    const reachesDone = (from: RoundState, seen: ReadonlySet<RoundState> = new Set()): boolean =>
      from === 'done' || ROUND_TRANSITIONS[from].some((to) => !seen.has(to) && reachesDone(to, new Set([...seen, from])));
    for (const state of STATES) expect(reachesDone(state), state).toBe(true);
  });

  it('allows every transition of the table', () => {
    for (const from of STATES)
      for (const to of ROUND_TRANSITIONS[from]) expect(() => assertRoundTransition('app-1', from, to)).not.toThrow();
  });

  it('rejects every other transition, naming the producer and from → to', () => {
    const illegal = STATES.flatMap((from) => STATES.filter((to) => !ROUND_TRANSITIONS[from].includes(to)).map((to) => [from, to] as const));
    expect(illegal).toContainEqual(['committing', 'aborting']);
    expect(illegal).toContainEqual(['window-ended', 'open']);
    for (const [from, to] of illegal) {
      expect(() => assertRoundTransition('app-1', from, to)).toThrow(IllegalStateError);
      expect(() => assertRoundTransition('app-1', from, to)).toThrow(
        `shared transaction app-1: illegal round state transition ${from} → ${to}`,
      );
    }
  });

  it('commits or aborts a round only while it is open, and its window ends only then', () => {
    const committableFrom = STATES.filter((s) => ROUND_TRANSITIONS[s].includes('committing'));
    const abortableFrom = STATES.filter((s) => ROUND_TRANSITIONS[s].includes('aborting'));
    expect(committableFrom).toEqual(['open', 'window-ended']);
    expect(abortableFrom).toEqual(['open', 'window-ended']);
    expect(STATES.filter(isRoundOpen)).toEqual(['open', 'window-ended']);
    expect(STATES.filter((s) => ROUND_TRANSITIONS[s].includes('window-ended'))).toEqual(['open']);
  });

  it('ends an open round at once only when its producer was fenced (open or window-ended → done)', () => {
    expect(STATES.filter((s) => ROUND_TRANSITIONS[s].includes('done'))).toEqual(['open', 'window-ended', 'committing', 'aborting']);
  });
});
