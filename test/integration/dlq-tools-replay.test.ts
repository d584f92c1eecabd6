/**
 * `weir dlq replay` against the real broker, on dead-letter topics written by the test: bad
 * arguments, missing and empty topics, dry runs, the replay limit, a replay interrupted with
 * Ctrl-C and one fenced by a newer run, which finishes without replaying anything twice.
 * `weir dlq inspect`: dlq-tools-inspect.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { produce } from '../../scripts/lib/topic-io.js';
import { readTopicNow } from '../../scripts/lib/read-topic-now.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { runWeir, startWeir } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';
import { topicSize } from './support/topic-size.js';
import { deadLetter } from './support/dead-letter.js';
import { unique } from './support/unique.js';

const fx = useIntegrationFixture('weir-it-dlq-tools-replay');

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

  it('refuses the records of a topic that is not a dead-letter topic, and says so', async () => {
    const plain = unique('orders');
    await fx.createTopics([{ topic: plain, partitions: 1 }]);
    await produce(fx.kafka, plain, [
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
    ]);
    const result = await runWeir(['dlq', 'replay', plain, '--dry-run']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/refused\s+2 \(no-original-topic: 2\)/);
    expect(result.stderr).toContain(
      `weir: note: 2 of 2 record(s) have no weir.original.topic header; is '${plain}' a dead-letter topic?\n`,
    );
    // A real run commits its position past them, and says so.
    const real = await runWeir(['dlq', 'replay', plain]);
    expect(real.code).toBe(0);
    expect(real.stderr).toMatch(/a dead-letter topic\? They are behind consumer group \S+ position now: .*--to .*--group/);
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
    expect(await topicSize(fx.admin, target)).toBe(0);
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
    // On failure, say what the fenced run printed on both streams (fresh-clone run of 1d1f3c4,
    // kafkajs: exit 1 with nothing on stdout; its stderr was not shown).
    const printed = `stdout: ${fenced.stdout}\nstderr: ${fenced.stderr}`;
    expect(fenced.code, printed).toBe(1);
    expect(fenced.stdout, printed).toContain('fenced by a newer run');
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
