import { describe, expect, it } from 'vitest';
import { WEIR_HEADERS } from '../../record/weir-headers.js';
import { DeadLetterDuplicates } from './dead-letter-duplicates.js';
import { deadLetterView } from './dead-letter-view.js';

const deadLetter = (offset: number, original?: { topic: string; partition: number; offset: number }) =>
  deadLetterView({
    topic: 'orders.dlq',
    partition: 0,
    offset,
    timestamp: 1_000,
    key: null,
    value: null,
    headers:
      original === undefined
        ? {}
        : {
            [WEIR_HEADERS.originalTopic]: original.topic,
            [WEIR_HEADERS.originalPartition]: String(original.partition),
            [WEIR_HEADERS.originalOffset]: String(original.offset),
          },
  });

describe('DeadLetterDuplicates', () => {
  it('flags dead letters that share weir.original.topic/partition/offset, and counts them', () => {
    const dups = new DeadLetterDuplicates();
    const a = deadLetter(0, { topic: 'orders', partition: 1, offset: 7 });
    const again = deadLetter(1, { topic: 'orders', partition: 1, offset: 7 });
    const otherPartition = deadLetter(2, { topic: 'orders', partition: 2, offset: 7 });
    const otherTopic = deadLetter(3, { topic: 'payments', partition: 1, offset: 7 });
    const thrice = deadLetter(4, { topic: 'orders', partition: 1, offset: 7 });
    expect([a, again, otherPartition, otherTopic, thrice].map((v) => dups.add(v))).toEqual([true, false, true, true, false]);
    expect(dups.duplicates).toBe(2);
    expect(dups.originalsWithDuplicates).toBe(1);
    expect(dups.copiesOf(a)).toBe(3);
    expect(dups.copiesOf(otherTopic)).toBe(1);
  });

  it('treats records without weir.original.* headers as their own originals (their DLQ coordinates)', () => {
    const dups = new DeadLetterDuplicates();
    expect([deadLetter(0), deadLetter(1), deadLetter(1)].map((v) => dups.add(v))).toEqual([true, true, false]);
    expect(dups.duplicates).toBe(1);
  });
});
