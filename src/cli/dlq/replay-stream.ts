import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordProducerClient } from '../../kafka/kafka-client.js';
import type { RangeBatchContext } from '../../kafka/topic-range.js';
import type { InputRecord, OutputRecord } from '../../record/record-types.js';
import type { DeadLetterFilter } from './dead-letter-filter.js';
import { matchesDeadLetterFilter } from './dead-letter-filter.js';
import { deadLetterView } from './dead-letter-view.js';
import type { DlqTool } from './dlq-tool.js';
import type { ReplayPlan } from './replay-plan.js';
import { ReplayPacer } from './replay-pacer.js';
import type { ReplayCounts, ReplayProgress } from './replay-progress.js';
import { buildReplayRecord } from './replay-record.js';

/** What a replay did, record by record. */
export class ReplayTally {
  scanned = 0;
  replayed = 0;
  skipped = 0;
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
}

/**
 * Reads the plan's ranges of the DLQ topic and re-publishes the records that pass the filter
 * and their replay limit, in chunks (`ReplayPacer.chunkSize`) paced by `--rate`. After each
 * chunk is acknowledged, the position after the records it handled is committed to the plan's
 * group (never in a dry run). SIGINT/SIGTERM stop it after the chunk in hand.
 *
 * @param producer the producer to publish with; absent in a dry run
 * @throws the client's error when Kafka fails
 */
export async function streamReplay(
  plan: ReplayPlan,
  tool: DlqTool,
  filter: DeadLetterFilter,
  producer: RecordProducerClient | undefined,
  progress: ReplayProgress,
): Promise<ReplayResult> {
  const tally = new ReplayTally();
  const pacer = new ReplayPacer(plan.dryRun ? undefined : plan.rate, Date.now());
  let stopping = false;
  const onSignal = (): void => {
    stopping = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const handle = async (records: readonly InputRecord[], ctx: RangeBatchContext): Promise<void> => {
    let chunk: OutputRecord[] = [];
    let chunkFirstOffset = -1;
    let handledUpTo = -1;
    const flush = async (): Promise<void> => {
      if (chunk.length > 0) {
        if (!(await waitWithHeartbeats(pacer.delayBefore(chunk.length, Date.now()), ctx, () => stopping))) {
          // Ctrl-C during a rate-limit wait: the chunk was not sent, so the position stays before it.
          tally.scanned -= chunk.length;
          chunk = [];
          handledUpTo = chunkFirstOffset - 1;
        } else {
          await producer?.send(chunk);
          tally.replayed += chunk.length;
          for (const r of chunk) tally.replayedTo.set(r.topic, (tally.replayedTo.get(r.topic) ?? 0) + 1);
          chunk = [];
        }
      }
      if (handledUpTo >= 0) await ctx.progress(handledUpTo + 1);
      progress.update(tally.counts());
    };
    for (const record of records) {
      tally.scanned++;
      handledUpTo = record.offset;
      if (!matchesDeadLetterFilter(deadLetterView(record), filter)) {
        tally.skipped++;
      } else {
        const decision = buildReplayRecord(record, {
          target: plan.target,
          dlqTopic: plan.dlqTopic,
          ...(plan.maxReplays !== undefined ? { maxReplays: plan.maxReplays } : {}),
        });
        if (decision.kind === 'refused') tally.refuse(decision.reason);
        else if (!plan.existingTopics.has(decision.output.topic)) tally.refuse('target-missing');
        else {
          if (chunk.length === 0) chunkFirstOffset = record.offset;
          chunk.push(decision.output);
        }
      }
      if (chunk.length >= pacer.chunkSize) await flush();
      if (stopping) break;
    }
    await flush();
  };

  try {
    await tool.client.readTopicRange({
      topic: plan.dlqTopic,
      groupId: plan.dryRun ? tool.throwawayGroup('replay-dry-run') : plan.group,
      ranges: plan.ranges,
      commit: !plan.dryRun,
      onRecords: handle,
      shouldStop: () => stopping,
    });
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    progress.stop(tally.counts());
  }
  return { tally, interrupted: stopping };
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
