/**
 * The randomized fault campaign (`npm run test:faults`): every configuration — kafkajs and
 * librdkafka, exactly_once and at_least_once, Redis dedup on and off — runs a fault schedule drawn
 * from a seed (fault-plan.ts) on a broker of the file's own: SIGKILL and SIGTERM of workers, a
 * worker SIGSTOPped longer than the session timeout (a zombie), the broker SIGKILLed and
 * restarted (once per round, shared by the round's runs), the run's own Redis SIGKILLed and
 * restarted, a stream thread crash (kafkajs, `--threads 2`), a worker joining and leaving. The
 * checker reads sink, DLQ and retry tiers read_committed and holds each run to its guarantee's
 * contract (fault-report.ts).
 *
 * Environment: WEIR_FAULTS_PROFILE `ci` (default: one round, 3–6 faults per run) or `long` (five
 * rounds, 5–8 faults); WEIR_FAULTS_SEED (default: from the clock; run i of round r gets seed +
 * r × runs + i); WEIR_FAULTS_ROUNDS; WEIR_FAULTS_ONLY (configuration names, comma-separated, e.g.
 * `kafkajs/exactly_once/dedup`). Every run prints its schedule first, its results after, and a
 * failing one the command that replays it.
 */
import { cp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brokerFiles } from '../../scripts/lib/broker-instance.js';
import { startBroker, stopBroker } from '../../scripts/lib/kafka-broker.js';
import { Barrier } from '../integration/support/barrier.js';
import { useIntegrationFixture } from '../integration/support/integration-fixture.js';
import { OWN_BROKER_START, ownBroker } from '../integration/support/own-broker.js';
import { configName, describePlan, drawPlan, FAULT_CONFIGS, FAULT_KINDS, FAULT_PROFILES, type FaultKind } from './fault-plan.js';
import { faultCounts, formatCounts, type RunResult } from './fault-report.js';
import { runPlan, type RoundContext } from './fault-run.js';

const profileName = process.env['WEIR_FAULTS_PROFILE'] ?? 'ci';
if (profileName !== 'ci' && profileName !== 'long') throw new Error(`WEIR_FAULTS_PROFILE=${profileName} is not ci or long`);
const profile = FAULT_PROFILES[profileName];
const rounds = Number(process.env['WEIR_FAULTS_ROUNDS'] ?? profile.rounds);
const SEED = Number(process.env['WEIR_FAULTS_SEED'] ?? Date.now() % 1_000_000);
/** A round that has not ended by then fails, naming the runs still under way. */
const ROUND_TIMEOUT_MS = 29 * 60_000;
const only = process.env['WEIR_FAULTS_ONLY']?.split(',').map((s) => s.trim());

/** Why the optional librdkafka client does not load here, if it does not. */
function librdkafkaMissing(): string | undefined {
  try {
    createRequire(import.meta.url)('@confluentinc/kafka-javascript');
    return undefined;
  } catch (error) {
    return (error as Error).message.split('\n')[0];
  }
}
const missing = librdkafkaMissing();
if (missing !== undefined && process.env['CI'] === 'true') throw new Error(`the librdkafka client does not load: ${missing}`);
if (missing !== undefined) console.warn(`[faults] the librdkafka configurations DO NOT RUN: ${missing}`);
const configs = FAULT_CONFIGS.filter((c) => (only ? only.includes(configName(c)) : true)).filter(
  (c) => c.client === 'kafkajs' || missing === undefined,
);
if (configs.length === 0) throw new Error(`WEIR_FAULTS_ONLY=${only?.join(',')} names no configuration`);

const broker = ownBroker('faults');
const fx = useIntegrationFixture('weir-faults', { brokers: broker.start, hookTimeoutMs: 180_000 });
fx.onTeardown(async () => {
  // A violation's evidence is in the broker's logs (transaction markers, producer epochs): a
  // failing or overrunning campaign keeps its broker's files, for `kafka-dump-log.sh --print-data-log`.
  if (results.length < rounds * configs.length || results.some((r) => r.violations.length > 0)) {
    await stopBroker({ instance: broker.instance, timeoutMs: 30_000 });
    const kept = path.join(os.tmpdir(), 'weir-faults', `broker-${SEED}`);
    await cp(brokerFiles(broker.instance).runtimeDir, kept, { recursive: true });
    console.log(`[faults] the broker's files (data, logs): ${kept}`);
  }
  await broker.remove();
});

