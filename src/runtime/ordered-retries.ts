import { IllegalStateError } from '../errors.js';
import { historyFromHeaders } from '../failure/retry-history.js';
import type { PartitionTaskOptions } from './partition-task-options.js';
import type { Subtopology } from '../topology/compiled-topology.js';
import type { ParkRequest } from './attempt-runner.js';
import type { ChainRunner } from './chain-runner.js';
import { parkedChangelogRecord, parkedTombstone } from './parked-changelog.js';
import { parkedKeyId, type ParkedRecord, type ParkedRecords, type ParkedState } from './parked-records.js';
import type { PollResult, WaitReason } from './poll-result.js';
import type { Clock } from './ports.js';
import { prepareRecord, type PreparedRecord } from './prepared-record.js';
import { subtopologyView } from './subtopology-view.js';
import type { Slot } from './task-buffer.js';
import type { TaskEvents } from './task-events.js';
import type { UnitOfWork } from './unit-of-work.js';

/** What a task's {@link OrderedRetries} works with. */
export interface OrderedRetriesOptions {
  readonly sub: Subtopology;
  /** The records parked so far: rebuilt from the changelog when the task starts. */
  readonly parked: ParkedRecords;
  /** The task's partition of the sub-topology's `parkedTopic`. */
  readonly changelog: { readonly topic: string; readonly partition: number };
  /** The most keys the task holds records of (`retry.maxParkedKeys`). */
  readonly maxParkedKeys: number;
  readonly chain: ChainRunner;
  readonly events: TaskEvents;
  readonly clock: Clock;
}

/**
 * A source task's side of per-key ordered non-blocking retries (`retry: { mode: 'topics', order:
 * 'key' }`, issue 21; as Confluent's Parallel Consumer keeps key order): a record that fails
 * waits at the task until its retry is due — parked, durably, in the changelog topic — instead of
 * going to a tier topic, and every later record of its key waits behind it, in offset order,
 * while records of other keys flow on. The input offset moves past parked records: their state
 * is in the changelog, written in the same unit of work (under exactly_once, the same
 * transaction) as the outputs and the offset, and read back when a task takes the partition on.
 *
 * Each change here joins the task's unit of work as a changelog record: parking a record (or a
 * follower behind its key) writes its entry, a failed retry rewrites it, and a decided head
 * writes a tombstone with its outputs or dead letter. A unit that is aborted goes back to the
 * snapshot taken when it began ({@link snapshot}, {@link restore}).
 */
export class OrderedRetries {
  private readonly parked: ParkedRecords;
  /** The slot of each key's head while it is attempted: its breaker holds and budget waits, in memory only. */
  private readonly slots = new Map<string, Slot>();
  /** A head's attempt had to wait (open breaker, no retry-budget token): no head is attempted before this. */
  private held: { readonly untilMs: number; readonly reason: WaitReason } | undefined;
  private reported = { keys: -1, records: -1 };

  constructor(private readonly options: OrderedRetriesOptions) {
    this.parked = options.parked;
  }

  /**
   * The ordered retries of a source task of `sub`, if a step keeps key order.
   *
   * @throws IllegalStateError when the task was not given its parked records (`options.parked`)
   */
  static forTask(
    task: string,
    sub: Subtopology,
    chain: ChainRunner,
    events: TaskEvents,
    options: Pick<PartitionTaskOptions, 'parked' | 'partition' | 'clock'>,
  ): OrderedRetries | undefined {
    const { parkedTopic, maxParkedKeys } = sub;
    if (parkedTopic === null) return undefined;
    const { parked, partition, clock } = options;
    if (parked === undefined) throw new IllegalStateError(`task ${task} keeps key order but was not given its parked records`);
    return new OrderedRetries({
      sub,
      parked,
      changelog: { topic: parkedTopic, partition },
      maxParkedKeys: maxParkedKeys!,
      chain,
      events,
      clock,
    });
  }

  /** Keys with a parked record, records parked (heads and followers), and whether the task is at `maxParkedKeys`. */
  get counts(): { readonly keys: number; readonly records: number; readonly full: boolean } {
    return { keys: this.parked.keys, records: this.parked.records, full: this.full };
  }

  /** At `maxParkedKeys`: the task takes no new record until a key's records are decided (its partition pauses). */
  get full(): boolean {
    return this.parked.keys >= this.options.maxParkedKeys;
  }

  /** Whether a parked head is due at `now` and not held for the breaker or budget (see {@link attemptDue}). */
  isDue(now: number): boolean {
    if (this.held !== undefined && now < this.held.untilMs) return false;
    return this.parked.due(now) !== undefined;
  }

