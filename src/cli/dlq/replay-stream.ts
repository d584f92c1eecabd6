import { setTimeout as sleep } from 'node:timers/promises';
import { ReplayFencedError } from '../../errors.js';
import type { RangeBatchContext } from '../../kafka/topic-range.js';
import type { InputRecord, OutputRecord } from '../../record/record-types.js';
import type { DeadLetterFilter } from './dead-letter-filter.js';
import { matchesDeadLetterFilter } from './dead-letter-filter.js';
import { DeadLetterDuplicates } from './dead-letter-duplicates.js';
import { deadLetterView } from './dead-letter-view.js';
import type { DlqTool } from './dlq-tool.js';
import type { ReplayPlan } from './replay-plan.js';
import { ReplayPacer } from './replay-pacer.js';
import { ReplayPosition } from './replay-position.js';
import type { ReplayProgress } from './replay-progress.js';
import { buildReplayRecord } from './replay-record.js';
import { ReplayTally } from './replay-tally.js';
import type { ReplayTransactions } from './replay-transactions.js';

/** How a replay run ended. */
export interface ReplayResult {
  readonly tally: ReplayTally;
  /** Stopped by SIGINT/SIGTERM before the end of the plan's ranges. */
  readonly interrupted: boolean;
  /** Stopped because a newer run of the same replay group fenced this one. */
  readonly fenced: ReplayFencedError | undefined;
}

/**
 * Reads the plan's ranges of the DLQ topic and re-publishes the records that pass the filter
 * and their replay limit, in chunks (`ReplayPacer.chunkSize`) paced by `--rate`, each original
 * record (`weir.original.topic/partition/offset`) at most once per run. Each chunk
 * and the position after the records it handled go in one transaction ({@link
 * ReplayTransactions}); the end of each fetched batch moves the position too (past refused
 * and filtered-out records and transaction markers). A dry run reads in a throw-away group
 * and writes nothing. SIGINT/SIGTERM stop it after the chunk in hand.
 *
 * @param txns where chunks go; absent in a dry run
 * @throws the client's error when Kafka fails (a fenced run is a result, not an error)
 */
export async function streamReplay(
  plan: ReplayPlan,
  tool: DlqTool,
  filter: DeadLetterFilter,
  txns: ReplayTransactions | undefined,
  progress: ReplayProgress,
): Promise<ReplayResult> {
  return new ReplayRun(plan, filter, txns, progress).run(tool);
}

/** One partition's batch in hand: the chunk not yet written, and how far the batch was handled. */
interface Batch {
  readonly partition: number;
  readonly ctx: RangeBatchContext;
  chunk: OutputRecord[];
  /** The offset of the chunk's first record. */
  chunkFirstOffset: number;
  /** The offset after the records handled (replayed, refused or left out) so far. */
  next: number;
}

/** One run of {@link streamReplay}: its steps, and what it keeps between batches. */
class ReplayRun {
  private readonly tally = new ReplayTally();
  private readonly pacer: ReplayPacer;
  /** The position committed (or, in a dry run, reached) in each partition. */
  private readonly position: ReplayPosition;
  /** The original records this run replayed: each at most once. */
  private readonly originals = new DeadLetterDuplicates();
  /** SIGINT or SIGTERM came: stop after the chunk in hand. */
  private stopping = false;

  constructor(
    private readonly plan: ReplayPlan,
    private readonly filter: DeadLetterFilter,
    private readonly txns: ReplayTransactions | undefined,
    private readonly progress: ReplayProgress,
  ) {
    this.pacer = new ReplayPacer(plan.dryRun ? undefined : plan.rate, Date.now());
    this.position = new ReplayPosition(plan.ranges);
  }

