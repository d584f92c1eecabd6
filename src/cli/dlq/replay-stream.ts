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
import type { ReplayCounts, ReplayProgress } from './replay-progress.js';
import { buildReplayRecord } from './replay-record.js';
import type { ReplayTransactions } from './replay-transactions.js';

/** What a replay did, record by record. */
export class ReplayTally {
  scanned = 0;
  replayed = 0;
  skipped = 0;
  /** Dead letters of an original record this run already replayed (same `weir.original.*`): not sent again. */
  duplicates = 0;
  /** Refused records, by reason (`replay-limit`, `no-original-topic`, `target-missing`). */
  readonly refusedBy = new Map<string, number>();
  /** Replayed records, by target topic. */
  readonly replayedTo = new Map<string, number>();

  get refused(): number {
    let n = 0;
    for (const v of this.refusedBy.values()) n += v;
    return n;
  }

  refuse(reason: string): void {
    this.refusedBy.set(reason, (this.refusedBy.get(reason) ?? 0) + 1);
  }

  counts(): ReplayCounts {
    return { scanned: this.scanned, replayed: this.replayed, refused: this.refused, skipped: this.skipped };
  }
}

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
  const tally = new ReplayTally();
  const pacer = new ReplayPacer(plan.dryRun ? undefined : plan.rate, Date.now());
  /** The position committed (or, in a dry run, reached) in each partition. */
  const committed = new Map([...plan.ranges].map(([p, r]) => [p, r.from]));
  /** The original records this run replayed: each at most once. */
  const originals = new DeadLetterDuplicates();
  let stopping = false;
  const onSignal = (): void => {
    stopping = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const handle = async (records: readonly InputRecord[], ctx: RangeBatchContext): Promise<void> => {
    const partition = records[0]!.partition;
    let chunk: OutputRecord[] = [];
    let chunkFirstOffset = -1;
    /** The offset after the records handled (replayed, refused or left out) so far. */
    let next = records[0]!.offset;
    /** Commits the chunk in hand and the position `to` in one transaction (nothing when there is neither). */
    const flush = async (to: number): Promise<void> => {
      let position = to;
      if (chunk.length > 0 && !(await waitWithHeartbeats(pacer.delayBefore(chunk.length, Date.now()), ctx, () => stopping))) {
        // Ctrl-C during a rate-limit wait: the chunk is not sent, so the position stays before it.
        tally.scanned -= chunk.length;
        chunk = [];
        next = position = chunkFirstOffset;
      }
      if (chunk.length > 0 || position > (committed.get(partition) ?? 0)) {
        try {
          await txns?.write(chunk, { topic: plan.dlqTopic, partition, offset: position });
        } catch (error) {
          // Fenced: the broker aborts the chunk in hand, so its records were not replayed.
          if (error instanceof ReplayFencedError) tally.scanned -= chunk.length;
          throw error;
        }
        committed.set(partition, position);
        tally.replayed += chunk.length;
        for (const r of chunk) tally.replayedTo.set(r.topic, (tally.replayedTo.get(r.topic) ?? 0) + 1);
        chunk = [];
      }
      await ctx.heartbeat();
      progress.update(tally.counts());
    };
    for (const record of records) {
      tally.scanned++;
      next = record.offset + 1;
      const view = deadLetterView(record);
      if (!matchesDeadLetterFilter(view, filter)) {
        tally.skipped++;
      } else {
        const decision = buildReplayRecord(record, {
          target: plan.target,
          dlqTopic: plan.dlqTopic,
          ...(plan.maxReplays !== undefined ? { maxReplays: plan.maxReplays } : {}),
        });
        if (decision.kind === 'refused') tally.refuse(decision.reason);
        else if (!plan.existingTopics.has(decision.output.topic)) tally.refuse('target-missing');
        else if (!originals.add(view)) tally.duplicates++;
        else {
          if (chunk.length === 0) chunkFirstOffset = record.offset;
          chunk.push(decision.output);
        }
      }
      if (chunk.length >= pacer.chunkSize) await flush(next);
      if (stopping) break;
    }
    // The batch's end also passes trailing transaction markers; a stopped run ends at its last record handled.
    await flush(stopping ? next : Math.max(ctx.end, next));
  };

  let fenced: ReplayFencedError | undefined;
  try {
    await tool.client.readTopicRange({
      topic: plan.dlqTopic,
      // The position is kept by the transactions, so the read itself never joins the replay group.
      groupId: tool.throwawayGroup(plan.dryRun ? 'replay-dry-run' : 'replay'),
      ranges: plan.ranges,
      commit: false,
      onRecords: handle,
      shouldStop: () => stopping,
    });
  } catch (error) {
    if (!(error instanceof ReplayFencedError)) throw error;
    fenced = error;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    progress.stop(tally.counts());
  }
  return { tally, interrupted: stopping, fenced };
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
