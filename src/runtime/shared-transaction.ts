import { TransactionAbortedError } from '../errors.js';
import type { TopicPartitionOffset } from '../record/record-types.js';
import type { Clock, TransactionalProducer } from './ports.js';
import { assertRoundTransition, isRoundOpen, type RoundState } from './shared-transaction-state.js';
import { runAfter } from './run-after.js';

/** One transaction of the shared producer, and the tasks in it. */
interface Round {
  /** Changed only by `SharedTransaction.transition()`. */
  readonly state: RoundState;
  /** The producer's reset count when the round opened. */
  readonly epoch: number;
  /** Task → whether it asked to commit. */
  readonly members: Map<string, boolean>;
  /** Task → the offsets it committed with this round. */
  readonly offsets: Map<string, { readonly groupId: string; readonly offsets: readonly TopicPartitionOffset[] }>;
  readonly openedAt: number;
  /** Settles when the round committed (or rejects when it did not). */
  readonly outcome: Promise<void>;
  settle(error?: unknown): void;
  /** Cancels the timer that ends the join window, when one is set. */
  windowTimer?: () => void;
}

/** Options of a {@link SharedTransaction}. Times in ms. */
export interface SharedTransactionOptions {
  readonly clock: Clock;
  /**
   * How long a transaction stays open for other tasks to join after the first one began, so
   * tasks whose commit interval ends together commit together (one transaction per commit
   * interval for the member). Default 10.
   */
  readonly joinWindowMs?: number;
  /** The producer is fenced (a newer instance with its transactional id, or a stale group generation): the member must rejoin. */
  readonly onFenced?: (error: unknown) => void;
}

/** A `ProducerFencedError` (matched by code, so copies of weir agree). */
function isFenced(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'WEIR_PRODUCER_FENCED';
}

/**
 * Kafka Streams' `exactly_once_v2` (KIP-447): ONE transactional producer for every task of a
 * group member (a worker, or a stream thread), whose `sendOffsets` carries the member's live
 * group metadata, so the group coordinator fences a zombie by its generation rather than by a
 * transactional id per partition. Each task gets a {@link participant}: the same
 * `TransactionalProducer` port it uses with a producer of its own, so its `ExactlyOnceWriter`
 * — begin → send → sendOffsets → commit, and its in-doubt recovery — does not change.
 *
 * The tasks' units join one transaction: the first task to begin opens it; tasks that begin
 * while it is open join it (within `joinWindowMs` of its start); it commits — every member's
 * offsets in one `sendOffsets`, then `commit` — once every member asked to commit. A task that
 * begins while a transaction commits joins the next one. Every outcome is shared:
 * - a member's failed `send` aborts the whole transaction: every member re-runs its unit
 *   (their `send`, `commit` fail with `TransactionAbortedError`, which their writers handle as
 *   any failed transaction);
 * - a failed commit is in doubt for every member: each resets (one `reset` of the producer
 *   serves them all) and reads its committed offset back;
 * - a fenced producer fences every member (`onFenced`: the member rejoins the group with a new
 *   producer).
 */
export class SharedTransaction {
  private round: Round | undefined;
  private opening: Promise<Round> | undefined;
  /** Set after a failed commit or abort: the producer must be reset before the next transaction. */
  private broken: unknown;
  private resetting: Promise<void> | undefined;
  /** Resets of the producer so far: a member resets only for a failure no reset has dealt with yet. */
  private epoch = 0;
  private fenced: unknown;
  private readonly joinWindowMs: number;

  constructor(
    private readonly producer: TransactionalProducer,
    private readonly options: SharedTransactionOptions,
  ) {
    this.joinWindowMs = options.joinWindowMs ?? 10;
  }

  /** The shared producer's transactional id. */
  get transactionalId(): string {
    return this.producer.transactionalId;
  }

  /** The transactional producer port of one task (`<topic>-<partition>`). */
  participant(task: string): TransactionalProducer {
    let round: Round | undefined;
    /** The epoch of this member's latest transaction: what a `reset` of it is about. */
    let epoch = this.epoch;
    const mine = (): Round => {
      this.throwIfFenced();
      if (round === undefined || !isRoundOpen(round.state)) throw new TransactionAbortedError(`it ended before task ${task} committed`);
      return round;
    };
    return {
      transactionalId: this.producer.transactionalId,
      begin: async () => {
        epoch = this.epoch;
        round = await this.join(task);
        epoch = round.epoch;
      },
      send: async (records) => {
        const r = mine();
        try {
          await this.producer.send(records);
        } catch (error) {
          this.onError(error);
          throw error;
        }
        if (!isRoundOpen(r.state)) throw new TransactionAbortedError(`it ended before task ${task} committed`);
      },
      sendOffsets: async (groupId, offsets) => {
        mine().offsets.set(task, { groupId, offsets });
      },
      commit: async () => {
        const r = mine();
        r.members.set(task, true);
        try {
          this.maybeCommit(r);
        } catch (error) {
          // Never leave a transaction open with this member's records in it.
          await this.abortRound(r, error).catch(() => undefined);
        }
        await r.outcome;
      },
      abort: async () => {
        const r = round;
        round = undefined;
        this.throwIfFenced();
        if (r !== undefined && isRoundOpen(r.state))
          await this.abortRound(r, new TransactionAbortedError(`task ${task} could not send its records`));
      },
      reset: async () => {
        // First this member's last transaction must be complete: aborted if it is still open
        // (nothing of a member that resets may commit later), or settled if it is ending.
        const r = round;
        round = undefined;
        if (r !== undefined && isRoundOpen(r.state))
          await this.abortRound(r, new TransactionAbortedError(`task ${task} reset it`)).catch(() => undefined);
        else if (r !== undefined && r.state !== 'done') await r.outcome.catch(() => undefined);
        await this.reset(epoch);
        epoch = this.epoch;
      },
    };
  }

