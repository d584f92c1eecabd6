import { rangeSize } from '../../kafka/topic-range.js';
import { WEIR_HEADERS } from '../../record/weir-headers.js';
import { EXIT, reportError } from '../../host/report-error.js';
import { usageError, type When } from './dlq-options.js';
import { openDlqTopic } from './dlq-tool.js';
import { planReplay, type ReplayPlan } from './replay-plan.js';
import { createReplayProgress } from './replay-progress.js';
import type { ReplayTarget } from './replay-record.js';
import { streamReplay, type ReplayResult } from './replay-stream.js';
import { ReplayTransactions, replayTransactionalId } from './replay-transactions.js';

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
  /** `--client` (`WEIR_KAFKA_CLIENT`). */
  readonly client?: string;
  readonly verbose?: boolean;
}

/** The consumer group of `weir dlq replay <dlq-topic>` when `--group` is not given. */
export function replayGroupId(dlqTopic: string): string {
  return `weir-replay.${dlqTopic}`;
}

const breakdown = (map: Map<string, number>): string => (map.size === 0 ? '' : ` (${[...map].map(([k, v]) => `${k}: ${v}`).join(', ')})`);

/**
 * `weir dlq replay <dlq-topic>`: re-publishes dead-letter records to their original topic
 * (or `--to <topic>`) with attempts reset and `weir.replay.count` incremented; refuses
 * records past their replay limit. Each chunk of re-published records and the replay's new
 * position go in one Kafka transaction (`ReplayTransactions`, transactional id
 * `<group>.producer`) with the position kept in the consumer group `weir-replay.<dlq-topic>`
 * (or `--group`), so a second run (after a crash, SIGKILL, Ctrl-C, or just again) replays
 * nothing twice and skips nothing, for `read_committed` readers. A new run fences an older one
 * that is still running (exit 1 for the older one). The position passes every record a run
 * read — replayed, refused or left out by the filters — so a record is never replayed twice
 * through one group; records a filtered run left out are replayed later through another
 * group. `--dry-run` reads from the group's position and changes nothing. Three steps: plan
 * (`planReplay`), stream (`streamReplay`), report.
 *
 * @returns the exit code: 0 when done, 1 when Kafka fails, the run was interrupted or fenced by a newer run, 2 for
 *   bad options or topics that do not exist
 */
export async function runReplay(
  dlqTopic: string,
  flags: ReplayFlags,
  out: (text: string) => void = (t) => process.stdout.write(t),
): Promise<number> {
  const verbose = flags.verbose === true;
  if (flags.to.kind === 'topic' && flags.to.topic === dlqTopic) {
    usageError(`--to '${dlqTopic}' is the dead-letter topic being replayed (a loop)`);
    return EXIT.usage;
  }
  const opened = await openDlqTopic(dlqTopic, flags, 'dead-letter topic');
  if (opened.kind === 'exit') return opened.code;
  const { tool, filter, ranges: whole } = opened;
  let txns: ReplayTransactions | undefined;
  try {
    const group = flags.group ?? replayGroupId(dlqTopic);
    const planned = await planReplay(tool, {
      dlqTopic,
      target: flags.to,
      group,
      dryRun: flags.dryRun === true,
      ...(flags.rate !== undefined ? { rate: flags.rate } : {}),
      ...(flags.maxReplays !== undefined ? { maxReplays: flags.maxReplays } : {}),
      whole,
      claim: async () => {
        txns = await ReplayTransactions.open(tool.client, dlqTopic, group);
      },
    });
    if (planned.kind === 'done') {
      out(planned.message);
      return EXIT.ok;
    }
    if (planned.kind === 'refused') {
      usageError(planned.problem);
      return planned.exit === 'usage' ? EXIT.usage : EXIT.failure;
    }
    const { plan } = planned;
    const progress = createReplayProgress({
      label: plan.dryRun ? `replay ${dlqTopic} (dry run)` : `replay ${dlqTopic}`,
      total: rangeSize(plan.ranges),
      dryRun: plan.dryRun,
    });
    const result = await streamReplay(plan, tool, filter, txns, progress);
    out(replayReport(plan, result));
    // As `weir dlq inspect` says it: records with no original topic are not weir's dead letters.
    const headerless = result.tally.refusedBy.get('no-original-topic') ?? 0;
    if (headerless > 0) {
      // A real run committed its position past them.
      const behind = plan.dryRun
        ? ''
        : ` They are behind consumer group ${plan.group}'s position now: to send them somewhere, name the topic with --to and use another --group.`;
      process.stderr.write(
        `weir: note: ${headerless} of ${result.tally.scanned} record(s) have no ${WEIR_HEADERS.originalTopic} header; is '${dlqTopic}' a dead-letter topic?${behind}\n`,
      );
    }
    if (result.fenced !== undefined) reportError(result.fenced, verbose);
    return result.interrupted || result.fenced !== undefined ? EXIT.failure : EXIT.ok;
  } catch (error) {
    reportError(error, verbose);
    return EXIT.failure;
  } finally {
    await txns?.close();
    await tool.close();
  }
}

/** The summary a replay run prints: what it scanned, replayed, refused and skipped. */
function replayReport(plan: ReplayPlan, { tally, interrupted, fenced }: ReplayResult): string {
  const total = rangeSize(plan.ranges);
  const before = rangeSize(plan.whole) - total;
  const verb = plan.dryRun ? 'would replay' : 'replayed';
  const label = (text: string): string => `  ${text.padEnd(13)}`;
  const lines = [
    `${plan.title}: ${fenced !== undefined ? 'fenced by a newer run' : interrupted ? 'interrupted' : 'done'}`,
    `${label('scanned')}${tally.scanned} of ${total} record(s)${before > 0 ? ` (${before} before the group's position were handled by earlier runs)` : ''}`,
    `${label(verb)}${tally.replayed}${breakdown(tally.replayedTo)}`,
    `${label('refused')}${tally.refused}${breakdown(tally.refusedBy)}`,
    `${label('skipped')}${tally.skipped} (left out by the filters)`,
    ...(tally.duplicates > 0
      ? [`${label('duplicates')}${tally.duplicates} (more dead letters of an original record in this run; each original is sent once)`]
      : []),
    plan.dryRun
      ? '  nothing was published or committed (dry run)'
      : `  progress committed to consumer group ${plan.group}, with each chunk in one transaction (transactional id ${replayTransactionalId(plan.group)})`,
  ];
  if (!plan.dryRun && tally.skipped > 0) {
    lines.push(
      `  the ${tally.skipped} skipped record(s) are behind the group's position now: to replay them later, select them with filters and another --group`,
    );
  }
  if (interrupted) lines.push('  run the same command again to go on where this run stopped');
  return `${lines.join('\n')}\n`;
}
