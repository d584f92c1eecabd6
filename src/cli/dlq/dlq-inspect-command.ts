import type { DeadLetterFilter } from './dead-letter-filter.js';
import { matchesDeadLetterFilter } from './dead-letter-filter.js';
import { DeadLetterDuplicates } from './dead-letter-duplicates.js';
import { DeadLetterTally, type DeadLetterCounts } from './dead-letter-tally.js';
import { deadLetterView, type DeadLetterView } from './dead-letter-view.js';
import { rangeSize } from '../../kafka/topic-range.js';
import type { When } from './dlq-options.js';
import { countsTables, recordsTable } from './dlq-table.js';
import { openDlqTopic } from './dlq-tool.js';
import { EXIT, reportError } from '../../host/report-error.js';

/** Flags of `weir dlq inspect` (commander's camelCase names, already parsed). */
export interface InspectFlags {
  readonly since?: When;
  readonly until?: When;
  readonly errorClass?: readonly string[];
  readonly processor?: readonly string[];
  readonly limit: number;
  readonly format: 'table' | 'json';
  readonly brokers?: string;
  /** `--client` (`WEIR_KAFKA_CLIENT`). */
  readonly client?: string;
  readonly verbose?: boolean;
}

/** What `weir dlq inspect --format json` prints. */
export interface InspectReport {
  readonly topic: string;
  /** Records read: the whole topic as it was when the command started. */
  readonly scanned: number;
  /** Records with neither `weir.error.class` nor `weir.processor`: not weir dead letters (a topic that is not a DLQ has only these). */
  readonly withoutWeirHeaders: number;
  /** Records that pass the filters. */
  readonly matched: number;
  /** The filters, times resolved to epoch ms. */
  readonly filter: DeadLetterFilter;
  /**
   * The latest `--limit` matching records (by failure time), oldest first; `copies`: how many
   * matching records share its `weir.original.topic/partition/offset` (1: no duplicate).
   */
  readonly records: ReadonlyArray<DeadLetterView & { readonly copies: number }>;
  /** Counts over every matching record (not only the listed ones). */
  readonly counts: DeadLetterCounts;
  /**
   * Duplicate dead letters among the matching records: `records` beyond the first of their
   * original record (same `weir.original.topic/partition/offset`), and the `originals` concerned.
   */
  readonly duplicates: { readonly records: number; readonly originals: number };
}

/**
 * `weir dlq inspect <dlq-topic>`: reads a dead-letter topic from its start to its end as of
 * now — never waiting for new records, never committing offsets — and prints the matching
 * records with their weir headers decoded, and counts by error class and by processor. Dead
 * letters that share their original record (`weir.original.topic/partition/offset`) are
 * flagged (`×n` under ORIGINAL, `copies` in JSON) and counted as duplicates.
 *
 * @returns the exit code: 0, 1 when Kafka fails, 2 for a bad option or a topic that does not exist
 */
export async function runInspect(
  topic: string,
  flags: InspectFlags,
  out: (text: string) => void = (t) => process.stdout.write(t),
): Promise<number> {
  const opened = await openDlqTopic(topic, flags, 'topic');
  if (opened.kind === 'exit') return opened.code;
  const { tool, filter, ranges } = opened;
  try {
    const tally = new DeadLetterTally();
    const dups = new DeadLetterDuplicates();
    const listed: DeadLetterView[] = [];
    let scanned = 0;
    let withoutWeirHeaders = 0;
    await tool.client.readTopicRange({
      topic,
      groupId: tool.throwawayGroup('inspect'),
      ranges,
      commit: false,
      onRecords: async (records) => {
        for (const record of records) {
          scanned++;
          const view = deadLetterView(record);
          if (view.errorClass === undefined && view.processor === undefined) withoutWeirHeaders++;
          if (!matchesDeadLetterFilter(view, filter)) continue;
          tally.add(view);
          dups.add(view);
          listed.push(view);
          if (listed.length >= 2 * flags.limit) keepLatest(listed, flags.limit);
        }
      },
    });
    keepLatest(listed, flags.limit);
    listed.sort(byFailureTime);
    const counts = tally.counts();
    const report: InspectReport = {
      topic,
      scanned,
      withoutWeirHeaders,
      matched: counts.total,
      filter,
      records: listed.map((view) => ({ ...view, copies: dups.copiesOf(view) })),
      counts,
      duplicates: { records: dups.duplicates, originals: dups.originalsWithDuplicates },
    };
    // The note comes before the listing, where a reader sees it first.
    if (withoutWeirHeaders > 0) {
      process.stderr.write(
        `weir: note: ${withoutWeirHeaders} of ${scanned} record(s) have no weir headers; is '${topic}' a dead-letter topic?\n`,
      );
    }
    out(flags.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, rangeSize(ranges)));
    return EXIT.ok;
  } catch (error) {
    reportError(error, flags.verbose === true);
    return EXIT.failure;
  } finally {
    await tool.close();
  }
}

const byFailureTime = (a: DeadLetterView, b: DeadLetterView): number =>
  a.failedAtMs - b.failedAtMs || a.partition - b.partition || a.offset - b.offset;

/** Keeps the `limit` latest failures of `views`, in place. */
function keepLatest(views: DeadLetterView[], limit: number): void {
  if (views.length <= limit) return;
  views.sort(byFailureTime);
  views.splice(0, views.length - limit);
}

function formatReport(report: InspectReport, size: number): string {
  if (size === 0) return `${report.topic}: empty (no dead-letter records)\n`;
  const filtered = report.matched === report.scanned ? '' : `, ${report.matched} match the filters`;
  const lines = [`${report.topic}: ${report.scanned} record(s)${filtered}`];
  if (report.matched === 0) return `${lines[0]}\n`;
  const shown = report.records.length < report.matched ? ` (the latest ${report.records.length}; raise --limit for more)` : '';
  const { duplicates } = report;
  if (duplicates.records > 0) {
    lines.push(
      `duplicates: ${duplicates.records} record(s) repeat the original record of another (${duplicates.originals} original record(s) dead-lettered more than once, marked ×n under ORIGINAL); weir dlq replay sends each original once per run`,
    );
  }
  lines.push('', `Records${shown}:`, recordsTable(report.records), '', countsTables(report.counts));
  return `${lines.join('\n')}\n`;
}