  /** Joins the open transaction, or opens one (after the one committing now, if any). */
  private async join(task: string): Promise<Round> {
    for (;;) {
      this.throwIfFenced();
      if (this.resetting !== undefined) await this.resetting;
      if (this.broken !== undefined) throw this.broken;
      const round = this.round;
      if (round !== undefined && isRoundOpen(round.state)) {
        round.members.set(task, false);
        return round;
      }
      if (round !== undefined) {
        await round.outcome.catch(() => undefined);
        continue;
      }
      this.opening ??= this.open().finally(() => (this.opening = undefined));
      await this.opening;
    }
  }

  private async open(): Promise<Round> {
    try {
      await this.producer.begin();
    } catch (error) {
      this.broken = error;
      this.onError(error);
      throw error;
    }
    let settle: (error?: unknown) => void = () => undefined;
    const outcome = new Promise<void>((resolve, reject) => (settle = (error) => (error === undefined ? resolve() : reject(error))));
    // A member that is not waiting on the outcome must not make it an unhandled rejection.
    outcome.catch(() => undefined);
    const round: Round = {
      state: 'open',
      epoch: this.epoch,
      members: new Map(),
      offsets: new Map(),
      openedAt: this.options.clock.now(),
      outcome,
      settle,
    };
    this.round = round;
    return round;
  }

  /** Commits `round` once every member asked to and its join window has passed. */
  private maybeCommit(round: Round): void {
    if (!isRoundOpen(round.state) || [...round.members.values()].some((ready) => !ready)) return;
    const waitMs = round.state === 'window-ended' ? 0 : round.openedAt + this.joinWindowMs - this.options.clock.now();
    if (waitMs > 0) {
      if (round.windowTimer === undefined) {
        const { clock } = this.options;
        // The timer firing ends the window, even a little before the clock reads its end (a
        // system timer may): asking the clock again could set timers of 0 ms forever.
        const recheck = (): void => {
          // A round that committed before its timer fired is past its window already.
          if (round.state === 'open') this.transition(round, 'window-ended');
          this.maybeCommit(round);
        };
        round.windowTimer = runAfter(clock, waitMs, recheck);
      }
      return;
    }
    void this.commitRound(round);
  }

  private async commitRound(round: Round): Promise<void> {
    this.transition(round, 'committing');
    const byGroup = new Map<string, TopicPartitionOffset[]>();
    for (const { groupId, offsets } of round.offsets.values()) byGroup.set(groupId, [...(byGroup.get(groupId) ?? []), ...offsets]);
    try {
      for (const [groupId, offsets] of byGroup) await this.producer.sendOffsets(groupId, offsets);
      await this.producer.commit();
    } catch (error) {
      // In doubt: the producer is reset before the next transaction; each member reads its offset back.
      this.transition(round, 'done');
      this.round = undefined;
      this.broken = error;
      this.onError(error);
      round.settle(error);
      return;
    }
    this.transition(round, 'done');
    this.round = undefined;
    round.settle();
  }

  private async abortRound(round: Round, reason: unknown): Promise<void> {
    this.transition(round, 'aborting');
    round.windowTimer?.();
    try {
      await this.producer.abort();
    } catch (error) {
      this.broken = error;
      this.onError(error);
      throw error;
    } finally {
      this.transition(round, 'done');
      if (this.round === round) this.round = undefined;
      round.settle(reason);
    }
  }

  /**
   * Resets the producer for a member whose transaction of `epoch` failed: once for every member
   * of the same failure (a later reset already dealt with it). When it resolves, the failed
   * transaction is complete, so each member can read its committed offset back.
   */
  private async reset(epoch: number): Promise<void> {
    this.throwIfFenced();
    if (this.resetting !== undefined) return this.resetting;
    // An aborted transaction leaves the producer clean: only a failed begin, commit or abort
    // (the producer is broken; no transaction is open then) needs a reset.
    if (epoch < this.epoch || this.broken === undefined) return;
    this.resetting = (async () => {
      try {
        await this.producer.reset();
        this.broken = undefined;
        this.epoch++;
      } catch (error) {
        this.onError(error);
        throw error;
      }
    })().finally(() => (this.resetting = undefined));
    return this.resetting;
  }

  /** The one place a round's state changes, checked against the table of {@link RoundState}. */
  private transition(round: Round, to: RoundState): void {
    assertRoundTransition(this.producer.transactionalId, round.state, to);
    (round as { state: RoundState }).state = to;
  }

  /**
   * A fenced producer fences every member, once. Its open round ends at once with the fence as
   * its outcome: the members that asked to commit wait for that outcome, and no member of a
   * fenced producer can make it commit or abort (a fenced `send` left it open, and its members
   * waited for ever: their tasks could not close, and the member never rejoined).
   */
  private onError(error: unknown): void {
    if (!isFenced(error) || this.fenced !== undefined) return;
    this.fenced = error;
    const round = this.round;
    if (round !== undefined && isRoundOpen(round.state)) {
      round.windowTimer?.();
      this.transition(round, 'done');
      this.round = undefined;
      round.settle(error);
    }
    this.options.onFenced?.(error);
  }

  private throwIfFenced(): void {
    if (this.fenced !== undefined) throw this.fenced;
  }
}
