/**
 * The crash test of the delivery guarantees, on a broker instance of its own (ports and data dir
 * apart from the shared broker, which other tests use meanwhile) and the real Redis.
 *
 * Input: 10 000 records up front — about 2 % poison (always fail: DLQ), 5 % failing transiently (some of
 * them forward a partial output first), 3 % re-sends of an earlier record's dedup key (half on
 * the same partition key, half on another partition). Disruptions, per guarantee: the worker is
 * SIGKILLed at random points 10 times and restarted at once — each kill on live work: the
 * committed offset moved since the previous kill and input is left (lag above 0); a second worker
 * joins and leaves (two rebalances); and the broker is SIGKILLed and restarted once while records
 * are in flight (the runs share it, so one restart). Until its last kill, a run tops its input
 * up by 1 000 records of the same mix whenever fewer than 1 000 are left: one that waits at the
 * shared restart for a slower run goes on consuming meanwhile.
 *
 * - exactly_once with Redis dedup: a read_committed read of sink + DLQ holds every input
 *   exactly once, duplicate keys dropped.
 * - exactly_once without dedup (so dedup cannot hide an offset bug): every input message exactly
 *   once, re-sent keys included.
 * - at_least_once with Redis dedup: nothing is lost; a duplicate output may occur only across
 *   worker incarnations (the crash window between writing outputs and confirming their keys),
 *   and at most one commit interval's records (at the run's peak rate) plus the record in hand
 *   of each task per disruption.
 *
 * The test prints its counts.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { startBroker, stopBroker } from '../../scripts/lib/kafka-broker.js';
import { produce, readToEnd, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitForGroupCaughtUp } from '../../scripts/lib/group-progress.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { WorkerProcess } from '../../scripts/lib/worker-process.js';
import { seededRandom } from '../../src/testing/seeded-random.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { OWN_BROKER_START, createTopicsOnRestartedBroker, ownBroker } from './support/own-broker.js';
import { onClient } from './support/client-under-test.js';
import { duplicateReport } from './support/duplicate-report.js';
import { Barrier } from './support/barrier.js';
import { CommitProgress, notableLogCounts } from './support/commit-progress.js';
import { contractViolations, duplicateBound, outputOf, tallyOutcomes } from './support/delivery-check.js';
import { ScriptedInput, scriptMessages } from './support/scripted-input.js';

const FIXTURE = 'test/integration/fixtures/scripted-topology.ts';
const RECORDS = 10_000;
/** Until the last kill, input is topped up by {@link TOP_UP} records whenever fewer than {@link LOW_WATER} are left (checked every {@link TOP_UP_CHECK_MS}). */
const TOP_UP = 1_000;
const LOW_WATER = 1_000;
const TOP_UP_CHECK_MS = 1_000;
const PARTITIONS = 4;
const KILLS = 10;
const SEED = Number(process.env['WEIR_CRASH_SEED'] ?? Date.now() % 1_000_000);

/** The input: 10 000 scripted records (scripted-input.ts); each run gets its own, the same up front. */
function crashInput(random: () => number): ScriptedInput {
  const input = new ScriptedInput(random);
  input.next(RECORDS);
  return input;
}

const broker = ownBroker('crash');
const { instance } = broker;
const fx = useIntegrationFixture('weir-it-crash', { brokers: broker.start, hookTimeoutMs: 180_000 });
fx.onTeardown(broker.remove);

interface RunReport {
  readonly guarantee: string;
  readonly records: ReadRecord[];
  /** Each SIGKILL: the committed input offsets (summed) and the lag at that moment. */
  readonly kills: ReadonlyArray<{ readonly committed: number; readonly lag: number }>;
  /** The lag when the broker was SIGKILLed. */
  readonly lagAtBrokerKill: number;
  /** The fastest progress between two events, committed records per ms. */
  readonly peakPerMs: number;
  readonly events: string[];
  readonly logs: Map<string, number>;
  /** The run's input, top-ups included. */
  readonly input: ScriptedInput;
  /** Every worker process of the run, and when the run began (epoch ms): for the duplicate report. */
  readonly workers: readonly WorkerProcess[];
  readonly began: number;
}

