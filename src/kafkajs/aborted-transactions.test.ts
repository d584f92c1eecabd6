import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filterAbortedRecords, type AbortedTransaction, type FetchedRecord } from './aborted-transactions.js';
import { abortFilterInstalled } from './kafkajs-library.js';

const COMMIT = Buffer.from([0, 0, 0, 1]);
const ABORT = Buffer.from([0, 0, 0, 0]);

/** A data record of producer `pid` (transactional unless `pid` is '-1'). */
const data = (offset: number, pid: string, value = `${pid}@${offset}`): FetchedRecord & { value: string } => ({
  offset: String(offset),
  key: Buffer.from(value),
  value,
  batchContext: { producerId: pid, inTransaction: pid !== '-1' },
});
const marker = (offset: number, pid: string, key: Buffer): FetchedRecord & { value: string } => ({
  offset: String(offset),
  key,
  value: key === ABORT ? `abort ${pid}` : `commit ${pid}`,
  isControlRecord: true,
  batchContext: { producerId: pid, inTransaction: true },
});
const values = (records: ReadonlyArray<{ value: string }>): string[] => records.map((r) => r.value);

describe('filterAbortedRecords (read_committed on kafkajs)', () => {
  it('drops a transaction aborted after a later-begun one (the broker lists aborted transactions by abort marker)', () => {
    // A begins at 0, B at 2, C commits at 3; B aborts (marker 5) before A (marker 6).
    const records = [
      data(0, 'A'),
      data(1, 'A'),
      data(2, 'B'),
      data(3, 'C'),
      marker(4, 'C', COMMIT),
      marker(5, 'B', ABORT),
      marker(6, 'A', ABORT),
    ];
    const aborted: AbortedTransaction[] = [
      { producerId: 'B', firstOffset: '2' },
      { producerId: 'A', firstOffset: '0' },
    ];
    expect(values(filterAbortedRecords(records, aborted))).toEqual(['C@3', 'commit C', 'abort B', 'abort A']);
  });

  it('opens every aborted transaction a record has reached, also when the fetch starts inside them', () => {
    // Fetched from offset 4: A (first offset 0) and B (first offset 1) are both open already.
    const records = [data(4, 'B'), data(5, 'A'), data(6, '-1'), marker(7, 'A', ABORT), marker(8, 'B', ABORT), data(9, 'A')];
    const aborted: AbortedTransaction[] = [
      { producerId: 'A', firstOffset: '0' },
      { producerId: 'B', firstOffset: '1' },
    ];
    expect(values(filterAbortedRecords(records, aborted))).toEqual(['-1@6', 'abort A', 'abort B', 'A@9']);
  });

  it('takes a data record whose key looks like an abort marker for data', () => {
    const records = [data(0, 'A'), data(1, 'A', '\u0000\u0000\u0000\u0000'), marker(2, 'A', ABORT)];
    records[1] = { ...records[1]!, key: ABORT };
    expect(filterAbortedRecords(records, [{ producerId: 'A', firstOffset: '0' }])).toHaveLength(1);
  });

  it('keeps exactly the records of committed transactions, whatever the order of the abort list (property)', () => {
    // Transactions of distinct producers, interleaved in one partition, each committed or aborted,
    // their markers in any order after all their records.
    const txn = fc.record({ records: fc.integer({ min: 1, max: 4 }), aborted: fc.boolean() });
    fc.assert(
      fc.property(fc.array(txn, { minLength: 1, maxLength: 6 }), fc.infiniteStream(fc.nat()), (txns, picks) => {
        const producers = txns.map((t, i) => ({ ...t, pid: `p${i}`, left: t.records }));
        const records: Array<FetchedRecord & { value: string }> = [];
        const firstOffsets = new Map<string, number>();
        const it = picks[Symbol.iterator]();
        while (producers.some((p) => p.left > 0)) {
          const open = producers.filter((p) => p.left > 0);
          const p = open[it.next().value! % open.length]!;
          if (!firstOffsets.has(p.pid)) firstOffsets.set(p.pid, records.length);
          records.push(data(records.length, p.pid));
          p.left--;
        }
        const order = [...producers].sort(() => (it.next().value! % 2 === 0 ? -1 : 1));
        for (const p of order) records.push(marker(records.length, p.pid, p.aborted ? ABORT : COMMIT));
        const abortList = order.filter((p) => p.aborted).map((p) => ({ producerId: p.pid, firstOffset: String(firstOffsets.get(p.pid)) }));
        const kept = filterAbortedRecords(records, abortList).filter((r) => r.isControlRecord !== true);
        const expected = records.filter(
          (r) => r.isControlRecord !== true && !producers.find((p) => p.pid === r.batchContext.producerId)!.aborted,
        );
        expect(values(kept)).toEqual(values(expected));
      }),
    );
  });

  it("is what kafkajs' fetch batches use once weir loads kafkajs", () => {
    expect(abortFilterInstalled()).toBe(true);
    const require = createRequire(import.meta.url);
    const Batch = require('kafkajs/src/consumer/batch.js') as new (
      topic: string,
      fetchedOffset: string,
      partitionData: object,
    ) => { messages: Array<{ value: string }> };
    const batch = new Batch('t', '0', {
      partition: 0,
      highWatermark: '7',
      abortedTransactions: [
        { producerId: 'B', firstOffset: '2' },
        { producerId: 'A', firstOffset: '0' },
      ],
      messages: [
        data(0, 'A'),
        data(1, 'A'),
        data(2, 'B'),
        data(3, 'C'),
        marker(4, 'C', COMMIT),
        marker(5, 'B', ABORT),
        marker(6, 'A', ABORT),
      ],
    });
    expect(values(batch.messages)).toEqual(['C@3']);
  });
});
