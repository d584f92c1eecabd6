import { describe, expect, it } from 'vitest';
import { DeadLetterTally } from './dead-letter-tally.js';
import { deadLetterView } from './dead-letter-view.js';
import { WEIR_HEADERS } from '../../record/weir-headers.js';
import { cell, countsTables, formatTable, recordsTable, visible } from './dlq-table.js';

describe('dlq tables', () => {
  it('aligns columns and cuts long cells', () => {
    expect(
      formatTable(
        ['A', 'LONG HEADER'],
        [
          ['xyz', '1'],
          ['x', '22'],
        ],
      ),
    ).toBe('A    LONG HEADER\nxyz  1\nx    22');
    expect(cell('a\nb   c')).toBe('a b c');
    expect(cell('abcdef', 4)).toBe('abc…');
    expect(cell(undefined)).toBe('-');
    // A header's ESC sequence is shown, not sent to the terminal, in every table.
    expect(formatTable(['A'], [['\u001b[31mred\u009b']])).toBe('A\n\\x1b[31mred\\x9b');
    expect(visible('a\u202eb\u200bc')).toBe('a\\u202eb\\u200bc');
    const counts = new DeadLetterTally();
    counts.add(
      deadLetterView({
        topic: 'd',
        partition: 0,
        offset: 0,
        timestamp: 0,
        key: null,
        value: null,
        headers: { [WEIR_HEADERS.errorClass]: 'E\u001b[2J' },
      }),
    );
    expect(countsTables(counts.counts())).toContain('E\\x1b[2J');
  });

  it('shows no ORIGINAL for a dead letter without weir.original.* headers (not its own coordinates)', () => {
    const bare = deadLetterView({ topic: 'd', partition: 1, offset: 7, timestamp: 0, key: null, value: null, headers: {} });
    expect(bare.originKnown).toBe(false);
    const row = recordsTable([bare]).split('\n')[1] ?? '';
    expect(row).not.toContain('d-1@7');
  });

  it('shows each record with its decoded weir headers, and the counts', () => {
    const view = deadLetterView({
      topic: 'd',
      partition: 1,
      offset: 7,
      timestamp: 0,
      key: Buffer.from('acct-1'),
      value: Buffer.from('{}'),
      headers: {
        [WEIR_HEADERS.errorClass]: 'GatewayTimeout',
        [WEIR_HEADERS.errorMessage]: 'timed out after 5000 ms',
        [WEIR_HEADERS.processor]: 'charge',
        [WEIR_HEADERS.attempts]: '4',
        [WEIR_HEADERS.replayCount]: '1',
        [WEIR_HEADERS.replayMax]: '2',
        [WEIR_HEADERS.originalTopic]: 'payments',
        [WEIR_HEADERS.originalPartition]: '0',
        [WEIR_HEADERS.originalOffset]: '42',
        [WEIR_HEADERS.lastFailureMs]: String(Date.UTC(2024, 4, 1)),
      },
    });
    const lines = recordsTable([view]).split('\n');
    expect(lines[0]).toMatch(
      /^PARTITION@OFFSET\s+FAILED AT \(UTC\)\s+PROCESSOR\s+ERROR CLASS\s+ATTEMPTS\s+REPLAYS\s+ORIGINAL\s+KEY\s+ERROR MESSAGE$/,
    );
    expect(lines[1]).toMatch(
      /^1@7\s+2024-05-01T00:00:00.000Z\s+charge\s+GatewayTimeout\s+4\s+1\/2\s+payments-0@42\s+acct-1\s+timed out after 5000 ms$/,
    );
    const tally = new DeadLetterTally();
    tally.add(view);
    expect(countsTables(tally.counts())).toBe('ERROR CLASS     RECORDS\nGatewayTimeout  1\n\nPROCESSOR  RECORDS\ncharge     1');
  });
});
