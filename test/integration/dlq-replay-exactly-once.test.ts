/**
 * `weir dlq replay` is exactly once under SIGKILL (docs/retry-and-dlq.md): an unpaced replay
 * of 12 000 dead letters is SIGKILLed again and again while it streams, each next run resumes
 * at once (transactional-id fencing, no waiting for a dead member's session timeout), and once
 * a run finishes, a read_committed reader of the target sees every replayable record exactly
 * once — none twice, none skipped. Also: duplicate dead letters (two DLQ records of one
 * original record, as an at_least_once crash can leave) are flagged by `weir dlq inspect` and
 * replayed once; and the bad input of a replay: a `--to` topic that does not exist, an original
 * topic that does not exist, and an empty DLQ.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { produce } from '../../scripts/lib/topic-io.js';
import { readTopicNow } from '../../scripts/lib/read-topic-now.js';
import { pollUntil } from '../../scripts/lib/wait-for.js';
import { runWeir, startWeir } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-dlq-replay-eos');

const unique = (name: string): string => `${name}-${randomUUID().slice(0, 8)}`;

/** kafkajs' default `session.timeout.ms`: what a run used to wait for after a crash. */
const SESSION_TIMEOUT_MS = 30_000;

function deadLetter(n: number, original: string): Message {
  return {
    key: `k${n}`,
    value: JSON.stringify({ n }),
    headers: {
      'weir.original.topic': original,
      'weir.original.partition': String(n % 3),
      'weir.original.offset': String(n),
      'weir.original.timestamp': '1700000000000',
      'weir.application.id': 'app',
      'weir.processor': 'charge',
      'weir.attempts': '3',
      'weir.error.class': 'GatewayTimeout',
      'weir.error.message': `record ${n} failed`,
      'weir.last.failure.ms': '1700000001000',
    },
  };
}

