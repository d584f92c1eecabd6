/**
 * The checker of the crash test and the fault campaign: what a read_committed read of a scripted
 * topology's sink (`<id>.out`), DLQ (`<id>.dlq`) and retry tiers (`<id>.<processor>.retry.<n>`)
 * holds against the input messages, and the contract of each processing guarantee:
 *
 * - exactly_once: every input id exactly once across sink and DLQ — with dedup each id once,
 *   without dedup each input message once (re-sends of a key included); a retry tier holds an id
 *   at most as often as the input does;
 * - at_least_once: nothing lost, and the extra copies within a bound (see {@link duplicateBound});
 * - both: no partial output (`partial: true`, a failed attempt's forward) anywhere, and the DLQ
 *   holds exactly the poison ids.
 */
import type { ReadRecord } from '../../../scripts/lib/topic-io.js';
import type { Script } from '../fixtures/scripted-topology.js';

/** What a scripted-topology output carries (see fixtures/scripted-topology.ts). */
export interface ScriptedOutput extends Script {
  readonly partial?: boolean;
  readonly pid?: number;
  readonly attempt?: number;
}

/** The script of an output record. */
export const outputOf = (r: ReadRecord): ScriptedOutput => JSON.parse(r.value!.toString()) as ScriptedOutput;

/** Which of a scripted topology's output topics a record is on, by the topic's name. */
export function outputKind(topic: string): 'sink' | 'dlq' | 'retry' | 'other' {
  if (topic.endsWith('.out')) return 'sink';
  if (topic.endsWith('.dlq')) return 'dlq';
  return /\.retry\.\d+$/.test(topic) ? 'retry' : 'other';
}

/** The tally of one run's outputs. */
export interface DeliveryTally {
  readonly sink: readonly ReadRecord[];
  readonly dlq: readonly ReadRecord[];
  readonly retry: readonly ReadRecord[];
  /** Input messages, distinct ids, and the poison ids. */
  readonly inputs: number;
  readonly expectedIds: ReadonlySet<string>;
  readonly poison: ReadonlySet<string>;
  /** Input messages per id (more than 1 for a re-sent key). */
  readonly messagesPerId: ReadonlyMap<string, number>;
  /** Sink + DLQ records per id. */
  readonly counts: ReadonlyMap<string, number>;
  /** Input ids with no sink or DLQ record. */
  readonly missing: readonly string[];
  /** Ids in sink or DLQ that no input carries. */
  readonly extra: readonly string[];
  /** Ids with more than one sink + DLQ record, and their counts. */
  readonly duplicated: ReadonlyArray<readonly [string, number]>;
  /** Ids whose sink + DLQ count differs from their number of input messages, and their counts. */
  readonly wrongCounts: ReadonlyArray<readonly [string, number]>;
  /** Sink and retry-tier records of a failed attempt (`partial: true`). */
  readonly partial: number;
  /** DLQ ids. */
  readonly dlqIds: ReadonlySet<string>;
}

