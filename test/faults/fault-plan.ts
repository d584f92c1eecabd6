/**
 * The fault campaign's plans: its configurations (2 Kafka clients × 2 guarantees × dedup on and
 * off), its profiles (`ci`: one schedule of 3–6 faults per configuration; `long`: five of 5–8),
 * and one run's fault schedule, drawn from a seed — the same seed and configuration give the same
 * schedule, so a failure replays with `WEIR_FAULTS_SEED=<seed> WEIR_FAULTS_ONLY=<configuration>`.
 *
 * These are process-level faults at wall-clock gaps, unlike the TopologyTestDriver's
 * {@link import('../../src/testing/fault-schedule.js').FaultSchedule}, whose faults strike at
 * named points of a task's write path: the two share the idea (a tagged union and a one-line
 * description per fault), not the triggers.
 */
import { CLIENT_FEATURES, whyLacks, type KafkaClientName } from '../../src/kafka/kafka-client.js';
import { seededRandom } from '../../src/testing/seeded-random.js';

/** One configuration of the campaign. */
export interface FaultConfig {
  readonly client: KafkaClientName;
  readonly guarantee: 'exactly_once' | 'at_least_once';
  readonly dedup: boolean;
}

/** Every configuration, in a fixed order (a run's seed is the campaign seed plus its index). */
export const FAULT_CONFIGS: readonly FaultConfig[] = (['kafkajs', 'librdkafka'] as const).flatMap((client) =>
  (['exactly_once', 'at_least_once'] as const).flatMap((guarantee) => [true, false].map((dedup) => ({ client, guarantee, dedup }))),
);

/** `kafkajs/exactly_once/dedup`, the name `WEIR_FAULTS_ONLY` takes. */
export function configName(c: FaultConfig): string {
  return `${c.client}/${c.guarantee}/${c.dedup ? 'dedup' : 'no-dedup'}`;
}

/** How much a campaign does. */
export interface FaultProfile {
  readonly name: 'ci' | 'long';
  /** Rounds; each runs every configuration once, in parallel, on one broker. */
  readonly rounds: number;
  /** Faults per run, the broker restart included. */
  readonly minFaults: number;
  readonly maxFaults: number;
}

export const FAULT_PROFILES: Readonly<Record<FaultProfile['name'], FaultProfile>> = {
  ci: { name: 'ci', rounds: 1, minFaults: 3, maxFaults: 6 },
  long: { name: 'long', rounds: 5, minFaults: 5, maxFaults: 8 },
};

/** A worker slot of a run: `a` and `b` run all along; `c` joins and leaves (the rebalance fault). */
export type WorkerName = 'a' | 'b' | 'c';

/** One fault. */
export type CampaignFault =
  | { readonly kind: 'sigkill' | 'sigterm'; readonly worker: WorkerName }
  | { readonly kind: 'zombie'; readonly worker: WorkerName; readonly stopMs: number }
  | { readonly kind: 'broker-restart' }
  | { readonly kind: 'redis-restart'; readonly downMs: number }
  | { readonly kind: 'thread-crash' }
  | { readonly kind: 'rebalance'; readonly stayMs: number };

export type FaultKind = CampaignFault['kind'];

/** Every fault kind, in the order summaries list them. */
export const FAULT_KINDS: readonly FaultKind[] = [
  'sigkill',
  'sigterm',
  'zombie',
  'broker-restart',
  'redis-restart',
  'thread-crash',
  'rebalance',
];

/** A fault and how long to wait, after the previous fault's recovery, before injecting it. */
export interface ScheduledFault {
  readonly gapMs: number;
  readonly fault: CampaignFault;
}

/** One run: its configuration, seed, settings and fault schedule. */
export interface RunPlan {
  readonly seed: number;
  readonly config: FaultConfig;
  readonly retryMode: 'blocking' | 'topics';
  /** Stream threads per worker: 2 on kafkajs when the schedule has a thread crash. */
  readonly threads: number;
  readonly faults: readonly ScheduledFault[];
  /** Fault kinds this configuration cannot have, and why. */
  readonly skipped: readonly string[];
}

/** Source partitions of every run. */
export const PARTITIONS = 6;
/** Attempts per record (so retry-topic mode has MAX_ATTEMPTS - 1 tiers). */
export const MAX_ATTEMPTS = 3;
/** Per guarantee: the commit interval of the runs, ms. */
export const COMMIT_INTERVAL_MS = { exactly_once: 100, at_least_once: 200 } as const;

