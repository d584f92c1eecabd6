import { expect } from 'vitest';
import { IllegalStateError } from '../errors.js';
import type { NativeMessage } from './librdkafka-native.js';

/** `count` messages of partition 0 of topic `t` as the binding's `consume` returns them, from offset `from` on. */
export function nativeMessages(from: number, count: number): NativeMessage[] {
  return Array.from(
    { length: count },
    (_, i) =>
      ({
        topic: 't',
        partition: 0,
        offset: from + i,
        value: Buffer.from('v'),
        key: null,
        timestamp: 0,
        size: 1,
      }) as unknown as NativeMessage,
  );
}

/**
 * Checks a state table and its assertion on every pair of states: the pairs the table lists
 * pass, the others throw `illegal(from, to)` (an IllegalStateError's message).
 */
export function expectTransitionsChecked<S extends string>(
  table: Readonly<Record<S, readonly S[]>>,
  assertTransition: (from: S, to: S) => void,
  illegal: (from: S, to: S) => string,
): void {
  const states = Object.keys(table) as S[];
  for (const from of states)
    for (const to of states) {
      const check = () => assertTransition(from, to);
      if (table[from].includes(to)) expect(check, `${from} → ${to}`).not.toThrow();
      else {
        expect(check, `${from} → ${to}`).toThrow(IllegalStateError);
        expect(check).toThrow(illegal(from, to));
      }
    }
}

/** Whether `to` can be reached from `from` through the table's transitions. */
export function reaches<S extends string>(
  table: Readonly<Record<S, readonly S[]>>,
  from: S,
  to: S,
  seen: ReadonlySet<S> = new Set(),
): boolean {
  return from === to || table[from].some((next) => !seen.has(next) && reaches(table, next, to, new Set([...seen, from])));
}
