/**
 * The result table of one workload: per contestant the median and min–max over the repetitions
 * of records/s, CPU µs per record and peak RSS, and the per-repetition ratios to the baseline
 * row (Kafka Streams at_least_once, 1 thread), summarised the same way; and tables of ratios to
 * other rows (a weir build at another commit, Kafka Streams exactly_once_v2).
 */
import type { Measurement } from './bench-tools.js';
import type { Contestant } from './contestants.js';

/** One run of one contestant. */
export type RunOutcome =
  | {
      readonly ok: true;
      readonly rep: number;
      readonly m: Measurement;
      /** Records its sink held afterwards (read_committed for exactly_once); undefined when not checked. */ readonly sinkRecords?: number;
    }
  | { readonly ok: false; readonly rep: number; readonly error: string };

/** A row: skipped with a reason, or the outcomes of its runs. */
export type RowResult = { readonly contestant: Contestant } & ({ readonly skipped: string } | { readonly runs: readonly RunOutcome[] });

/** Median (mean of the middle two for an even count) of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** `median (min–max)`, or one value when they all print alike, or `–` for none. */
export function spread(values: readonly number[], digits: number): string {
  if (values.length === 0) return '–';
  const f = (v: number): string => (digits === 0 ? String(Math.round(v)) : v.toFixed(digits));
  const [low, high] = [f(Math.min(...values)), f(Math.max(...values))];
  return low === high ? low : `${f(median(values))} (${low}–${high})`;
}

function measured(row: RowResult): Array<{ rep: number; m: Measurement }> {
  return 'runs' in row ? row.runs.flatMap((r) => (r.ok ? [{ rep: r.rep, m: r.m }] : [])) : [];
}

/** Per repetition in which both ran: `pick(row) / pick(baseline)`. */
function ratios(row: RowResult, baseline: RowResult | undefined, pick: (m: Measurement) => number): number[] {
  if (baseline === undefined) return [];
  const base = new Map(measured(baseline).map(({ rep, m }) => [rep, pick(m)]));
  return measured(row).flatMap(({ rep, m }) => (base.has(rep) ? [pick(m) / base.get(rep)!] : []));
}

/**
 * The markdown table (with notes on failed runs and sink counts that differ from `records`).
 *
 * @param records input records of the workload
 * @param base the row the ratios are relative to, and its name in the header
 */
export function renderTable(rows: readonly RowResult[], records: number, base: { readonly id: string; readonly label: string }): string {
  const baseline = rows.find((r) => r.contestant.id === base.id);
  const lines = [
    `| contestant | records/s | records/s vs ${base.label} | CPU µs/record | CPU vs ${base.label} | peak RSS MB |`,
    '|---|---|---|---|---|---|',
  ];
  const notes: string[] = [];
  for (const row of rows) {
    const name = row.contestant.name;
    if ('skipped' in row) {
      lines.push(`| ${name} | skipped: ${row.skipped} | | | | |`);
      continue;
    }
    const ms = measured(row).map(({ m }) => m);
    for (const r of row.runs) {
      if (!r.ok) notes.push(`${name}, repetition ${r.rep + 1}: failed: ${r.error.split('\n')[0]}`);
      else if (r.sinkRecords !== undefined && r.sinkRecords !== records)
        notes.push(`${name}, repetition ${r.rep + 1}: the sink held ${r.sinkRecords} records, not ${records}`);
    }
    if (ms.length === 0) {
      lines.push(`| ${name} | failed in every repetition | | | | |`);
      continue;
    }
    lines.push(
      `| ${name} | ${spread(
        ms.map((m) => m.recordsPerSecond),
        0,
      )} | ${spread(
        ratios(row, baseline, (m) => m.recordsPerSecond),
        2,
      )} | ${spread(
        ms.map((m) => m.cpuMicrosPerRecord),
        1,
      )} | ${spread(
        ratios(row, baseline, (m) => m.cpuMicrosPerRecord),
        2,
      )} | ${Math.round(median(ms.map((m) => m.peakRssBytes)) / 2 ** 20)} |`,
    );
  }
  return notes.length === 0 ? lines.join('\n') : [...lines, '', ...notes.map((n) => `- ${n}`)].join('\n');
}

/**
 * weir against its baseline build (BENCH_BASELINE): for each row made by `atBaseline` whose
 * row of this checkout ran too, the per-repetition ratios now / baseline of records/s, CPU µs
 * per record and peak RSS, summarised as median (min–max). Empty when there is no such pair.
 */
export function renderBaselineTable(rows: readonly RowResult[], rev: string): string {
  const pairs = rows.flatMap((then) => {
    const now = rows.find((r) => r.contestant.id === then.contestant.baselineOf);
    return now === undefined ? [] : [[now, then] as const];
  });
  return ratioTable(pairs, `now / ${rev}`);
}

/**
 * Every other row of `base`'s guarantee against `base` (e.g. each exactly_once row against
 * Kafka Streams exactly_once_v2 in a table whose ratios are to at_least_once): per-repetition
 * ratios of records/s, CPU µs per record and peak RSS, summarised as median (min–max). Empty
 * when `base` is not among the rows or no other row has its guarantee.
 */
export function renderVersusTable(rows: readonly RowResult[], base: { readonly id: string; readonly label: string }): string {
  const then = rows.find((r) => r.contestant.id === base.id);
  if (then === undefined) return '';
  const pairs = rows.filter((r) => r !== then && r.contestant.guarantee === then.contestant.guarantee).map((now) => [now, then] as const);
  return ratioTable(pairs, `vs ${base.label}`);
}

/** One line per pair: the per-repetition ratios `now` / `then`; '' without pairs. */
function ratioTable(pairs: ReadonlyArray<readonly [now: RowResult, then: RowResult]>, versus: string): string {
  if (pairs.length === 0) return '';
  const lines = [`| contestant | records/s ${versus} | CPU µs/record ${versus} | peak RSS ${versus} |`, '|---|---|---|---|'];
  for (const [now, then] of pairs) {
    const ratio = (pick: (m: Measurement) => number): string => spread(ratios(now, then, pick), 2);
    lines.push(
      `| ${now.contestant.name} | ${ratio((m) => m.recordsPerSecond)} | ${ratio((m) => m.cpuMicrosPerRecord)} | ${ratio((m) => m.peakRssBytes)} |`,
    );
  }
  return lines.join('\n');
}
