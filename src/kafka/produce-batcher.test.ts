import { describe, expect, it } from 'vitest';
import type { OutputRecord } from '../record/record-types.js';
import { DEFAULT_REQUEST_LIMITS, ProduceBatcher, chunkRecords, recordBytes } from './produce-batcher.js';

const record = (id: number, size = 10): OutputRecord => ({
  topic: 't',
  key: Buffer.from(`k${id}`),
  value: Buffer.alloc(size),
  headers: { id: String(id) },
});
const ids = (records: readonly OutputRecord[]) => records.map((r) => r.headers['id']);

describe('chunkRecords', () => {
  it('keeps order and stays under the byte budget, giving an oversized record a chunk of its own', () => {
    const records = [record(1, 100), record(2, 100), record(3, 1000), record(4, 100)];
    const budget = recordBytes(records[0]!) * 2;
    expect(chunkRecords(records, { maxBytes: budget, maxRecords: 10 }).map(ids)).toEqual([['1', '2'], ['3'], ['4']]);
  });

  it('keeps each chunk within the record count', () => {
    const records = [1, 2, 3, 4, 5].map((id) => record(id));
    expect(chunkRecords(records, { ...DEFAULT_REQUEST_LIMITS, maxRecords: 2 }).map(ids)).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });
});

describe('ProduceBatcher', () => {
  it('coalesces sends made in the same tick into one request, each caller in order', async () => {
    const requests: string[][] = [];
    const batcher = new ProduceBatcher(async (records) => {
      requests.push(ids(records) as string[]);
    });
    await Promise.all([batcher.send([record(1), record(2)]), batcher.send([record(3)]), batcher.send([])]);
    expect(requests).toEqual([['1', '2', '3']]);
  });

  it('sends what arrives during a request in the next one', async () => {
    const requests: string[][] = [];
    let release: () => void = () => undefined;
    const batcher = new ProduceBatcher(async (records) => {
      requests.push(ids(records) as string[]);
      if (requests.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = batcher.send([record(1)]);
    await new Promise((resolve) => setImmediate(resolve));
    const second = batcher.send([record(2)]);
    const third = batcher.send([record(3)]);
    release();
    await Promise.all([first, second, third]);
    expect(requests).toEqual([['1'], ['2', '3']]);
  });

  it('rejects every caller of a failed request and serves later ones', async () => {
    let fail = true;
    const batcher = new ProduceBatcher(async () => {
      if (fail) throw new Error('broker down');
    });
    const results = await Promise.allSettled([batcher.send([record(1)]), batcher.send([record(2)])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batcher.send([record(3)])).resolves.toBeUndefined();
  });

  it('splits a batch over the byte budget into several requests', async () => {
    const requests: string[][] = [];
    const one = recordBytes(record(1, 100));
    const batcher = new ProduceBatcher(
      async (records) => {
        requests.push(ids(records) as string[]);
      },
      { maxBytes: one * 2, maxRecords: 100 },
    );
    await Promise.all([batcher.send([record(1, 100), record(2, 100), record(3, 100)]), batcher.send([record(4, 100)])]);
    expect(requests.flat()).toEqual(['1', '2', '3', '4']);
    expect(requests.every((r) => r.length <= 2)).toBe(true);
  });

  it('splits coalesced sends over the record count into several requests, in order', async () => {
    const requests: string[][] = [];
    const batcher = new ProduceBatcher(
      async (records) => {
        requests.push(ids(records) as string[]);
      },
      { ...DEFAULT_REQUEST_LIMITS, maxRecords: 3 },
    );
    await Promise.all([
      batcher.send([record(1), record(2)]),
      batcher.send([record(3), record(4)]),
      batcher.send([1, 2, 3, 4].map((i) => record(10 + i))),
    ]);
    expect(requests.flat()).toEqual(['1', '2', '3', '4', '11', '12', '13', '14']);
    expect(requests.every((r) => r.length <= 3)).toBe(true);
  });
});
