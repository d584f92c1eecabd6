/**
 * `weir dlq inspect` and `weir dlq replay` against the real broker, on dead-letter topics
 * written by the test: missing and empty topics, filters and counts, dry runs, the replay
 * limit, a replay interrupted with Ctrl-C and one fenced by a newer run, which finishes without replaying
 * anything twice.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { endOffsets, produce } from '../../scripts/lib/topic-io.js';
import { readTopicNow } from '../../scripts/lib/read-topic-now.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { runWeir, startWeir } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-dlq-tools');
const HOUR = 3_600_000;

const unique = (name: string): string => `${name}-${randomUUID().slice(0, 8)}`;

/** A dead-letter record as weir writes it. */
function deadLetter(
  n: number,
  o: { original: string; errorClass: string; processor: string; failedAtMs: number; replayCount?: number; replayMax?: number },
): Message {
  return {
    key: `k${n}`,
    value: JSON.stringify({ n }),
    headers: {
      trace: `t${n}`,
      'weir.original.topic': o.original,
      'weir.original.partition': '0',
      'weir.original.offset': String(n),
      'weir.original.timestamp': String(o.failedAtMs - 1000),
      'weir.application.id': 'app',
      'weir.processor': o.processor,
      'weir.attempts': '3',
      'weir.error.class': o.errorClass,
      'weir.error.message': `record ${n} failed`,
      'weir.error.stack': `${o.errorClass}: record ${n} failed\n    at p`,
      'weir.first.failure.ms': String(o.failedAtMs - 500),
      'weir.last.failure.ms': String(o.failedAtMs),
      ...(o.replayCount !== undefined ? { 'weir.replay.count': String(o.replayCount) } : {}),
      ...(o.replayMax !== undefined ? { 'weir.replay.max': String(o.replayMax) } : {}),
    },
  };
}

async function total(topic: string): Promise<number> {
  let n = 0;
  for (const partitions of (await endOffsets(fx.admin, [topic])).values()) for (const end of partitions.values()) n += end;
  return n;
}

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

