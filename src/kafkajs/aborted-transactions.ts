/**
 * read_committed on kafkajs: which fetched records belong to aborted transactions.
 *
 * A fetch response lists the aborted transactions that overlap the fetched range, each as its
 * producer id and first offset, in the order the broker's transaction index holds them: the
 * order of their abort markers, not of their first offsets. kafkajs 2.2.4's own filter
 * (`consumer/filterAbortedMessages.js`) assumes first-offset order and opens at most one aborted
 * transaction per record, so a transaction that began before another but was aborted after it
 * (two upstream producers, or a crashed producer's transaction aborted by its timeout) is
 * delivered to a read_committed consumer. {@link filterAbortedRecords} is the Java consumer's
 * algorithm instead (KIP-98; `CompletedFetch` in the Java client): aborted transactions ordered
 * by first offset, every one whose first offset a record has reached opened before the record
 * is judged, and a producer's transaction closed by its ABORT control record.
 */

/** A fetched record as kafkajs decodes it (the fields the filter reads). */
export interface FetchedRecord {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly isControlRecord?: boolean;
  readonly batchContext: { readonly producerId: string; readonly inTransaction: boolean };
}

/** An aborted transaction of a fetch response (kafkajs decodes both as strings of an int64). */
export interface AbortedTransaction {
  readonly producerId: string;
  readonly firstOffset: string;
}

/** The key of an ABORT control record: version 0, type 0 (a COMMIT's type is 1). */
const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

function isAbortMarker(record: FetchedRecord): boolean {
  return record.isControlRecord === true && record.key !== null && Buffer.from(record.key).equals(ABORT_MARKER_KEY);
}

/**
 * The records of `records` (one partition's fetch, in offset order) that are not part of an
 * aborted transaction. Control records are kept (the caller drops them); an ABORT marker ends
 * its producer's aborted transaction.
 *
 * @example filterAbortedRecords(batch.messages, partitionData.abortedTransactions)
 */
export function filterAbortedRecords<R extends FetchedRecord>(
  records: readonly R[],
  abortedTransactions: readonly AbortedTransaction[] | null | undefined,
): R[] {
  if (abortedTransactions === null || abortedTransactions === undefined || abortedTransactions.length === 0) return records as R[];
  const pending = abortedTransactions
    .map((t) => ({ producerId: t.producerId, firstOffset: BigInt(t.firstOffset) }))
    .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  let next = 0;
  /** Producers whose aborted transaction the records have entered and not yet left. */
  const aborting = new Set<string>();
  return records.filter((record) => {
    if (next < pending.length) {
      const offset = BigInt(record.offset);
      while (next < pending.length && pending[next]!.firstOffset <= offset) aborting.add(pending[next++]!.producerId);
    }
    const { producerId, inTransaction } = record.batchContext;
    if (isAbortMarker(record)) {
      aborting.delete(producerId);
      return true;
    }
    return !(inTransaction && aborting.has(producerId));
  });
}
