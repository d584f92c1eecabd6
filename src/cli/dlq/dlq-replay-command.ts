import { setTimeout as sleep } from 'node:timers/promises';
import { matchesDeadLetterFilter } from './dead-letter-filter.js';
import { deadLetterView } from './dead-letter-view.js';
import { ReplayPacer } from './replay-pacer.js';
import { buildReplayRecord, type ReplayTarget } from './replay-record.js';
import { KafkajsRecordProducer } from '../../kafkajs/kafkajs-record-producer.js';
import { groupMemberCount, readTopicRange, type OffsetRange, type RangeBatchContext } from '../../kafkajs/topic-range-reader.js';
import type { InputRecord, OutputRecord } from '../../record/record-types.js';
import { deadLetterFilterOf, usageError, type When } from './dlq-options.js';
import { missingTopicMessage, openDlqTool, rangeSize } from './dlq-tool.js';
import { createReplayProgress, type ReplayCounts } from './replay-progress.js';
import { EXIT, exitCodeOf, reportError } from '../report-error.js';

/** Flags of `weir dlq replay` (commander's camelCase names, already parsed). */
export interface ReplayFlags {
  readonly to: ReplayTarget;
  readonly errorClass?: readonly string[];
  readonly processor?: readonly string[];
  readonly since?: When;
  readonly until?: When;
  readonly dryRun?: boolean;
  /** Records per second. */
  readonly rate?: number;
  /** Overrides each record's `weir.replay.max`. */
  readonly maxReplays?: number;
  /** The consumer group that keeps the replay's position; default `weir-replay.<dlq-topic>`. */
  readonly group?: string;
  readonly brokers?: string;
  readonly verbose?: boolean;
}

/** The consumer group of `weir dlq replay <dlq-topic>` when `--group` is not given. */
export function replayGroupId(dlqTopic: string): string {
  return `weir-replay.${dlqTopic}`;
}

