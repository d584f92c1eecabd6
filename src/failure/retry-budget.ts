import { RETRY_BUDGET_WINDOW_MS, type RetryBudgetPolicy } from './retry-budget-policy.js';

/** Slots per window: deposits and withdrawals expire a slot (1 s) at a time. */
const SLOTS = 10;
const SLOT_MS = RETRY_BUDGET_WINDOW_MS / SLOTS;

interface Slot {
  start: number;
  firstAttempts: number;
  retries: number;
}

/** A retry the budget could not pay for: try again at `retryAtMs` (epoch ms). */
export type BudgetAnswer = { readonly kind: 'granted' } | { readonly kind: 'wait'; readonly retryAtMs: number };

/**
 * A processor's retry budget in one worker process (Finagle's `RetryBudget`, a token bucket
 * whose tokens expire): every first attempt deposits `ratio` tokens, `minPerSecond` × 10 tokens
 * are always there, and a retry withdraws one; both expire after 10 s, in 1 s slots (a slot
 * leaves the window once it ended more than 10 s ago). So at every retry, the retries in the
 * window ≤ `ratio` × its first attempts + `minPerSecond` × 10. Pure: time comes in as `now`
 * (epoch ms).
 *
 * @example
 * const budget = new RetryBudget({ ratio: 0.2, minPerSecond: 1 });
 * budget.firstAttempt(now);
 * if (budget.tryRetry(now).kind === 'granted') retry();
 */
export class RetryBudget {
  private slots: Slot[] = [];
  /** Retries that had to wait for a token (each refusal of a record counted once by its task). */
  delayed = 0;

  constructor(readonly policy: RetryBudgetPolicy) {}

  /** A first attempt was made: it deposits `ratio` tokens. */
  firstAttempt(now: number): void {
    this.slotAt(now).firstAttempts++;
  }

  /** Tokens available at `now` (may be fractional). */
  tokens(now: number): number {
    this.expire(now);
    let firsts = 0;
    let retries = 0;
    for (const s of this.slots) {
      firsts += s.firstAttempts;
      retries += s.retries;
    }
    return this.policy.ratio * firsts + this.reserve - retries;
  }

  /** Withdraws a token for a retry, or says when one may be there. */
  tryRetry(now: number): BudgetAnswer {
    if (this.tokens(now) >= 1) {
      this.slotAt(now).retries++;
      return { kind: 'granted' };
    }
    return { kind: 'wait', retryAtMs: this.nextTokenAt(now) };
  }

  private get reserve(): number {
    return (this.policy.minPerSecond * RETRY_BUDGET_WINDOW_MS) / 1_000;
  }

  /** The first slot expiry after which the balance is ≥ 1 (the reserve alone is ≥ 1, so one exists). */
  private nextTokenAt(now: number): number {
    let balance = this.tokens(now);
    for (const s of this.slots) {
      balance += s.retries - this.policy.ratio * s.firstAttempts;
      if (balance >= 1) return s.start + SLOT_MS + RETRY_BUDGET_WINDOW_MS;
    }
    return now + SLOT_MS;
  }

  private expire(now: number): void {
    const from = now - RETRY_BUDGET_WINDOW_MS;
    for (let s = this.slots[0]; s !== undefined && s.start + SLOT_MS <= from; s = this.slots[0]) this.slots.shift();
  }

  private slotAt(now: number): Slot {
    const start = Math.floor(now / SLOT_MS) * SLOT_MS;
    const last = this.slots[this.slots.length - 1];
    if (last !== undefined && last.start === start) return last;
    const slot = { start, firstAttempts: 0, retries: 0 };
    this.slots.push(slot);
    return slot;
  }
}
