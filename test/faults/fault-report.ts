/**
 * The fault campaign's checker and report: one run's outputs against its contract
 * (delivery-check.ts), its lines — faults injected per kind, input, sink/DLQ/retry counts,
 * duplicates, missing, violations, timeline, and for a failure the copies of the wrong ids, the
 * input coordinates of the missing ones and how to replay it — and the campaign's summary line.
 */
import type { ReadRecord } from '../../scripts/lib/topic-io.js';
import type { WorkerLogLine, WorkerProcess } from '../../scripts/lib/worker-process.js';
import type { Script } from '../integration/fixtures/scripted-topology.js';
import { notableLogCounts, type CommitProgress } from '../integration/support/commit-progress.js';
import { contractViolations, duplicateBound, extraCopies, shortIds, tallyOutcomes } from '../integration/support/delivery-check.js';
import { duplicateReport } from '../integration/support/duplicate-report.js';
import { COMMIT_INTERVAL_MS, configName, FAULT_KINDS, PARTITIONS, type FaultKind, type RunPlan } from './fault-plan.js';
import type { InjectedFault } from './fault-run.js';

/** A finished run. */
export interface RunResult {
  readonly plan: RunPlan;
  readonly injected: readonly InjectedFault[];
  /** Broken promises (and campaign failures: a fault not on live work, a stalled run); empty when it passed. */
  readonly violations: readonly string[];
  /** How many of them break the delivery contract (the others: workers that exited on their own, a SIGTERM not ending in 0, a stalled run). */
  readonly contract: number;
  /** What to print. */
  readonly lines: readonly string[];
}

/** What {@link checkRun} looks at. */
export interface RunOutcome {
  readonly plan: RunPlan;
  readonly id: string;
  /** Retry tiers (0 in blocking mode). */
  readonly tiers: number;
  readonly injected: readonly InjectedFault[];
  /** Violations found while running. */
  readonly violations: readonly string[];
  /** The input, as read back from the source topic. */
  readonly scripts: readonly Script[];
  readonly sourceRecords: readonly ReadRecord[];
  /** Sink, DLQ and retry-tier records, read to the end, read_committed. */
  readonly records: readonly ReadRecord[];
  readonly progress: CommitProgress;
  readonly workers: readonly WorkerProcess[];
}

/** Faults per kind, in {@link FAULT_KINDS} order, e.g. `sigkill 2, zombie 1`. */
export function faultCounts(injected: readonly InjectedFault[]): Map<FaultKind, number> {
  const counts = new Map<FaultKind, number>(FAULT_KINDS.map((k) => [k, 0]));
  for (const f of injected) counts.set(f.fault.kind, counts.get(f.fault.kind)! + 1);
  return counts;
}

export const formatCounts = (counts: ReadonlyMap<FaultKind, number>): string =>
  [...counts]
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

/** The command that replays a run. */
export function replayCommand(plan: RunPlan, profile: string): string {
  return `WEIR_FAULTS_PROFILE=${profile} WEIR_FAULTS_ROUNDS=1 WEIR_FAULTS_SEED=${plan.seed} WEIR_FAULTS_ONLY=${configName(plan.config)} npm run test:faults`;
}

/**
 * Checks a run against its contract: exactly_once, each input once across sink and DLQ;
 * at_least_once, nothing lost and extra copies within the bound of docs/guarantees.md, derived
 * from the run — per disruption one commit interval's records at the run's peak rate, twice, plus
 * the record in hand of each task. Every fault counts as two disruptions (a member leaves or is
 * lost, and one joins: two rebalances; a broker restart: the outage and the group's rejoin),
 * except a Redis restart (one: the tasks pause, nothing moves).
 */
