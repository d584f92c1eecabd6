import { DedupStoreError } from '../errors.js';
import type { ClaimStatus, Clock, DedupClaim, DedupStore } from '../runtime/ports.js';

type Entry =
  | { readonly state: 'claimed'; readonly owner: string; readonly offset: number; readonly expiresAt: number }
  | { readonly state: 'done'; readonly expiresAt: number };

/**
 * An in-process {@link DedupStore}: the TopologyTestDriver's store, and `dedup.store:
 * 'memory'` for a single worker. Same semantics as `RedisDedupStore` (one shared contract
 * test suite runs against both); time comes from the injected clock. Not shared between
 * processes, and lost on restart.
 */
export class MemoryDedupStore implements DedupStore {
  private readonly entries = new Map<string, Entry>();
  /** Set true to make every call fail, as an unreachable store would (fault injection). */
  down = false;

  constructor(private readonly clock: Clock = { now: () => Date.now() }) {}

  async claim(claims: readonly DedupClaim[], owner: string, claimTtlMs: number): Promise<ClaimStatus[]> {
    this.check();
    const now = this.clock.now();
    return claims.map(({ key, offset }) => {
      const entry = this.live(key, now);
      if (entry === undefined) {
        this.entries.set(key, { state: 'claimed', owner, offset, expiresAt: now + claimTtlMs });
        return 'claimed';
      }
      if (entry.state === 'done') return 'duplicate';
      if (entry.owner !== owner) return 'busy';
      // The earliest claiming offset is kept: recovery decides by it.
      this.entries.set(key, { ...entry, offset: Math.min(entry.offset, offset), expiresAt: now + claimTtlMs });
      return 'claimed';
    });
  }

  async markDone(keys: readonly string[], _owner: string, ttlMs: number): Promise<void> {
    this.check();
    const expiresAt = this.clock.now() + ttlMs;
    for (const key of keys) this.entries.set(key, { state: 'done', expiresAt });
  }

  async recover(owner: string, committedOffset: number, ttlMs: number): Promise<number> {
    this.check();
    const now = this.clock.now();
    let confirmed = 0;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(key);
      } else if (entry.state === 'claimed' && entry.owner === owner && entry.offset < committedOffset) {
        this.entries.set(key, { state: 'done', expiresAt: now + ttlMs });
        confirmed++;
      }
    }
    return confirmed;
  }

  async close(): Promise<void> {}

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private check(): void {
    if (this.down) throw new DedupStoreError('memory dedup store is down (fault injection)');
  }
}