const results: RunResult[] = [];
const began = Date.now();
afterAll(() => {
  const counts = new Map<FaultKind, number>(FAULT_KINDS.map((k) => [k, 0]));
  for (const r of results) for (const [k, n] of faultCounts(r.injected)) counts.set(k, counts.get(k)! + n);
  const violations = results.reduce((n, r) => n + r.violations.length, 0);
  const contract = results.reduce((n, r) => n + r.contract, 0);
  const failed = results.filter((r) => r.violations.length > 0).map((r) => `${r.plan.seed} ${configName(r.plan.config)}`);
  console.log(
    `[faults] summary: profile ${profile.name}, seed ${SEED}, ${results.length} runs, faults injected ${[...counts.values()].reduce((a, b) => a + b, 0)} ` +
      `(${formatCounts(counts)}), violations ${violations} (delivery contract ${contract}, other ${violations - contract})${failed.length > 0 ? ` (runs ${failed.join('; ')})` : ''}, ${((Date.now() - began) / 1000).toFixed(0)} s`,
  );
});

describe(`fault campaign, profile ${profile.name}, seed ${SEED}`, () => {
  for (let round = 0; round < rounds; round++) {
    it(
      `round ${round + 1} of ${rounds}: ${configs.length} configurations in parallel, each to its guarantee's contract`,
      async () => {
        const roundBegan = Date.now();
        const plans = configs.map((config, i) => drawPlan(SEED + round * configs.length + i, config, profile));
        console.log(plans.map(describePlan).join('\n'));
        // The broker is SIGKILLed once every run of the round is there, with their lag probed just before.
        const probes: Array<() => Promise<number | undefined>> = [];
        let lags: Array<number | undefined> = [];
        let down = false;
        const restart = new Barrier(plans.filter((p) => p.faults.some((f) => f.fault.kind === 'broker-restart')).length, async () => {
          lags = await Promise.all(probes.map((probe) => probe()));
          down = true;
          try {
            await stopBroker({ instance: broker.instance, hard: true });
            await startBroker({ instance: broker.instance, ...OWN_BROKER_START });
          } finally {
            down = false;
          }
        });
        const watching = new Watching();
        const ctx: RoundContext = {
          fx,
          profile: profile.name,
          brokerDown: () => down,
          leaveBrokerRestart: () => restart.leave(),
          watch: (describe) => watching.add(describe),
          brokerRestart: async (probe) => {
            const index = probes.push(probe) - 1;
            await restart.arrive();
            return lags[index];
          },
        };
        const round_ = await withinRoundTime(Promise.all(plans.map((plan) => runPlan(plan, ctx))), watching);
        results.push(...round_);
        console.log(
          [...round_.flatMap((r) => r.lines), `[faults] round ${round + 1}: ${((Date.now() - roundBegan) / 1000).toFixed(0)} s`].join('\n'),
        );
        const failures = round_
          .filter((r) => r.violations.length > 0)
          .map((r) => [describePlan(r.plan), ...r.lines.filter((l) => / VIOLATION: | replay: | worker logs: /.test(l))].join('\n'));
        expect(failures, failures.join('\n\n')).toEqual([]);
      },
      ROUND_TIMEOUT_MS + 60_000,
    );
  }
});

/** The runs of a round that are under way, each as a describer of where it is. */
class Watching {
  private readonly describers = new Set<() => string>();

  add(describe: () => string): () => void {
    this.describers.add(describe);
    return () => this.describers.delete(describe);
  }

  describe(): string[] {
    return [...this.describers].map((d) => d());
  }
}

/**
 * `round`, or after {@link ROUND_TIMEOUT_MS} an error naming each run still under way, where it
 * is and what its workers last logged (a stuck configuration, not a bare test timeout).
 */
async function withinRoundTime<T>(round: Promise<T>, watching: Watching): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const stuck = watching.describe();
      console.log(`[faults] the round overran ${ROUND_TIMEOUT_MS / 60_000} min; runs under way:\n${stuck.join('\n')}`);
      reject(new Error(`the round overran ${ROUND_TIMEOUT_MS / 60_000} min; runs under way:\n${stuck.join('\n')}`));
    }, ROUND_TIMEOUT_MS);
  });
  try {
    return await Promise.race([round, overran]);
  } finally {
    clearTimeout(timer);
  }
}