describe(onClient('weir dlq replay under SIGKILL'), () => {
  it('replays every record exactly once for read_committed readers, and resumes at once after each kill', async () => {
    const dlq = unique('crash.dlq');
    const target = unique('crash.target');
    const group = `weir-replay.${dlq}`;
    const total = 12_000;
    await fx.createTopics([
      { topic: dlq, partitions: 3 },
      { topic: target, partitions: 3 },
    ]);
    await produce(
      fx.kafka,
      dlq,
      Array.from({ length: total }, (_, n) => deadLetter(n, target)),
    );
    const position = async (): Promise<number> => {
      const [offsets] = await fx.admin.fetchOffsets({ groupId: group, topics: [dlq] });
      return offsets!.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    };

    // A read_uncommitted reader of the target, to time kills inside transactions.
    let onTargetRecords: (() => void) | undefined;
    const tail = fx.kafka.consumer({ groupId: unique('weir-it-tail'), readUncommitted: true, maxWaitTimeInMs: 50 });
    await tail.connect();
    fx.onTeardown(() => tail.disconnect());
    await tail.subscribe({ topics: [target], fromBeginning: true });
    await tail.run({
      eachBatch: async ({ batch }) => {
        if (batch.messages.length === 0) return;
        onTargetRecords?.();
        onTargetRecords = undefined;
      },
    });

    let kills = 0;
    let last = 0;
    for (let round = 0; round < 8 && last < total; round++) {
      const began = Date.now();
      const run = startWeir(['dlq', 'replay', dlq, '--to', target]);
      let exited = false;
      void run.result.then(() => (exited = true));
      // The run resumes at once: its first chunk commits long before a session timeout.
      const moved = await pollUntil(async () => exited || (await position()) > last, SESSION_TIMEOUT_MS / 2, 20);
      expect(moved, `round ${round}: no progress within ${SESSION_TIMEOUT_MS / 2} ms`).toBe(true);
      if (exited) {
        const result = await run.result;
        expect(result.code, result.stderr).toBe(0);
        break;
      }
      expect(Date.now() - began).toBeLessThan(SESSION_TIMEOUT_MS);
      if (round % 2 === 0) {
        // Kill inside a transaction: as soon as a read_uncommitted reader sees the next chunk's
        // records in the target, before the chunk's sendOffsets and commit complete.
        await new Promise<void>((resolve) => {
          onTargetRecords = resolve;
          void run.result.then(() => resolve());
        });
      } else {
        // Kill at a varying moment after a commit: mid-chunk, between chunks, during a commit.
        await sleep((round * 37) % 120);
      }
      run.child.kill('SIGKILL');
      const killed = await run.result;
      if (killed.code === null) kills++;
      const now = await position();
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
    expect(kills, 'the replay finished before it could be killed: raise the record count').toBeGreaterThanOrEqual(3);

    const finish = await runWeir(['dlq', 'replay', dlq, '--to', target], { timeoutMs: 120_000 });
    expect(finish.code, finish.stderr).toBe(0);
    expect(finish.stderr).not.toContain('another replay');
    expect(await position()).toBe(total);

    const committed = await readTopicNow(fx.kafka, fx.admin, target, { timeoutMs: 60_000 });
    const counts = new Map<number, number>();
    for (const r of committed) {
      const n = (JSON.parse(r.value!.toString()) as { n: number }).n;
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    const twice = [...counts].filter(([, c]) => c > 1).map(([n]) => n);
    const missing = Array.from({ length: total }, (_, n) => n).filter((n) => !counts.has(n));
    expect(twice.slice(0, 10), `${twice.length} record(s) replayed twice`).toEqual([]);
    expect(missing.slice(0, 10), `${missing.length} record(s) never replayed`).toEqual([]);
    expect(committed).toHaveLength(total);
    // The kills did land inside chunks: read_uncommitted readers see the aborted copies.
    const uncommitted = await readTopicNow(fx.kafka, fx.admin, target, { timeoutMs: 60_000, isolation: 'read_uncommitted' });
    expect(uncommitted.length).toBeGreaterThan(total);
  });

  it('reports a missing --to topic (exit 2), a missing original topic (refused) and an empty DLQ (exit 0), without a stack trace', async () => {
    const dlq = unique('bad.dlq');
    const empty = unique('empty.dlq');
    await fx.createTopics([
      { topic: dlq, partitions: 1 },
      { topic: empty, partitions: 1 },
    ]);
    const gone = unique('gone.original');
    await produce(fx.kafka, dlq, [deadLetter(1, gone)]);

    const absent = unique('absent');
    const noTarget = await runWeir(['dlq', 'replay', dlq, '--to', absent]);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain(`--to topic '${absent}' does not exist; create it first`);
    expect(noTarget.stderr).not.toMatch(/^\s+at /m);

    const noOriginal = await runWeir(['dlq', 'replay', dlq]);
    expect(noOriginal.code, noOriginal.stderr).toBe(0);
    expect(noOriginal.stdout).toMatch(/replayed\s+0/);
    expect(noOriginal.stdout).toMatch(/refused\s+1 \(target-missing: 1\)/);

    const nothing = await runWeir(['dlq', 'replay', empty]);
    expect(nothing).toMatchObject({ code: 0, stdout: `Replay of ${empty} → original topics: nothing to replay, '${empty}' is empty\n` });
    expect(nothing.stderr).toBe('');
  });

  it('flags duplicate dead letters in inspect and replays each original record once per run', async () => {
    const dlq = unique('dups.dlq');
    const target = unique('dups.target');
    await fx.createTopics([
      { topic: dlq, partitions: 2 },
      { topic: target, partitions: 2 },
    ]);
    // Originals 0–9; 2 dead-lettered twice, 5 three times.
    const ns = [0, 1, 2, 3, 2, 4, 5, 6, 5, 7, 8, 5, 9];
    await produce(
      fx.kafka,
      dlq,
      ns.map((n) => deadLetter(n, target)),
    );

    const inspected = await runWeir(['dlq', 'inspect', dlq, '--format', 'json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    const report = JSON.parse(inspected.stdout) as {
      duplicates: { records: number; originals: number };
      records: Array<{ copies: number; origin: { offset: number } }>;
    };
    expect(report.duplicates).toEqual({ records: 3, originals: 2 });
    const copies = new Map(report.records.map((r) => [r.origin.offset, r.copies]));
    expect(Object.fromEntries(copies)).toEqual({ 0: 1, 1: 1, 2: 2, 3: 1, 4: 1, 5: 3, 6: 1, 7: 1, 8: 1, 9: 1 });
    const table = await runWeir(['dlq', 'inspect', dlq]);
    expect(table.stdout).toContain('duplicates: 3 record(s) repeat the original record of another (2 original record(s)');
    expect(table.stdout).toMatch(new RegExp(`${target}-2@5 ×3`));

    const dry = await runWeir(['dlq', 'replay', dlq, '--to', target, '--dry-run']);
    expect(dry.stdout).toMatch(/would replay\s+10 /);
    expect(dry.stdout).toMatch(/duplicates\s+3 /);
    const replay = await runWeir(['dlq', 'replay', dlq, '--to', target]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/scanned\s+13 of 13/);
    expect(replay.stdout).toMatch(/replayed\s+10 /);
    expect(replay.stdout).toMatch(/duplicates\s+3 \(more dead letters of an original record in this run; each original is sent once\)/);
    const replayed = (await readTopicNow(fx.kafka, fx.admin, target, { timeoutMs: 20_000 })).map(
      (r) => (JSON.parse(r.value!.toString()) as { n: number }).n,
    );
    expect(replayed.sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, n) => n));
  });

  it('ends its progress at 100 % on a DLQ written in transactions, whose markers hold offsets', async () => {
    const dlq = unique('txn.dlq');
    const target = unique('txn.target');
    await fx.createTopics([
      { topic: dlq, partitions: 1 },
      { topic: target, partitions: 1 },
    ]);
    const producer = fx.kafka.producer({ transactionalId: unique('txn-dlq-writer'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    fx.onTeardown(() => producer.disconnect());
    // Three committed transactions of 2 dead letters and an aborted one: 6 records in 12 offsets.
    for (const [i, commit] of [true, true, true, false].entries()) {
      const txn = await producer.transaction();
      await txn.send({ topic: dlq, acks: -1, messages: [deadLetter(2 * i, target), deadLetter(2 * i + 1, target)] });
      await (commit ? txn.commit() : txn.abort());
    }

    const replay = await runWeir(['dlq', 'replay', dlq, '--to', target]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/replayed\s+6 /);
    const progress = replay.stderr.split('\n').filter((line) => line.startsWith(`replay ${dlq}: `));
    expect(progress.at(-1)).toBe(`replay ${dlq}: 12/12 offsets (100%), scanned 6, replayed 6, refused 0, skipped 0, ETA 0s`);
  });
});
