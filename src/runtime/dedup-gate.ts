import { CappedBackoff } from '../failure/capped-backoff.js';
import type { DedupPolicy } from '../topology/compiled-topology.js';
import type { ClaimStatus, DedupStore } from './ports.js';
import type { PreparedRecord } from './prepared-record.js';
import type { TaskListener } from './task-listener.js';

/** A buffered record as the gate sees it. */
interface GateSlot {
  readonly raw: { readonly offset: number };
  prepared?: PreparedRecord;
  claim?: ClaimStatus;
}

/**
 * A task's side of idempotent consumption: claim, then confirm. Keys are claimed for a
 * window of records in one round trip before processing, and confirmed in one round trip
 * once the unit's outcomes are durable. At task start, claims this task's earlier
 * incarnation made below the committed offset are confirmed (their records are committed).
 * Store failures follow the processor's `onStoreError` policy.
 */
export class DedupGate {
  /** The last store error, when a call failed under `onStoreError: 'fail'`. */
  lastError: unknown;
  private recovered = false;
  /** Waits for a key another owner holds: 100 ms doubling to 1 s. */
  private readonly busyBackoff = new CappedBackoff(100, 1_000);
  /** Durable records' keys still to confirm (a confirmation failed under `onStoreError: 'fail'`). */
  private pending: string[] = [];

  constructor(
    private readonly store: DedupStore,
    private readonly policy: DedupPolicy,
    /** Claim owner: the task id, stable across restarts of the same partition's task. */
    private readonly owner: string,
    private readonly startOffset: number,
  ) {}

  /** Crash recovery, once per task. Returns false when the store failed and the policy is `'fail'`. */
  async recover(listener: TaskListener | undefined): Promise<boolean> {
    if (this.recovered) return true;
    try {
      await this.store.recover(this.owner, this.startOffset, this.policy.ttlMs);
    } catch (error) {
      if (this.policy.onStoreError === 'fail') {
        this.lastError = error;
        return false;
      }
      listener?.onDedupSkipped?.({ task: this.owner, records: 0, error });
    }
    this.recovered = true;
    return true;
  }

  /**
   * Claims the dedup keys of `window` (records without a key are `'claimed'` at once).
   * Returns false when the store failed and the policy is `'fail'`; under `'skip-dedup'` the
   * records are processed without dedup and the skip is reported.
   */
  async claimWindow(window: readonly GateSlot[], listener: TaskListener | undefined): Promise<boolean> {
    if (!(await this.confirmPending())) return false;
    const keyed = window.flatMap((slot) => {
      const key = slot.prepared?.dedupKey;
      return key === undefined || key === null ? [] : [{ slot, key }];
    });
    for (const slot of window) if (slot.prepared?.dedupKey == null) slot.claim = 'claimed';
    if (keyed.length === 0) return true;
    let statuses: ClaimStatus[];
    try {
      statuses = await this.store.claim(
        keyed.map(({ slot, key }) => ({ key, offset: slot.raw.offset })),
        this.owner,
        this.policy.claimTtlMs,
      );
    } catch (error) {
      if (this.policy.onStoreError === 'fail') {
        this.lastError = error;
        return false;
      }
      for (const { slot } of keyed) slot.claim = 'claimed';
      listener?.onDedupSkipped?.({ task: this.owner, records: keyed.length, error });
      return true;
    }
    keyed.forEach(({ slot }, i) => {
      slot.claim = statuses[i] ?? 'busy';
    });
    if (!statuses.includes('busy')) this.busyBackoff.reset();
    return true;
  }