  /**
   * Attempts the parked head that is due first, if one is due at `now`: its outputs (or its dead
   * letter) and its changelog entry join `unit`.
   *
   * @returns false when no head is due (or heads are held for the breaker or budget)
   */
  async attemptDue(now: number, unit: UnitOfWork): Promise<boolean> {
    if (!this.isDue(now)) return false;
    this.held = undefined;
    const head = this.parked.due(now)!;
    const slot = this.slotOf(head);
    const attempted = this.options.chain.attempt(slot, slot.prepared!, now);
    const step = attempted instanceof Promise ? await attempted : attempted;
    if (step.kind === 'wait') {
      this.held = { untilMs: step.untilMs, reason: step.reason };
      return true;
    }
    this.slots.delete(head.keyId);
    const { changelog } = this.options;
    if (step.park !== undefined) {
      const { history, dueAt, ...at } = step.park;
      const again = this.parked.reschedule(head.keyId, head.offset, history, dueAt, at);
      unit.add([parkedChangelogRecord(changelog, again)], null);
    } else {
      this.parked.resolve(head.keyId, head.offset);
      unit.add([...step.outputs, parkedTombstone(changelog, head.offset)], null);
    }
    return true;
  }

  /**
   * A buffer record whose key has a parked record waits behind it, unattempted: it is parked as
   * a follower (its changelog entry joins `unit`, with its dedup key). A record at or before its
   * key's newest parked offset was delivered again (at_least_once: its unit's offset commit was
   * lost, its changelog entries were not): its outcome is durable already, and it is skipped.
   *
   * @returns whether the record was taken here (else it is attempted now)
   */
  follow(slot: Slot, prepared: PreparedRecord, unit: UnitOfWork): boolean {
    const keyId = parkedKeyId(slot.raw);
    const newest = this.parked.newestOffset(keyId);
    if (newest === undefined) return false;
    if (slot.raw.offset <= newest) {
      unit.add([], prepared.dedupKey);
      return true;
    }
    const follower: ParkedRecord = {
      offset: slot.raw.offset,
      keyId,
      step: 0,
      record: slot.raw,
      history: historyFromHeaders(slot.raw, false),
      dueAt: undefined,
    };
    this.parked.park(follower);
    unit.add([parkedChangelogRecord(this.options.changelog, follower)], prepared.dedupKey);
    return true;
  }

  /** A buffer record failed and waits at the task (`retry-parked`): it heads its key, its entry joins `unit`. */
  park(slot: Slot, request: ParkRequest, dedupKey: string | null, unit: UnitOfWork): void {
    const head: ParkedRecord = { offset: slot.raw.offset, keyId: parkedKeyId(slot.raw), ...request };
    this.parked.park(head);
    unit.add([parkedChangelogRecord(this.options.changelog, head)], dedupKey);
  }

  /**
   * What the task does when it has nothing else to do now: with parked records, poll again when
   * the next head is due (`parked`: records that arrive wake it earlier) or at once; else `idle`
   * as the flusher says.
   */
  waitOr(idle: PollResult): PollResult {
    const due = Math.max(this.parked.nextDueAt() ?? Number.POSITIVE_INFINITY, this.held?.untilMs ?? Number.NEGATIVE_INFINITY);
    if (due === Number.POSITIVE_INFINITY) return idle;
    if (due <= this.options.clock.now()) return { kind: 'yield' };
    if (idle.kind === 'wait' && idle.untilMs <= due) return idle;
    return { kind: 'wait', untilMs: due, reason: this.held !== undefined && this.held.untilMs >= due ? this.held.reason : 'parked' };
  }

  /** The parked records as they are now (taken when a unit of work begins). */
  snapshot(): ParkedState {
    return this.parked.snapshot();
  }

  /** Back to a {@link snapshot}: the unit of work since was aborted, and its records run again. */
  restore(state: ParkedState): void {
    this.parked.restore(state);
    this.slots.clear();
    this.held = undefined;
  }

  /** Reports the parked keys and records to the listener when they changed since the last report. */
  report(topic: string, partition: number): void {
    const { keys, records } = this.parked;
    if (keys === this.reported.keys && records === this.reported.records) return;
    this.reported = { keys, records };
    this.options.events.parked(topic, partition, keys, records, this.options.maxParkedKeys);
  }

  /**
   * The slot a head is attempted in: a follower is read as a source record (it may resume at a
   * later step, as a replayed dead letter does); a head that failed before resumes at the step
   * that failed, with that step's input and its history.
   */
  private slotOf(head: ParkedRecord): Slot {
    const known = this.slots.get(head.keyId);
    if (known !== undefined && known.raw.offset === head.offset) return known;
    const slot: Slot = { raw: head.record, claim: 'claimed' };
    const { sub, chain } = this.options;
    if (head.dueAt === undefined) chain.prepare(slot, subtopologyView(sub, 0).source, null);
    else {
      slot.prepared = prepareRecord(head.record, subtopologyView(sub, head.step).source, null);
      if (head.step > 0) slot.chain = { step: head.step, prepared: slot.prepared };
      slot.retry = { history: head.history, dueAt: head.dueAt };
    }
    this.slots.set(head.keyId, slot);
    return slot;
  }
}