/** Per guarantee: the commit interval of the run, ms. */
const COMMIT_INTERVAL_MS = { exactly_once: 100, at_least_once: 200 } as const;

/** One guarantee's run: input, disruptions, then everything consumed; returns sink + DLQ read to the end. */
async function run(
  guarantee: 'exactly_once' | 'at_least_once',
  dedup: boolean,
  input: ScriptedInput,
  random: () => number,
  brokerRestart: (probe: () => Promise<number>) => Promise<number>,
): Promise<RunReport> {
  const id = `weir-crash-${guarantee === 'exactly_once' ? 'eos' : 'alos'}${dedup ? '' : '-nodedup'}-${randomBytes(3).toString('hex')}`;
  fx.trackDedupKeys(id);
  const topics = { source: `${id}.in`, sink: `${id}.out`, dlq: `${id}.dlq` };
  await createTopicsOnRestartedBroker(fx.kafka, [{ topic: topics.source, partitions: PARTITIONS }]);
  await produce(fx.kafka, topics.source, scriptMessages(input.messages));

  const mine: WorkerProcess[] = [];
  const start = (): WorkerProcess => {
    const worker = fx.startWorker(FIXTURE, {
      args: [
        '--application-id',
        id,
        '--guarantee',
        guarantee,
        '--brokers',
        fx.brokers,
        '--commit-interval-ms',
        String(COMMIT_INTERVAL_MS[guarantee]),
        '--session-timeout-ms',
        '6000',
        '--heartbeat-interval-ms',
        '1000',
        '--transaction-timeout-ms',
        '10000',
        '--shutdown-timeout-ms',
        '20000',
      ],
      env: {
        WEIR_TEST_SOURCE: topics.source,
        WEIR_TEST_SINK: topics.sink,
        WEIR_TEST_DLQ: topics.dlq,
        WEIR_TEST_DEDUP: dedup ? 'redis' : 'off',
        // Above the broker outage (SIGKILL and restart, 15–30 s here): a claim that expires while its
        // record waits for the broker lets a re-send on another partition through (a documented dedup limit).
        WEIR_TEST_CLAIM_TTL_MS: '60000',
        WEIR_TEST_MAX_ATTEMPTS: '3',
        WEIR_TEST_BACKOFF_MS: '5',
        WEIR_TEST_RECORD_DELAY_MS: '10', // about 25 s of work at full speed: input is left at every kill
        REDIS_URL: inject('redisUrl'),
      },
    });
    mine.push(worker);
    return worker;
  };
  const progress = new CommitProgress(fx.admin, id, topics.source);
  const committed = () => progress.committed();
  const note = (what: string) => progress.note(what);
  const taskStarted = (w: WorkerProcess) => w.waitForLog((l) => l.msg === 'task started', 90_000);

  let a = start();
  const kills: Array<{ committed: number; lag: number }> = [];
  const left = async (): Promise<number> => input.messages.length - ((await committed()) ?? 0);
  // Work is left at every kill and at the broker's: top the input up whenever it runs low, until
  // the last kill (a failed probe or produce, during the broker restart, is tried again).
  let toppingUp = true;
  const topUps = (async () => {
    while (toppingUp) {
      const low = await left().then(
        (n) => n < LOW_WATER,
        () => false,
      );
      if (low) await produce(fx.kafka, topics.source, scriptMessages(input.next(TOP_UP))).catch(() => undefined);
      await sleep(TOP_UP_CHECK_MS);
    }
  })();
  const killAndRestart = async (): Promise<void> => {
    await taskStarted(a);
    await sleep(500 + Math.floor(random() * 2_500)); // a random point while it processes
    // Only on live work: the committed offset moved since the previous kill (or the start).
    const previous = kills.at(-1)?.committed ?? 0;
    const atKill = await waitFor(
      async () => {
        const done = await committed();
        return done !== undefined && done > previous ? done : undefined;
      },
      120_000,
      () => `SIGKILL #${kills.length + 1}: the committed offset did not move past ${previous}`,
    );
    const produced = input.messages.length;
    a.child.kill('SIGKILL');
    await a.exited;
    kills.push({ committed: atKill, lag: produced - atKill });
    await note(`SIGKILL #${kills.length}`);
    a = start();
  };

  let lagAtBrokerKill: number;
  try {
    for (let i = 0; i < 4; i++) await killAndRestart();
    await taskStarted(a);
    const b = start();
    await note('second worker joins');
    await b.waitForLog((l) => l.msg === 'task started', 90_000);
    await sleep(1_000 + Math.floor(random() * 2_000));
    expect(await b.stop('SIGTERM')).toBe(0);
    await note('second worker left');
    for (let i = 0; i < 3; i++) await killAndRestart();
    await taskStarted(a);
    lagAtBrokerKill = await brokerRestart(left);
    await note('broker restarted');
    for (let i = 0; i < KILLS - 7; i++) await killAndRestart();
    await taskStarted(a);
    await note('last restart running');
  } finally {
    toppingUp = false;
    await topUps;
  }

  const caughtUp = await waitForGroupCaughtUp(fx.kafka, id, [topics.source], 240_000);
  await note(caughtUp ? 'input consumed' : 'input NOT consumed in time');
  // A run that did not finish says how far it got and what its last worker logged, to tell a
  // slow machine (progress until the bound) from a stall (a worker that stopped moving).
  if (!caughtUp)
    console.log(
      `[crash] ${guarantee}${dedup ? ' + dedup' : ''} did not finish: ${progress.events.join('; ')}\n` +
        a.logs
          .slice(-15)
          .map((l) => `  ${String(l['time'])} ${l.msg}`)
          .join('\n'),
    );
  expect(caughtUp).toBe(true);
  expect(await a.stop('SIGTERM')).toBe(0);
  const records = await readToEnd(fx.kafka, [topics.sink, topics.dlq], { timeoutMs: 120_000 });
  const label = `${guarantee}${dedup ? ' + dedup' : ' without dedup'}`;
  return {
    guarantee: label,
    records,
    input,
    kills,
    lagAtBrokerKill,
    peakPerMs: progress.peakPerMs(),
    events: progress.events,
    logs: notableLogCounts(mine),
    workers: mine,
    began: progress.began,
  };
}

