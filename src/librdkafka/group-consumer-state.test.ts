import { describe, expect, it } from 'vitest';
import { assertGroupConsumerTransition, GROUP_CONSUMER_TRANSITIONS, type GroupConsumerState } from './group-consumer-state.js';
import { expectTransitionsChecked, reaches } from './librdkafka.test-support.js';

const STATES = Object.keys(GROUP_CONSUMER_TRANSITIONS) as GroupConsumerState[];

describe('the librdkafka group consumer state table', () => {
  it('allows what the table lists and refuses the rest, naming the group and the transition', () => {
    expectTransitionsChecked(
      GROUP_CONSUMER_TRANSITIONS,
      (from, to) => assertGroupConsumerTransition('app', from, to),
      (from, to) => `librdkafka group consumer of group 'app': illegal state transition ${from} → ${to}`,
    );
  });

  it('starts only once, and a crashed consumer runs no more', () => {
    expect(STATES.filter((from) => GROUP_CONSUMER_TRANSITIONS[from].includes('connecting'))).toEqual(['created']);
    expect(GROUP_CONSUMER_TRANSITIONS.crashed).toEqual(['stopping']);
  });

  it('reaches stopped from every state through stopping, and never leaves it', () => {
    expect(GROUP_CONSUMER_TRANSITIONS.stopped).toEqual([]);
    for (const state of STATES) expect(reaches(GROUP_CONSUMER_TRANSITIONS, state, 'stopped'), state).toBe(true);
    expect(STATES.filter((from) => GROUP_CONSUMER_TRANSITIONS[from].includes('stopped'))).toEqual(['stopping', 'closing']);
  });
});