  /**
   * Checks, right before a unit of work is written, that this task still holds the claims of
   * the unit's records, and renews them for the claim TTL: one round trip. A claim is made
   * when a record enters a claim window, which may be long before the record is processed (a
   * slow processor, retries in place, a busy key ahead of it); if it expired meanwhile,
   * another task may have claimed the key and processed its copy of the record. Writing this
   * unit as well would write the key twice, so a lost claim fails the check: each lost
   * record's slot takes the key's status now (`'duplicate'`: the other copy's outcome is
   * durable; `'busy'`: it is being processed), and the caller runs the unit again without
   * having written any of it. A claim that expired but was taken by nobody is simply taken
   * again. (The same claim call as {@link claimWindow}: a key this owner holds, or a free one,
   * is `'claimed'` again.)
   *
   * @param processed the unit's records, oldest first
   * @returns `'held'` (write the unit), `'lost'` (run it again), or `'failed'` (the store failed
   *   under `onStoreError: 'fail'`: see {@link lastError}; under `'skip-dedup'` a failure is
   *   reported as skipped and the unit is written)
   */
  async reassert(processed: readonly GateSlot[], listener: TaskListener | undefined): Promise<'held' | 'lost' | 'failed'> {
    const offsets = new Map<string, number>();
    for (const slot of processed) {
      const key = slot.prepared?.dedupKey;
      if (key == null || slot.claim !== 'claimed') continue;
      offsets.set(key, Math.min(offsets.get(key) ?? slot.raw.offset, slot.raw.offset));
    }
    if (offsets.size === 0) return 'held';
    const claims = [...offsets].map(([key, offset]) => ({ key, offset }));
    let statuses: ClaimStatus[];
    try {
      statuses = await this.store.claim(claims, this.owner, this.policy.claimTtlMs);
    } catch (error) {
      if (this.policy.onStoreError === 'fail') {
        this.lastError = error;
        return 'failed';
      }
      listener?.onDedupSkipped?.({ task: this.owner, records: claims.length, error });
      return 'held';
    }
    const lost = new Map<string, ClaimStatus>();
    claims.forEach(({ key }, i) => {
      const status = statuses[i] ?? 'busy';
      if (status !== 'claimed') lost.set(key, status);
    });
    if (lost.size === 0) return 'held';
    for (const slot of processed) {
      const key = slot.prepared?.dedupKey;
      const status = key == null ? undefined : lost.get(key);
      if (status !== undefined) slot.claim = status;
    }
    return 'lost';
  }

  /** How long to wait before claiming a key another owner holds again: 100 ms doubling to 1 s. */
  busyRetryMs(): number {
    return this.busyBackoff.next();
  }

  /**
   * Confirms the keys of a durable unit, and marks later buffered records with those keys
   * as duplicates (their earlier claim is stale now). The outcome is durable already, so a
   * store failure does not undo anything: it is reported, and under `onStoreError: 'fail'`
   * the keys are confirmed again before the next claim (until then the task claims nothing,
   * so a later duplicate cannot slip through). Under `'skip-dedup'` they are left to expire
   * (a later duplicate in the claim TTL is processed again; reported as skipped).
   *
   * @returns how many keys were confirmed
   */
  async confirm(keys: readonly string[], waiting: readonly GateSlot[], listener: TaskListener | undefined): Promise<number> {
    if (keys.length === 0) return 0;
    const done = new Set(keys);
    for (const slot of waiting) {
      const key = slot.prepared?.dedupKey;
      if (key != null && done.has(key)) slot.claim = 'duplicate';
    }
    const all = this.pending.length > 0 ? [...this.pending, ...keys] : [...keys];
    try {
      await this.store.markDone(all, this.owner, this.policy.ttlMs);
      this.pending = [];
      return all.length;
    } catch (error) {
      listener?.onPortError?.({ task: this.owner, port: 'dedup', error, retryInMs: 0 });
      if (this.policy.onStoreError === 'fail') this.pending = all;
      else {
        this.pending = [];
        listener?.onDedupSkipped?.({ task: this.owner, records: all.length, error });
      }
      return 0;
    }
  }

  /** Confirms keys whose confirmation failed; false when the store fails again. */
  private async confirmPending(): Promise<boolean> {
    if (this.pending.length === 0) return true;
    try {
      await this.store.markDone(this.pending, this.owner, this.policy.ttlMs);
      this.pending = [];
      return true;
    } catch (error) {
      this.lastError = error;
      return false;
    }
  }
}
