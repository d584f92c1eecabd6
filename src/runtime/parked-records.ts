import { Heap } from 'heap-js';
import { List, Map as ImmutableMap } from 'immutable';
import { IllegalStateError } from '../errors.js';
import type { RetryHistory } from '../failure/retry-history.js';
import type { InputRecord } from '../record/record-types.js';

/**
 * A record of an `order: 'key'` chain that waits at its task (per-key ordered non-blocking
 * retries; see `OrderedRetries`).
 *
 * - The *head* of its key failed and waits for its next attempt at `dueAt`.
 * - A *follower* came later with the same key while the key was parked: it has not been
 *   attempted (`dueAt` undefined) and is attempted once every older record of its key is
 *   decided, so a key's outputs keep the order of its input offsets. Other keys flow on.
 */
export interface ParkedRecord {
  /** Its input offset at the task (source partition): unique within the task, and its changelog key. */
  readonly offset: number;
  /** The key it is ordered by (see {@link parkedKeyId}). */
  readonly keyId: string;
  /** The chain step it resumes at (0: the first). */
  readonly step: number;
  /** The step's input as bytes: the record read, or the previous step's output. */
  readonly record: InputRecord;
  /** Its attempts so far (`attempts` 0 for a follower). */
  readonly history: RetryHistory;
  /** When its next attempt is due, epoch ms; undefined for a follower not attempted yet. */
  readonly dueAt: number | undefined;
}

/** A snapshot of the parked records: key id → its records, oldest (the head) first. */
export type ParkedState = ImmutableMap<string, List<ParkedRecord>>;

/**
 * The id a record is ordered by: its Kafka key's bytes (base64). A record without a key has no
 * order to keep with any other, so its id is its own offset.
 */
export function parkedKeyId(record: Pick<InputRecord, 'key' | 'offset'>): string {
  return record.key === null ? `#${record.offset}` : record.key.toString('base64');
}

/** A head's place in the due queue: a follower at the head is due at once (`-Infinity`). */
interface DueEntry {
  readonly dueAt: number;
  readonly keyId: string;
  readonly offset: number;
}

/**
 * The records one task holds back per key for an `order: 'key'` step, and when each key's head
 * is due. The state is an immutable.js map, so a snapshot is free: a unit of work that is
 * aborted restores the snapshot taken when it began ({@link snapshot}, {@link restore}).
 * Every change the task makes here is also written to the step's changelog topic in the same
 * unit of work (see `parked-changelog.ts`), from which {@link ParkedRecords.rebuild} restores it
 * after a crash or a rebalance.
 */
export class ParkedRecords {
  private state: ParkedState = ImmutableMap();
  private recordCount = 0;
  /** Heads by due time, earliest first; entries of heads since resolved or rescheduled are skipped. */
  private heap = ParkedRecords.dueQueue();

  private static dueQueue(): Heap<DueEntry> {
    // Not a subtraction: two heads due at once (-Infinity) would compare as NaN.
    return new Heap<DueEntry>((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0));
  }

  /** The parked records of `records` (any order), each key's oldest first: a rebuild from the changelog. */
  static rebuild(records: Iterable<ParkedRecord>): ParkedRecords {
    const byKey = new Map<string, ParkedRecord[]>();
    for (const r of records) {
      const list = byKey.get(r.keyId);
      if (list === undefined) byKey.set(r.keyId, [r]);
      else list.push(r);
    }
    const parked = new ParkedRecords();
    parked.restore(ImmutableMap([...byKey].map(([k, list]) => [k, List(list.sort((a, b) => a.offset - b.offset))])));
    return parked;
  }

  /** Keys with a parked record. */
  get keys(): number {
    return this.state.size;
  }

  /** Parked records, heads and followers. */
  get records(): number {
    return this.recordCount;
  }

  /** Whether `keyId` has a record waiting: a later record of the key must wait behind it. */
  isParked(keyId: string): boolean {
    return this.state.has(keyId);
  }

  /** The offset of the newest parked record of `keyId`, if it is parked. */
  newestOffset(keyId: string): number | undefined {
    return this.state.get(keyId)?.last()?.offset;
  }

  /** The records of `keyId`, oldest first (empty when it is not parked). */
  recordsOf(keyId: string): readonly ParkedRecord[] {
    return this.state.get(keyId)?.toArray() ?? [];
  }