class Tally {
  scanned = 0;
  replayed = 0;
  skipped = 0;
  readonly refusedBy = new Map<string, number>();
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

const breakdown = (map: Map<string, number>): string => (map.size === 0 ? '' : ` (${[...map].map(([k, v]) => `${k}: ${v}`).join(', ')})`);

/**
 * `weir dlq replay <dlq-topic>`: re-publishes dead-letter records to their original topic
 * (or `--to <topic>`) with attempts reset and `weir.replay.count` incremented; refuses
 * records past their replay limit. Progress is committed to the consumer group
 * `weir-replay.<dlq-topic>` (or `--group`) after the re-published records are acknowledged,
 * so a second run (after a crash, Ctrl-C, or just again) replays nothing twice. The position
 * passes every record a run read — replayed, refused or left out by the filters — so a record
 * is never replayed twice through one group; records a filtered run left out are replayed
 * later through another group. `--dry-run` reads from the group's position and changes
 * nothing.
 *
 * @returns the exit code: 0 when done, 1 when Kafka fails or the run was interrupted, 2 for
 *   bad options or topics that do not exist
 */
export async function runReplay(dlqTopic: string, flags: ReplayFlags, out: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  const verbose = flags.verbose === true;
  const dryRun = flags.dryRun === true;
  const now = Date.now();
  const filter = deadLetterFilterOf(flags, now);
  if ('problem' in filter) {
    usageError(filter.problem);
    return EXIT.usage;
  }
  if (flags.to.kind === 'topic' && flags.to.topic === dlqTopic) {
    usageError(`--to '${dlqTopic}' is the dead-letter topic being replayed (a loop)`);
    return EXIT.usage;
  }
  const group = flags.group ?? replayGroupId(dlqTopic);
  let tool;
  try {
    tool = await openDlqTool(flags, process.env);
  } catch (error) {
    reportError(error, verbose);
    return exitCodeOf(error);
  }
  let producer: KafkajsRecordProducer | undefined;
  try {
    const whole = await tool.ranges(dlqTopic);
    if (whole === undefined) {
      usageError(await missingTopicMessage(tool, dlqTopic, 'dead-letter topic'));
      return EXIT.usage;
    }
    const existing = new Set(await tool.admin.raw.listTopics());
    if (flags.to.kind === 'topic' && !existing.has(flags.to.topic)) {
      usageError(`--to topic '${flags.to.topic}' does not exist; create it first`);
      return EXIT.usage;
    }
    const committed = await tool.admin.committedOffsets(group, dlqTopic);
    const ranges = new Map<number, OffsetRange>();
    for (const [p, r] of whole) ranges.set(p, { from: Math.min(r.to, Math.max(r.from, committed.get(p) ?? r.from)), to: r.to });
    const total = rangeSize(ranges);
    const where = flags.to.kind === 'original' ? 'original topics' : `'${flags.to.topic}'`;
    const title = `${dryRun ? 'Dry run: replay' : 'Replay'} of ${dlqTopic} → ${where}`;
    if (total === 0) {
      const before = rangeSize(whole);
      out(
        before === 0
          ? `${title}: nothing to replay, '${dlqTopic}' is empty\n`
          : `${title}: nothing to replay, all ${before} record(s) were handled by earlier runs (group ${group})\n`,
      );
      return EXIT.ok;
    }
    if (!dryRun) {
      const members = await groupMemberCount(tool.admin, group);
      if (members > 0) {
        usageError(`another replay of '${dlqTopic}' is running (consumer group ${group} has ${members} member(s)); wait for it, or use --group`);
        return EXIT.failure;
      }
      producer = new KafkajsRecordProducer(tool.kafka);
      await producer.connect();
    }

    const tally = new Tally();
    const pacer = new ReplayPacer(dryRun ? undefined : flags.rate, Date.now());
    const progress = createReplayProgress({ label: dryRun ? `replay ${dlqTopic} (dry run)` : `replay ${dlqTopic}`, total, dryRun });
    let stopping = false;
    const onSigint = (): void => {
      stopping = true;
    };
    process.once('SIGINT', onSigint);
    process.once('SIGTERM', onSigint);

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
          const decision = buildReplayRecord(record, { target: flags.to, dlqTopic, ...(flags.maxReplays !== undefined ? { maxReplays: flags.maxReplays } : {}) });
          if (decision.kind === 'refused') tally.refuse(decision.reason);
          else if (!existing.has(decision.output.topic)) tally.refuse('target-missing');
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
      await readTopicRange(tool.kafka, {
        topic: dlqTopic,
        groupId: dryRun ? tool.throwawayGroup('replay-dry-run') : group,
        ranges,
        commit: !dryRun,
        onRecords: handle,
        shouldStop: () => stopping,
      });
    } finally {
      process.removeListener('SIGINT', onSigint);
      process.removeListener('SIGTERM', onSigint);
      progress.stop(tally.counts());
    }
    const verb = dryRun ? 'would replay' : 'replayed';
    const label = (text: string): string => `  ${text.padEnd(13)}`;
    const lines = [
      `${title}: ${stopping ? 'interrupted' : 'done'}`,
      `${label('scanned')}${tally.scanned} of ${total} record(s)${rangeSize(whole) > total ? ` (${rangeSize(whole) - total} before the group's position were handled by earlier runs)` : ''}`,
      `${label(verb)}${tally.replayed}${breakdown(tally.replayedTo)}`,
      `${label('refused')}${tally.refused}${breakdown(tally.refusedBy)}`,
      `${label('skipped')}${tally.skipped} (left out by the filters)`,
      dryRun ? '  nothing was published or committed (dry run)' : `  progress committed to consumer group ${group}`,
    ];
    if (!dryRun && tally.skipped > 0) {
      lines.push(`  the ${tally.skipped} skipped record(s) are behind the group's position now: to replay them later, select them with filters and another --group`);
    }
    if (stopping) lines.push('  run the same command again to go on where this run stopped');
    out(`${lines.join('\n')}\n`);
    return stopping ? EXIT.failure : EXIT.ok;
  } catch (error) {
    reportError(error, verbose);
    return EXIT.failure;
  } finally {
    await producer?.disconnect().catch(() => undefined);
    await tool.close();
  }
}

/**
 * Waits `ms`, heartbeating at least every second so the replay group keeps its member.
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
