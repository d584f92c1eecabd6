// weir or its caller was used wrongly: a broken invariant, a misused TopologyTestDriver.
import { WeirError } from './weir-error.js';

/**
 * A lifecycle method called in a state that does not allow it (a task, worker or breaker
 * transition outside its table), or another broken invariant: a bug in weir or in its caller,
 * never a problem with the data.
 */
export class IllegalStateError extends WeirError {
  constructor(message: string) {
    super('WEIR_ILLEGAL_STATE', message);
  }
}

/**
 * The TopologyTestDriver (`weir/testing`) was used wrongly — a record it cannot pipe (no such
 * partition, a value its serde cannot write), a topic that is not the topology's — or its
 * tasks did not settle (a livelock in the topology under test).
 */
export class TestDriverError extends WeirError {
  constructor(message: string) {
    super('WEIR_TEST_DRIVER', message);
  }
}

/**
 * A record of an `order: 'key'` step's changelog (`<application.id>.<processor>.parked`) cannot
 * be read back: its task cannot rebuild which keys wait, so it stops rather than let a key's
 * later records overtake a parked one. Names the changelog's topic, partition and offset.
 */
export class ParkedStateError extends WeirError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('WEIR_PARKED_STATE', message, options);
  }
}