/** Counts `records` (sink, DLQ and retry-tier records, read to the end) against the input `scripts`. */
export function tallyOutcomes(records: readonly ReadRecord[], scripts: readonly Script[]): DeliveryTally {
  const messagesPerId = new Map<string, number>();
  const poison = new Set<string>();
  for (const s of scripts) {
    messagesPerId.set(s.id, (messagesPerId.get(s.id) ?? 0) + 1);
    if (s.kind === 'poison') poison.add(s.id);
  }
  const byKind = { sink: [] as ReadRecord[], dlq: [] as ReadRecord[], retry: [] as ReadRecord[], other: [] as ReadRecord[] };
  for (const r of records) byKind[outputKind(r.topic)].push(r);
  const counts = new Map<string, number>();
  for (const r of [...byKind.sink, ...byKind.dlq]) {
    const id = outputOf(r).id;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const expectedIds = new Set(messagesPerId.keys());
  return {
    ...byKind,
    inputs: scripts.length,
    expectedIds,
    poison,
    messagesPerId,
    counts,
    missing: [...expectedIds].filter((id) => !counts.has(id)),
    extra: [...counts.keys()].filter((id) => !expectedIds.has(id)),
    duplicated: [...counts].filter(([, n]) => n > 1),
    wrongCounts: [...counts].filter(([id, n]) => n !== messagesPerId.get(id)),
    partial: [...byKind.sink, ...byKind.retry].filter((r) => outputOf(r).partial).length,
    dlqIds: new Set(byKind.dlq.map((r) => outputOf(r).id)),
  };
}

/** How many copies of `id` a run should hold: one per input message without dedup, one with dedup. */
const expectedCopies = (t: DeliveryTally, id: string, dedup: boolean): number => (dedup ? 1 : (t.messagesPerId.get(id) ?? 0));

/** Sink + DLQ records beyond the expected copies (what at_least_once may add). */
export function extraCopies(t: DeliveryTally, dedup: boolean): number {
  let extra = 0;
  for (const [id, n] of t.counts) extra += Math.max(0, n - expectedCopies(t, id, dedup));
  return extra;
}

/** Ids with fewer sink + DLQ records than expected copies (lost input), and their counts. */
export function shortIds(t: DeliveryTally, dedup: boolean): Array<readonly [string, number]> {
  return [...t.expectedIds].map((id) => [id, t.counts.get(id) ?? 0] as const).filter(([id, n]) => n < expectedCopies(t, id, dedup));
}

/** Retry-tier records per `topic id` beyond the input's copies of the id (exactly_once allows none). */
export function retryOverCounts(t: DeliveryTally, dedup: boolean): Array<readonly [string, number]> {
  const perTier = new Map<string, number>();
  for (const r of t.retry) {
    const key = `${r.topic} ${outputOf(r).id}`;
    perTier.set(key, (perTier.get(key) ?? 0) + 1);
  }
  return [...perTier].filter(([key, n]) => n > expectedCopies(t, key.slice(key.indexOf(' ') + 1), dedup));
}

/** The duplicate bound of an at_least_once run, from the run; see {@link duplicateBound}. */
export interface DuplicateBoundInput {
  /** Crashes, rebalances, broker and Redis outages: events after which uncommitted work is redone. */
  readonly disruptions: number;
  /** The run's peak progress, committed input records per ms. */
  readonly peakPerMs: number;
  readonly commitIntervalMs: number;
  /** Tasks that may each hold a record in hand (input partitions, plus retry-tier partitions). */
  readonly tasks: number;
}

/**
 * The at_least_once duplicate bound docs/guarantees.md states, derived from the run: per
 * disruption, one commit interval's records at the run's peak rate (twice, for bursts) plus the
 * record in hand of each task.
 */
export function duplicateBound(b: DuplicateBoundInput): number {
  return b.disruptions * (Math.ceil(2 * b.peakPerMs * b.commitIntervalMs) + b.tasks);
}

/** The contract a run is checked against. */
export interface DeliveryContract {
  readonly guarantee: 'exactly_once' | 'at_least_once';
  readonly dedup: boolean;
  /** at_least_once only: the most extra copies allowed ({@link duplicateBound}). */
  readonly duplicateBound?: number;
}

const some = (items: ReadonlyArray<string | readonly [string, number]>): string =>
  items
    .slice(0, 10)
    .map((i) => (typeof i === 'string' ? i : `${i[0]}×${i[1]}`))
    .join(', ') + (items.length > 10 ? `, … (${items.length})` : '');

/** The broken promises of `contract` in `t`, one line each (empty: the run kept its contract). */
export function contractViolations(t: DeliveryTally, contract: DeliveryContract): string[] {
  const { guarantee, dedup } = contract;
  const found: string[] = [];
  const short = shortIds(t, dedup);
  if (short.length > 0) found.push(`lost: ${short.length} ids with fewer outcomes than expected (${some(short)})`);
  if (t.extra.length > 0) found.push(`${t.extra.length} ids that no input carries (${some(t.extra)})`);
  if (t.partial > 0) found.push(`${t.partial} partial outputs (a failed attempt's forward) in sink or retry tiers`);
  const dlqNotPoison = [...t.dlqIds].filter((id) => !t.poison.has(id));
  const poisonNotInDlq = [...t.poison].filter((id) => !t.dlqIds.has(id));
  if (dlqNotPoison.length > 0) found.push(`DLQ holds ${dlqNotPoison.length} ids that are not poison (${some(dlqNotPoison)})`);
  if (poisonNotInDlq.length > 0) found.push(`${poisonNotInDlq.length} poison ids not in the DLQ (${some(poisonNotInDlq)})`);
  if (guarantee === 'exactly_once') {
    const wrong = dedup ? t.duplicated : t.wrongCounts.filter(([id, n]) => n > (t.messagesPerId.get(id) ?? 0));
    if (wrong.length > 0) found.push(`exactly_once: ${wrong.length} ids written more often than expected (${some(wrong)})`);
    const retryOver = retryOverCounts(t, dedup);
    if (retryOver.length > 0)
      found.push(`exactly_once: ${retryOver.length} retry-tier ids written more often than expected (${some(retryOver)})`);
  } else {
    const extra = extraCopies(t, dedup);
    const bound = contract.duplicateBound ?? 0;
    if (extra > bound) found.push(`at_least_once: ${extra} extra copies in sink + DLQ, above the bound ${bound}`);
  }
  return found;
}