describe(onClient('crash test: 10 000 records, 10 SIGKILLs on live work, a rebalance, a broker SIGKILL'), () => {
  it('exactly_once (with and without dedup): every input exactly once; at_least_once + Redis dedup: nothing lost, bounded duplicates only across crashes', async () => {
    const began = Date.now();
    // The broker is SIGKILLed once all three runs are there, with their lag probed just before.
    const probes: Array<() => Promise<number>> = [];
    let lags: number[] = [];
    const restart = new Barrier(3, async () => {
      lags = await Promise.all(probes.map((probe) => probe()));
      await stopBroker({ instance, hard: true });
      await startBroker({ instance, ...OWN_BROKER_START });
    });
    const brokerRestart = async (probe: () => Promise<number>): Promise<number> => {
      const index = probes.push(probe) - 1;
      await restart.arrive();
      return lags[index]!;
    };
    const [eos, eosWithoutDedup, alos] = await Promise.all([
      run('exactly_once', true, crashInput(seededRandom(SEED)), seededRandom(SEED + 1), brokerRestart),
      run('exactly_once', false, crashInput(seededRandom(SEED)), seededRandom(SEED + 3), brokerRestart),
      run('at_least_once', true, crashInput(seededRandom(SEED)), seededRandom(SEED + 2), brokerRestart),
    ]);
    const lines: string[] = [];
    const summary = (report: RunReport) => {
      const { input } = report;
      const t = tallyOutcomes(
        report.records,
        input.messages.map((m) => m.script),
      );
      lines.push(
        `[crash] ${report.guarantee}: input ${input.messages.length} records (${input.unique.size} unique ids, ${input.messages.length - input.unique.size} duplicate-key re-sends, ${[...input.unique.values()].filter((s) => s.failAttempts).length} transient); sink ${t.sink.length}, DLQ ${t.dlq.length}, distinct ids ${t.counts.size}, missing ${t.missing.length}, ` +
          `duplicated ids ${t.duplicated.length} (${t.duplicated.reduce((n, [, c]) => n + c - 1, 0)} extra records), partial outputs ${t.partial}, ` +
          `SIGKILLs ${report.kills.length} (lags ${report.kills.map((k) => k.lag).join(', ')}), lag at the broker SIGKILL ${report.lagAtBrokerKill}, peak ${(report.peakPerMs * 1000).toFixed(0)} records/s`,
        `[crash] ${report.guarantee} timeline: ${report.events.join('; ')}`,
        `[crash] ${report.guarantee} worker log events: ${JSON.stringify(Object.fromEntries(report.logs))}`,
      );
      return t;
    };
    const e = summary(eos);
    const n = summary(eosWithoutDedup);
    const l = summary(alos);
    lines.unshift(`[crash] seed ${SEED}; input ${RECORDS} records up front, ${e.poison.size} poison in the first run's`);
    const report = (run: RunReport, ids: ReadonlyArray<readonly [string, number]>) =>
      duplicateReport(
        `crash ${run.guarantee}`,
        run.records,
        run.workers,
        ids.map(([id]) => id),
        run.began,
      );
    lines.push(...report(eos, e.duplicated), ...report(eosWithoutDedup, n.wrongCounts));
    lines.push(`[crash] total ${((Date.now() - began) / 1000).toFixed(0)} s`);
    console.log(lines.join('\n'));

    // exactly_once: each input exactly once in sink + DLQ (with dedup: each id; without: every
    // input message, re-sent keys included), the poison ones in the DLQ, no partial output.
    expect(contractViolations(e, { guarantee: 'exactly_once', dedup: true })).toEqual([]);
    expect(contractViolations(n, { guarantee: 'exactly_once', dedup: false })).toEqual([]);

    // Every run: each kill on live work (the committed offset moved since the previous kill, input
    // left), and the broker SIGKILLed while records were in flight.
    for (const report of [eos, eosWithoutDedup, alos]) {
      expect(report.kills, report.guarantee).toHaveLength(KILLS);
      expect(
        report.kills.filter((k) => k.lag <= 0),
        report.guarantee,
      ).toEqual([]);
      expect(report.kills.every((k, i) => i === 0 || k.committed > report.kills[i - 1]!.committed)).toBe(true);
      expect(report.lagAtBrokerKill, report.guarantee).toBeGreaterThan(0);
    }

    // at_least_once + dedup: nothing lost; every duplicate output came from two worker incarnations;
    // the duplicates within the bound, from the run: per disruption (each kill, the two
    // rebalances, the broker kill) one commit interval's records at the run's peak rate (twice,
    // for bursts) plus the record in hand of each task.
    for (const [id] of l.duplicated) {
      const sinkCopies = l.sink.filter((r) => outputOf(r).id === id);
      if (sinkCopies.length > 1) expect(new Set(sinkCopies.map((r) => outputOf(r).pid)).size).toBe(sinkCopies.length);
    }
    const bound = duplicateBound({
      disruptions: alos.kills.length + 3,
      peakPerMs: alos.peakPerMs,
      commitIntervalMs: COMMIT_INTERVAL_MS.at_least_once,
      tasks: PARTITIONS,
    });
    expect(contractViolations(l, { guarantee: 'at_least_once', dedup: true, duplicateBound: bound })).toEqual([]);
  }, 900_000);
});
