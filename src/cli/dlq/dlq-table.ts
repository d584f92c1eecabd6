import type { DeadLetterCounts } from './dead-letter-tally.js';
import type { DeadLetterView } from './dead-letter-view.js';

/**
 * Plain-text tables of `weir dlq inspect --format table`: aligned columns, long cells cut
 * with an ellipsis.
 */

/** Cuts `text` to `max` characters (an ellipsis marks the cut) and puts it on one line. */
export function cell(text: string | number | null | undefined, max = 40): string {
  if (text === null || text === undefined || text === '') return '-';
  const flat = String(text).replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/**
 * `text` safe to print on a terminal: control characters (an ESC from a header would drive the
 * terminal) as `\xNN`, bidi overrides and zero-width characters (which make text display other
 * than it reads) as `\uNNNN`.
 */
export function visible(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .replace(/[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  );
}

/** Aligns rows under a header, each cell made {@link visible}; the last column is not padded. */
export function formatTable(header: readonly string[], unsafeRows: ReadonlyArray<readonly string[]>): string {
  // Every cell passes through visible(): dead-letter headers are other people's text.
  const rows = unsafeRows.map((r) => r.map(visible));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The original record's coordinates; `-` when the dead letter lacks its `weir.original.*` headers. */
function origin(view: DeadLetterView): string {
  return view.originKnown ? `${view.origin.topic}-${view.origin.partition}@${view.origin.offset}` : '-';
}

/**
 * The records table: one line per record, the weir headers that matter decoded. A record
 * with `copies` > 1 (dead letters of the same original record) shows `×<copies>` after its
 * ORIGINAL.
 */
export function recordsTable(views: ReadonlyArray<DeadLetterView & { readonly copies?: number }>): string {
  const header = [
    'PARTITION@OFFSET',
    'FAILED AT (UTC)',
    'PROCESSOR',
    'ERROR CLASS',
    'ATTEMPTS',
    'REPLAYS',
    'ORIGINAL',
    'KEY',
    'ERROR MESSAGE',
  ];
  const rows = views.map((v) => [
    `${v.partition}@${v.offset}`,
    new Date(v.failedAtMs).toISOString(),
    cell(v.processor, 24),
    cell(v.errorClass, 28),
    cell(v.attempts),
    v.replayMax === undefined ? String(v.replayCount) : `${v.replayCount}/${v.replayMax}`,
    cell(origin(v), 48) + ((v.copies ?? 1) > 1 ? ` ×${v.copies}` : ''),
    cell(v.key, 24),
    cell(v.errorMessage, 60),
  ]);
  return formatTable(header, rows);
}

/** The count tables: by error class, then by processor. */
export function countsTables(counts: DeadLetterCounts): string {
  const table = (title: string, map: Readonly<Record<string, number>>): string =>
    formatTable(
      [title, 'RECORDS'],
      Object.entries(map).map(([name, n]) => [name, String(n)]),
    );
  return `${table('ERROR CLASS', counts.byErrorClass)}\n\n${table('PROCESSOR', counts.byProcessor)}`;
}
