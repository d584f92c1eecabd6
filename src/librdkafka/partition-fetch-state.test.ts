import { describe, expect, it } from 'vitest';
import { expectTransitionsChecked, reaches } from './librdkafka.test-support.js';
import { assertPartitionFetchTransition, PARTITION_FETCH_TRANSITIONS, type PartitionFetchState } from './partition-fetch-state.js';

describe('the partition fetch state table (librdkafka)', () => {
  it('allows what the table lists and refuses the rest, naming the partition and the transition', () => {
    expectTransitionsChecked(
      PARTITION_FETCH_TRANSITIONS,
      (from, to) => assertPartitionFetchTransition('t-3', from, to),
      (from, to) => `partition t-3: illegal fetch state transition ${from} → ${to}`,
    );
  });

  it('holds before it pauses, and lifts a pause only by a release', () => {
    expect(PARTITION_FETCH_TRANSITIONS.fetching).not.toContain('paused');
    expect(PARTITION_FETCH_TRANSITIONS.paused).not.toContain('held');
    expect(PARTITION_FETCH_TRANSITIONS['revoking-paused']).toEqual(['revoking']);
  });

  it('reaches revoking from every state, and never leaves it', () => {
    expect(PARTITION_FETCH_TRANSITIONS.revoking).toEqual([]);
    for (const state of Object.keys(PARTITION_FETCH_TRANSITIONS) as PartitionFetchState[])
      expect(reaches(PARTITION_FETCH_TRANSITIONS, state, 'revoking'), state).toBe(true);
  });
});