  /** Reads the plan's ranges batch by batch until their end, a signal or a fence. */
  async run(tool: DlqTool): Promise<ReplayResult> {
    const onSignal = (): void => {
      this.stopping = true;
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let fenced: ReplayFencedError | undefined;
    try {
      await tool.client.readTopicRange({
        topic: this.plan.dlqTopic,
        // The position is kept by the transactions, so the read itself never joins the replay group.
        groupId: tool.throwawayGroup(this.plan.dryRun ? 'replay-dry-run' : 'replay'),
        ranges: this.plan.ranges,
        commit: false,
        onRecords: (records, ctx) => this.handleBatch(records, ctx),
        shouldStop: () => this.stopping,
      });
      // Unless stopped, the read returns at the end of every range, past trailing transaction markers too.
      if (!this.stopping) this.position.reachedEnd();
    } catch (error) {
      if (!(error instanceof ReplayFencedError)) throw error;
      fenced = error;
    } finally {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      this.progress.stop(this.tally.counts(), this.position.passed());
    }
    return { tally: this.tally, interrupted: this.stopping, fenced };
  }

  /** One partition's batch: each record replayed, refused or left out, the replayed ones in chunks. */
  private async handleBatch(records: readonly InputRecord[], ctx: RangeBatchContext): Promise<void> {
    const batch: Batch = { partition: records[0]!.partition, ctx, chunk: [], chunkFirstOffset: -1, next: records[0]!.offset };
    for (const record of records) {
      this.tally.scanned++;
      batch.next = record.offset + 1;
      const output = this.decide(record);
      if (output !== undefined) {
        if (batch.chunk.length === 0) batch.chunkFirstOffset = record.offset;
        batch.chunk.push(output);
      }
      if (batch.chunk.length >= this.pacer.chunkSize) await this.commitChunk(batch, batch.next);
      if (this.stopping) break;
    }
    // The batch's end also passes trailing transaction markers; a stopped run ends at its last record handled.
    await this.commitChunk(batch, this.stopping ? batch.next : Math.max(ctx.end, batch.next));
  }

  /** Counts what becomes of one dead letter: its replay record when it is to be replayed, else undefined. */
  private decide(record: InputRecord): OutputRecord | undefined {
    const { plan, tally } = this;
    const view = deadLetterView(record);
    if (!matchesDeadLetterFilter(view, this.filter)) {
      tally.skipped++;
      return undefined;
    }
    const decision = buildReplayRecord(record, {
      target: plan.target,
      dlqTopic: plan.dlqTopic,
      ...(plan.maxReplays !== undefined ? { maxReplays: plan.maxReplays } : {}),
    });
    if (decision.kind === 'refused') tally.refuse(decision.reason);
    else if (!plan.existingTopics.has(decision.output.topic)) tally.refuse('target-missing');
    else if (!this.originals.add(view)) tally.duplicates++;
    else return decision.output;
    return undefined;
  }

  /** Commits the chunk in hand and the position `to` in one transaction (nothing when there is neither), paced by `--rate`. */
  private async commitChunk(batch: Batch, to: number): Promise<void> {
    let position = to;
    const paced = () => waitWithHeartbeats(this.pacer.delayBefore(batch.chunk.length, Date.now()), batch.ctx, () => this.stopping);
    if (batch.chunk.length > 0 && !(await paced())) {
      // Ctrl-C during a rate-limit wait: the chunk is not sent, so the position stays before it.
      this.tally.scanned -= batch.chunk.length;
      batch.chunk = [];
      batch.next = position = batch.chunkFirstOffset;
    }
    if (batch.chunk.length > 0 || position > this.position.get(batch.partition)) {
      await this.write(batch.chunk, batch.partition, position);
      batch.chunk = [];
    }
    await batch.ctx.heartbeat();
    this.progress.update(this.tally.counts(), this.position.passed());
  }

  /** Writes `chunk` and the position in one transaction (in a dry run, only moves the position) and counts the chunk replayed. */
  private async write(chunk: readonly OutputRecord[], partition: number, position: number): Promise<void> {
    try {
      await this.txns?.write(chunk, { topic: this.plan.dlqTopic, partition, offset: position });
    } catch (error) {
      // Fenced: the broker aborts the chunk in hand, so its records were not replayed.
      if (error instanceof ReplayFencedError) this.tally.scanned -= chunk.length;
      throw error;
    }
    this.position.set(partition, position);
    this.tally.replayed += chunk.length;
    for (const r of chunk) this.tally.replayedTo.set(r.topic, (this.tally.replayedTo.get(r.topic) ?? 0) + 1);
  }
}

/**
 * Waits `ms`, heartbeating at least every 250 ms so the replay group keeps its member.
 *
 * @returns false when `cancelled()` turned true first
 */
async function waitWithHeartbeats(ms: number, ctx: RangeBatchContext, cancelled: () => boolean): Promise<boolean> {
  let left = ms;
  while (left > 0) {
    if (cancelled()) return false;
    const step = Math.min(left, 250);
    await sleep(step);
    left -= step;
    await ctx.heartbeat();
  }
  return true;
}
