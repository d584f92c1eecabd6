import { describe, expect, it } from 'vitest';
import { ParkedStateError } from '../errors.js';
import type { InputRecord, OutputRecord } from '../record/record-types.js';
import { PARKED_HEADER, parkedChangelogRecord, parkedTombstone, readParkedChangelog } from './parked-changelog.js';
import type { ParkedRecord } from './parked-records.js';

const CHANGELOG = { topic: 'app.enrich.parked', partition: 3 };

const parked: ParkedRecord = {
  offset: 42,
  keyId: Buffer.from('k1').toString('base64'),
  step: 1,
  record: {
    topic: 'orders',
    partition: 3,
    offset: 42,
    timestamp: 1_700,
    key: Buffer.from('k1'),
    value: Buffer.from('v'),
    headers: { trace: 't' },
  },
  history: { attempts: 2, hops: 0, replayCount: 1, firstFailureMs: 5_000, lastDelayMs: 200 },
  dueAt: 5_400,
};

const asRead = (records: readonly OutputRecord[]): InputRecord[] =>
  records.map((r, i) => ({
    topic: r.topic,
    partition: r.partition ?? 0,
    offset: i,
    timestamp: 0,
    key: r.key,
    value: r.value,
    headers: r.headers,
  }));

describe('parked changelog', () => {
  it('writes one entry per parked record, keyed by its input offset, and reads it back as it was', () => {
    const written = parkedChangelogRecord(CHANGELOG, parked);
    expect(written).toMatchObject({ topic: 'app.enrich.parked', partition: 3, key: Buffer.from('42'), value: Buffer.from('v') });
    expect(readParkedChangelog(asRead([written]))).toEqual([parked]);
  });

  it('keeps the latest entry of an offset and drops it at its tombstone', () => {
    const later = { ...parked, history: { ...parked.history, attempts: 3 }, dueAt: 9_000 };
    const other = {
      ...parked,
      offset: 43,
      record: { ...parked.record, offset: 43 },
      history: { ...parked.history, attempts: 0 },
      dueAt: undefined,
    };
    const log = [
      parkedChangelogRecord(CHANGELOG, parked),
      parkedChangelogRecord(CHANGELOG, other),
      parkedChangelogRecord(CHANGELOG, later),
    ];
    expect(readParkedChangelog(asRead(log))).toEqual([later, other]);
    expect(readParkedChangelog(asRead([...log, parkedTombstone(CHANGELOG, 42)]))).toEqual([other]);
  });

  it('never writes a null value for a parked record (compaction would take it for a tombstone)', () => {
    const nullValue = { ...parked, record: { ...parked.record, value: null, key: null }, keyId: '#42' };
    const written = parkedChangelogRecord(CHANGELOG, nullValue);
    expect(written.value).toEqual(Buffer.alloc(0));
    expect(readParkedChangelog(asRead([written]))).toEqual([nullValue]);
  });

  it('names the changelog record it cannot read, and why', () => {
    const good = parkedChangelogRecord(CHANGELOG, parked);
    const bad = (patch: Partial<OutputRecord>) => () => readParkedChangelog(asRead([good, { ...good, ...patch }]));
    expect(bad({ key: Buffer.from('x') })).toThrow(
      new ParkedStateError('changelog record app.enrich.parked-3@1: its key is not an input offset ("x")'),
    );
    expect(bad({ headers: {} })).toThrow(`changelog record app.enrich.parked-3@1: it has no ${PARKED_HEADER} header`);
    expect(bad({ headers: { [PARKED_HEADER]: '{' } })).toThrow(`its ${PARKED_HEADER} header is not JSON`);
    const meta = JSON.parse(good.headers[PARKED_HEADER] as string) as Record<string, unknown>;
    expect(bad({ headers: { [PARKED_HEADER]: JSON.stringify({ ...meta, step: -1 }) } })).toThrow(/header is invalid: .*step/s);
  });
});