export function checkRun(o: RunOutcome, profile: string): RunResult {
  const { plan, progress } = o;
  const { guarantee, dedup } = plan.config;
  const t = tallyOutcomes(o.records, o.scripts);
  const disruptions = o.injected.reduce((n, f) => n + (f.fault.kind === 'redis-restart' ? 1 : 2), 0);
  const peakPerMs = progress.peakPerMs();
  const bound =
    guarantee === 'at_least_once'
      ? duplicateBound({ disruptions, peakPerMs, commitIntervalMs: COMMIT_INTERVAL_MS[guarantee], tasks: PARTITIONS * (1 + o.tiers) })
      : 0;
  const broken = contractViolations(t, { guarantee, dedup, duplicateBound: bound });
  const violations = [...o.violations, ...broken];
  const name = `[faults] seed ${plan.seed} ${configName(plan.config)}`;
  const extra = extraCopies(t, dedup);
  const short = shortIds(t, dedup);
  const lines = [
    `${name} (${o.id}, retry ${plan.retryMode}, threads ${plan.threads}): faults ${formatCounts(faultCounts(o.injected))} (lags ${o.injected.map((f) => f.lag ?? '?').join(', ')}); ` +
      `input ${t.inputs} messages (${t.expectedIds.size} ids, ${t.poison.size} poison); sink ${t.sink.length}, DLQ ${t.dlq.length}, retry ${t.retry.length}; ` +
      `duplicated ids ${t.duplicated.length}, extra copies ${extra} (allowed ${bound}); missing ${short.length}; partial ${t.partial}; ` +
      `violations ${violations.length}; peak ${(peakPerMs * 1000).toFixed(0)} records/s; ${progress.since()}`,
    `${name} timeline: ${progress.events.join('; ')}`,
  ];
  if (violations.length > 0) {
    lines.push(...violations.map((v) => `${name} VIOLATION: ${v}`));
    lines.push(`${name} worker log events: ${JSON.stringify(Object.fromEntries(notableLogCounts(o.workers)))}`);
    lines.push(
      ...o.workers.map((w) => `${name} worker pid ${w.child.pid} last lines: ${JSON.stringify(lastNotableLines(w, progress.began))}`),
    );
    const over = (dedup ? t.duplicated : t.wrongCounts.filter(([id, n]) => n > (t.messagesPerId.get(id) ?? 0))).map(([id]) => id);
    lines.push(...duplicateReport(`faults ${plan.seed}`, o.records, o.workers, over, progress.began));
    const where = new Map<string, string[]>();
    for (const r of o.sourceRecords) {
      const id = (JSON.parse(r.value!.toString()) as Script).id;
      where.set(id, [...(where.get(id) ?? []), `${r.partition}@${r.offset}`]);
    }
    for (const [id, n] of short.slice(0, 10)) lines.push(`${name} missing ${id} (${n} outcomes): input at ${where.get(id)?.join(', ')}`);
    lines.push(`${name} replay: ${replayCommand(plan, profile)}`);
  }
  return { plan, injected: o.injected, violations, contract: broken.length, lines };
}

/**
 * A worker's last {@link TAIL_LINES} warnings, errors and group or task events, as
 * `+<seconds since the run began>s <message> (<error message>)`: what a stalled run's workers
 * were doing, in the CI output (their logs are not kept anywhere else).
 */
function lastNotableLines(worker: WorkerProcess, began: number): string[] {
  const lines: Array<{ what: string; text: string; times: number }> = [];
  for (const l of worker.logs) {
    // Dead letters are the scripted poison records: expected, and counted in the report already.
    if (l.msg === 'record dead-lettered') continue;
    if (l.level < 40 && !/assigned|revoked|lost|fenced|started|stopped|rejoin/.test(l.msg)) continue;
    const at = logTime(l);
    const err = (l['err'] as { message?: unknown } | undefined)?.message;
    const what = `${l.msg}${err === undefined ? '' : ` (${String(err).split('\n')[0]})`}`;
    const last = lines.at(-1);
    // A run of one message (a task started per partition) is one line: its first time, ×n.
    if (last?.what === what) last.times++;
    else lines.push({ what, text: `+${((at - began) / 1000).toFixed(1)}s ${what}`, times: 1 });
  }
  return lines.slice(-TAIL_LINES).map((l) => (l.times > 1 ? `${l.text} ×${l.times}` : l.text));
}

/** How many of a worker's last notable log lines a failing run prints. */
const TAIL_LINES = 8;

/** A worker log line's time, epoch ms (pino writes a number; a string is parsed). */
export const logTime = (l: WorkerLogLine): number => (typeof l['time'] === 'string' ? Date.parse(l['time']) : Number(l['time']));
