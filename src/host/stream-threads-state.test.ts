import { describe, expect, it } from 'vitest';
import { IllegalStateError } from '../errors.js';
import { assertStreamThreadsTransition, STREAM_THREADS_TRANSITIONS, type StreamThreadsState } from './stream-threads-state.js';

describe('the stream threads state table', () => {
  it('reaches stopping from every state, and never leaves it', () => {
    expect(STREAM_THREADS_TRANSITIONS.stopping).toEqual([]);
    for (const state of Object.keys(STREAM_THREADS_TRANSITIONS) as StreamThreadsState[])
      if (state !== 'stopping') expect(STREAM_THREADS_TRANSITIONS[state], state).toContain('stopping');
  });

  it('opens the start gate only from gated: a stopped process never starts its tasks', () => {
    expect(() => assertStreamThreadsTransition('gated', 'open')).not.toThrow();
    expect(() => assertStreamThreadsTransition('created', 'open')).toThrow(IllegalStateError);
    expect(() => assertStreamThreadsTransition('stopping', 'open')).toThrow(/stream threads: illegal state transition stopping → open/);
    expect(() => assertStreamThreadsTransition('stopping', 'gated')).toThrow(IllegalStateError);
  });
});
