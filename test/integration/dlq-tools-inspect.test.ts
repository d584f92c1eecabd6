/**
 * `weir dlq inspect` against the real broker, on dead-letter topics written by the test: a
 * missing and an empty topic, decoded headers, counts, filters and the limit. `weir dlq replay`:
 * dlq-tools-replay.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { produce } from '../../scripts/lib/topic-io.js';
import { runWeir } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';
import { deadLetter } from './support/dead-letter.js';
import { unique } from './support/unique.js';

const fx = useIntegrationFixture('weir-it-dlq-tools-inspect');
const HOUR = 3_600_000;

describe(onClient('weir dlq inspect'), () => {
  it('reports a missing topic (exit 2) and an empty one (exit 0) without waiting', async () => {
    const missing = await runWeir(['dlq', 'inspect', unique('no-such.dlq')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/topic 'no-such\.dlq-[0-9a-f]+' does not exist/);

    const empty = unique('empty.dlq');
    await fx.createTopics([{ topic: empty, partitions: 3 }]);
    const began = Date.now();
    const table = await runWeir(['dlq', 'inspect', empty]);
    expect(table).toMatchObject({ code: 0, stdout: `${empty}: empty (no dead-letter records)\n` });
    const json = await runWeir(['dlq', 'inspect', empty, '--format', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ topic: empty, scanned: 0, matched: 0, records: [], counts: { total: 0 } });
    expect(Date.now() - began).toBeLessThan(20_000);
  });

  it('says so, before the listing, when the topic holds records without weir headers (not a dead-letter topic)', async () => {
    const plain = unique('orders');
    await fx.createTopics([{ topic: plain, partitions: 1 }]);
    await produce(fx.kafka, plain, [
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
    ]);
    const note = `weir: note: 2 of 2 record(s) have no weir headers; is '${plain}' a dead-letter topic?\n`;
    const json = await runWeir(['dlq', 'inspect', plain, '--format', 'json']);
    expect(json).toMatchObject({ code: 0, stderr: note });
    expect(JSON.parse(json.stdout)).toMatchObject({ scanned: 2, withoutWeirHeaders: 2 });
  });

  it('prints decoded weir headers and counts by error class and processor, with filters and a limit', async () => {
    const dlq = unique('inspect.dlq');
    await fx.createTopics([{ topic: dlq, partitions: 3 }]);
    const now = Date.now();
    const spec = [
      { errorClass: 'GatewayTimeout', processor: 'charge', failedAtMs: now - 3 * HOUR },
      { errorClass: 'GatewayTimeout', processor: 'charge', failedAtMs: now - 2 * HOUR },
      { errorClass: 'TypeError', processor: 'charge', failedAtMs: now - 30 * 60_000 },
      { errorClass: 'GatewayTimeout', processor: 'refund', failedAtMs: now - 10 * 60_000 },
      { errorClass: 'UnsupportedCurrency', processor: 'refund', failedAtMs: now - 60_000 },
    ];
    await produce(
      fx.kafka,
      dlq,
      spec.map((o, n) => deadLetter(n, { original: 'payments', ...o })),
    );

    const all = await runWeir(['dlq', 'inspect', dlq, '--format', 'json']);
    expect(all.code).toBe(0);
    const report = JSON.parse(all.stdout);
    expect(report).toMatchObject({
      scanned: 5,
      matched: 5,
      withoutWeirHeaders: 0,
      counts: {
        total: 5,
        byErrorClass: { GatewayTimeout: 3, TypeError: 1, UnsupportedCurrency: 1 },
        byProcessor: { charge: 3, refund: 2 },
      },
    });
    expect(report.records.map((r: { value: string }) => JSON.parse(r.value).n)).toEqual([0, 1, 2, 3, 4]);
    expect(report.records[0]).toMatchObject({
      key: 'k0',
      errorClass: 'GatewayTimeout',
      processor: 'charge',
      attempts: 3,
      replayCount: 0,
      origin: { topic: 'payments', partition: 0, offset: 0 },
      userHeaders: { trace: 't0' },
      weirHeaders: { 'weir.error.message': 'record 0 failed', 'weir.original.topic': 'payments', 'weir.attempts': '3' },
    });

    const filtered = JSON.parse(
      (await runWeir(['dlq', 'inspect', dlq, '--format', 'json', '--since', '1h', '--error-class', 'GatewayTimeout,TypeError'])).stdout,
    );
    expect(filtered).toMatchObject({
      scanned: 5,
      matched: 2,
      counts: { byErrorClass: { GatewayTimeout: 1, TypeError: 1 }, byProcessor: { charge: 1, refund: 1 } },
    });
    const byProcessor = JSON.parse(
      (
        await runWeir([
          'dlq',
          'inspect',
          dlq,
          '--format',
          'json',
          '--processor',
          'refund',
          '--until',
          new Date(now - 5 * 60_000).toISOString(),
        ])
      ).stdout,
    );
    expect(byProcessor.records.map((r: { value: string }) => JSON.parse(r.value).n)).toEqual([3]);
    const limited = JSON.parse((await runWeir(['dlq', 'inspect', dlq, '--format', 'json', '--limit', '2'])).stdout);
    expect(limited.matched).toBe(5);
    expect(limited.records.map((r: { value: string }) => JSON.parse(r.value).n)).toEqual([3, 4]);

    const table = await runWeir(['dlq', 'inspect', dlq, '--error-class', 'UnsupportedCurrency']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`${dlq}: 5 record(s), 1 match the filters`);
    expect(table.stdout).toMatch(/UnsupportedCurrency\s+3\s+0\s+payments-0@4\s+k4\s+record 4 failed/);
    expect(table.stdout).toMatch(/ERROR CLASS\s+RECORDS\nUnsupportedCurrency\s+1/);
    expect(table.stdout).toMatch(/PROCESSOR\s+RECORDS\nrefund\s+1/);
  });
});