  /**
   * Parks `record`: the first of its key (a head: `dueAt` set) or behind the key's newest one (a
   * follower: `dueAt` undefined).
   *
   * @throws IllegalStateError when the record is a head of a parked key, a follower of a key that
   *   is not parked, or not newer than the key's newest record
   */
  park(record: ParkedRecord): void {
    const list = this.state.get(record.keyId);
    if (list === undefined) {
      if (record.dueAt === undefined)
        throw new IllegalStateError(`parked record at offset ${record.offset} follows a key that is not parked`);
      this.state = this.state.set(record.keyId, List([record]));
      this.heap.push({ dueAt: record.dueAt, keyId: record.keyId, offset: record.offset });
    } else {
      if (record.dueAt !== undefined)
        throw new IllegalStateError(`parked record at offset ${record.offset} heads a key that is already parked`);
      if (record.offset <= list.last()!.offset)
        throw new IllegalStateError(`parked record at offset ${record.offset} is not newer than its key's offset ${list.last()!.offset}`);
      this.state = this.state.set(record.keyId, list.push(record));
    }
    this.recordCount++;
  }

  /** When the earliest head is due, epoch ms (`-Infinity`: a follower heads its key, due at once); undefined when nothing is parked. */
  nextDueAt(): number | undefined {
    this.dropStale();
    return this.heap.peek()?.dueAt;
  }

  /** The head due earliest, if it is due at `nowMs`; it stays parked until {@link resolve} or {@link reschedule}. */
  due(nowMs: number): ParkedRecord | undefined {
    const at = this.nextDueAt();
    if (at === undefined || at > nowMs) return undefined;
    return this.state.get(this.heap.peek()!.keyId)!.first();
  }

  /**
   * The head of `keyId` (at `offset`) is decided — its outputs, or its dead letter, are in the
   * unit of work: it leaves, and the key's next record, if any, heads it, due at once.
   *
   * @returns the record that heads the key now, if any
   * @throws IllegalStateError when `offset` is not the key's head
   */
  resolve(keyId: string, offset: number): ParkedRecord | undefined {
    const list = this.headList(keyId, offset);
    this.recordCount--;
    const rest = list.shift();
    if (rest.isEmpty()) {
      this.state = this.state.delete(keyId);
      return undefined;
    }
    this.state = this.state.set(keyId, rest);
    const head = rest.first()!;
    this.heap.push({ dueAt: head.dueAt ?? Number.NEGATIVE_INFINITY, keyId, offset: head.offset });
    return head;
  }

  /**
   * The head of `keyId` (at `offset`) failed again: it waits until `dueAt` with `history`, at
   * the chain step that failed (`at`; default where it was).
   *
   * @returns the head as it is parked now
   * @throws IllegalStateError when `offset` is not the key's head
   */
  reschedule(
    keyId: string,
    offset: number,
    history: RetryHistory,
    dueAt: number,
    at?: { readonly step: number; readonly record: InputRecord },
  ): ParkedRecord {
    const list = this.headList(keyId, offset);
    const head: ParkedRecord = { ...list.first()!, ...at, history, dueAt };
    this.state = this.state.set(keyId, list.set(0, head));
    this.heap.push({ dueAt, keyId, offset });
    return head;
  }

  /** The state as it is now; immutable, so later changes do not touch it. */
  snapshot(): ParkedState {
    return this.state;
  }

  /** Goes back to `state` (a {@link snapshot}): an aborted unit of work's changes are undone. */
  restore(state: ParkedState): void {
    this.state = state;
    this.recordCount = 0;
    this.heap = ParkedRecords.dueQueue();
    for (const [keyId, list] of state) {
      this.recordCount += list.size;
      const head = list.first()!;
      this.heap.push({ dueAt: head.dueAt ?? Number.NEGATIVE_INFINITY, keyId, offset: head.offset });
    }
  }

  private headList(keyId: string, offset: number): List<ParkedRecord> {
    const list = this.state.get(keyId);
    const head = list?.first();
    if (list === undefined || head === undefined || head.offset !== offset)
      throw new IllegalStateError(`offset ${offset} does not head its parked key (head: ${head?.offset ?? 'none'})`);
    return list;
  }

  /** Whether a heap entry still describes its key's head as it is now. */
  private current(entry: DueEntry): boolean {
    const head = this.state.get(entry.keyId)?.first();
    return head !== undefined && head.offset === entry.offset && (head.dueAt ?? Number.NEGATIVE_INFINITY) === entry.dueAt;
  }

  private dropStale(): void {
    while (this.heap.size() > 0 && !this.current(this.heap.peek()!)) this.heap.pop();
  }
}