describe(onClient('weir dlq replay'), () => {
  it('rejects bad arguments with exit 2 and reports missing or empty topics', async () => {
    const dlq = unique('args.dlq');
    await fx.createTopics([{ topic: dlq, partitions: 1 }]);
    for (const args of [
      ['--rate', 'fast'],
      ['--rate', '0'],
      ['--since', 'yesterday'],
      ['--to', 'bad topic'],
      ['--max-replays', '-1'],
      ['--to', dlq],
    ]) {
      const result = await runWeir(['dlq', 'replay', dlq, ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(/is invalid|a loop/);
    }
    expect((await runWeir(['dlq', 'replay', dlq, '--to', unique('absent')])).stderr).toMatch(
      /--to topic 'absent-[0-9a-f]+' does not exist/,
    );
    const missing = await runWeir(['dlq', 'replay', unique('gone.dlq')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/dead-letter topic 'gone\.dlq-[0-9a-f]+' does not exist/);
    const empty = await runWeir(['dlq', 'replay', dlq]);
    expect(empty).toMatchObject({ code: 0, stdout: `Replay of ${dlq} → original topics: nothing to replay, '${dlq}' is empty\n` });
  });

  it('dry-runs without publishing or committing, refuses records past their replay limit, resumes after Ctrl-C and after being fenced without replaying twice', async () => {
    const dlq = unique('replay.dlq');
    const target = unique('replay.target');
    const group = `weir-replay.${dlq}`;
    await fx.createTopics([
      { topic: dlq, partitions: 2 },
      { topic: target, partitions: 2 },
    ]);
    const now = Date.now();
    // 16 replayable records (replay counts 0–1 of a limit of 2), 2 refused (count 2), 2 of another class.
    const messages = [
      ...Array.from({ length: 16 }, (_, n) =>
        deadLetter(n, {
          original: target,
          errorClass: 'GatewayTimeout',
          processor: 'charge',
          failedAtMs: now - 1000,
          replayCount: n % 2,
          replayMax: 2,
        }),
      ),
      ...[16, 17].map((n) =>
        deadLetter(n, {
          original: target,
          errorClass: 'GatewayTimeout',
          processor: 'charge',
          failedAtMs: now - 1000,
          replayCount: 2,
          replayMax: 2,
        }),
      ),
      ...[18, 19].map((n) => deadLetter(n, { original: target, errorClass: 'TypeError', processor: 'charge', failedAtMs: now - 1000 })),
    ];
    await produce(fx.kafka, dlq, messages);

    const dry = await runWeir(['dlq', 'replay', dlq, '--error-class', 'GatewayTimeout', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/would replay\s+16 \(replay\.target-[0-9a-f]+: 16\)/);
    expect(dry.stdout).toMatch(/refused\s+2 \(max-replays: 2\)/);
    expect(dry.stdout).toMatch(/skipped\s+2 /);
    expect(await total(target)).toBe(0);
    const [dryOffsets] = await fx.admin.fetchOffsets({ groupId: group, topics: [dlq] });
    expect(dryOffsets!.partitions.every((p) => p.offset === '-1')).toBe(true);

    // The replay group's position: DLQ records handled by committed chunks.
    const position = async (): Promise<number> => {
      const [offsets] = await fx.admin.fetchOffsets({ groupId: group, topics: [dlq] });
      return offsets!.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    };
    const replayedIn = (stdout: string): number => Number(/replayed\s+(\d+)/.exec(stdout)?.[1] ?? Number.NaN);

    // Slowly (2 records/s), then Ctrl-C after a few records went out.
    const slow = startWeir(['dlq', 'replay', dlq, '--error-class', 'GatewayTimeout', '--rate', '2']);
    await waitFor(
      async () => (await position()) >= 3,
      30_000,
      () => 'the slow replay committed nothing',
    );
    slow.child.kill('SIGINT');
    const interrupted = await slow.result;
    expect(interrupted.code, interrupted.stderr).toBe(1);
    expect(interrupted.stdout).toContain('interrupted');
    expect(interrupted.stdout).toContain('run the same command again to go on where this run stopped');
    const afterInterrupt = replayedIn(interrupted.stdout);
    expect(afterInterrupt).toBeGreaterThan(0);
    expect(afterInterrupt).toBeLessThan(16);

    // A second slow run, and while it runs a third one: the third fences the second (by
    // transactional id, at once: no waiting for a session timeout) and replays the rest.
    const positionBefore = await position();
    const fencedRun = startWeir(['dlq', 'replay', dlq, '--error-class', 'GatewayTimeout', '--rate', '2']);
    await waitFor(
      async () => (await position()) > positionBefore,
      30_000,
      () => 'the second slow replay committed nothing',
    );
    const rest = await runWeir(['dlq', 'replay', dlq, '--error-class', 'GatewayTimeout']);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain(`progress committed to consumer group ${group}`);
    const fenced = await fencedRun.result;
    expect(fenced.code, fenced.stdout).toBe(1);
    expect(fenced.stdout).toContain('fenced by a newer run');
    expect(fenced.stderr).toContain(`this replay of '${dlq}' was fenced`);
    expect(fenced.stderr).toContain('[WEIR_REPLAY_FENCED]');
    expect(fenced.stderr).not.toMatch(/^\s+at /m);
    const byFenced = replayedIn(fenced.stdout);
    expect(byFenced).toBeGreaterThan(0);
    expect(afterInterrupt + byFenced + replayedIn(rest.stdout)).toBe(16);

    const again = await runWeir(['dlq', 'replay', dlq, '--error-class', 'GatewayTimeout']);
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain('nothing to replay, all 20 record(s) were handled by earlier runs');

    // read_committed: each replayable record exactly once.
    const records = await readTopicNow(fx.kafka, fx.admin, target, { timeoutMs: 20_000 });
    const replayed = records.map((r) => JSON.parse(r.value!.toString()).n as number).sort((a, b) => a - b);
    expect(replayed).toEqual(Array.from({ length: 16 }, (_, n) => n));
    for (const r of records) {
      const n = JSON.parse(r.value!.toString()).n as number;
      expect(r.key).toBe(`k${n}`);
      expect(r.headers).toEqual({
        trace: `t${n}`,
        'weir.original.topic': target,
        'weir.original.partition': '0',
        'weir.original.offset': String(n),
        'weir.original.timestamp': String(now - 2000),
        'weir.replay.count': String((n % 2) + 1),
      });
    }

    // --max-replays overrides the records' limit (here: allows a third replay), with its own group.
    const override = await runWeir([
      'dlq',
      'replay',
      dlq,
      '--error-class',
      'GatewayTimeout',
      '--max-replays',
      '3',
      '--group',
      `${group}.override`,
      '--dry-run',
    ]);
    expect(override.stdout).toMatch(/would replay\s+18 /);
  });
});