/** The session timeout of every worker, ms (the broker's minimum): a zombie is stopped longer. */
export const SESSION_TIMEOUT_MS = 6_000;
/**
 * `--shutdown-timeout-ms` of every worker: a SIGTERM that does not end in exit 0 within it (and 30 s
 * for a loaded machine, run-workers.ts) is a violation. Two kafkajs request timeouts (30 s each): with 16 workers and the broker on 2
 * cores, a commit or a group leave of a graceful shutdown can wait on one request that times out
 * (seen: seed 415870 at 20 s).
 */
export const SHUTDOWN_TIMEOUT_MS = 60_000;

/**
 * Draws a run's plan: the retry mode, 3–6 (ci) faults — one broker restart, the others drawn
 * without replacement from the kinds the configuration can have — their order and parameters.
 */
export function drawPlan(seed: number, config: FaultConfig, profile: FaultProfile): RunPlan {
  const random = seededRandom(seed);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const retryMode = random() < 0.5 ? 'blocking' : 'topics';
  const count = int(profile.minFaults, profile.maxFaults);
  const kinds: FaultKind[] = ['sigkill', 'sigterm', 'zombie', 'rebalance'];
  const skipped: string[] = [];
  if (config.dedup) kinds.push('redis-restart');
  else skipped.push('redis-restart (no dedup: the run uses no Redis)');
  const streamThreads = CLIENT_FEATURES[config.client].streamThreads;
  if (streamThreads) kinds.push('thread-crash');
  else
    skipped.push(
      `thread-crash (${config.client} runs one stream thread per process, ${whyLacks(config.client, 'streamThreads')}: --threads > 1 exits 2)`,
    );

  const drawn: FaultKind[] = ['broker-restart'];
  let deck: FaultKind[] = [];
  while (drawn.length < count) {
    if (deck.length === 0) deck = [...kinds];
    drawn.push(deck.splice(Math.floor(random() * deck.length), 1)[0]!);
  }
  for (let i = drawn.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [drawn[i], drawn[j]] = [drawn[j]!, drawn[i]!];
  }
  const faults = drawn.map((kind): ScheduledFault => {
    const gapMs = int(500, 3_500);
    const worker = pick<WorkerName>(['a', 'b']);
    switch (kind) {
      case 'sigkill':
      case 'sigterm':
        return { gapMs, fault: { kind, worker } };
      case 'zombie':
        return { gapMs, fault: { kind, worker, stopMs: int(SESSION_TIMEOUT_MS + 3_000, SESSION_TIMEOUT_MS + 7_000) } };
      case 'redis-restart':
        return { gapMs, fault: { kind, downMs: int(2_000, 8_000) } };
      case 'rebalance':
        return { gapMs, fault: { kind, stayMs: int(1_000, 4_000) } };
      default:
        return { gapMs, fault: { kind } };
    }
  });
  const threads = streamThreads && drawn.includes('thread-crash') ? 2 : 1;
  return { seed, config, retryMode, threads, faults, skipped };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A one-line description of a fault, for schedules and timelines. */
export function describeCampaignFault(fault: CampaignFault): string {
  switch (fault.kind) {
    case 'sigkill':
      return `SIGKILL worker ${fault.worker} (restarted at once)`;
    case 'sigterm':
      return `SIGTERM worker ${fault.worker} (restarted once it exited)`;
    case 'zombie':
      return `SIGSTOP worker ${fault.worker} for ${seconds(fault.stopMs)}, then SIGCONT`;
    case 'broker-restart':
      return 'broker SIGKILL and restart (shared by the round)';
    case 'redis-restart':
      return `Redis SIGKILL, down ${seconds(fault.downMs)}, restart`;
    case 'thread-crash':
      return 'a stream thread crashes (the next crash record)';
    case 'rebalance':
      return `worker c joins, leaves (SIGTERM) ${seconds(fault.stayMs)} after its first task`;
  }
}

/** `[faults] seed S client C guarantee G dedup D (…): +1.2s SIGKILL worker a; …` */
export function describePlan(plan: RunPlan): string {
  const { client, guarantee, dedup } = plan.config;
  const steps = plan.faults.map((f) => `+${(f.gapMs / 1000).toFixed(1)}s ${describeCampaignFault(f.fault)}`).join('; ');
  const skipped = plan.skipped.length > 0 ? `; skipped: ${plan.skipped.join(', ')}` : '';
  return `[faults] seed ${plan.seed} client ${client} guarantee ${guarantee} dedup ${dedup ? 'on' : 'off'} (retry ${plan.retryMode}, threads ${plan.threads}; +Ns: after the previous fault's recovery): ${steps}${skipped}`;
}
