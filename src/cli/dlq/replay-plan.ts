import { rangeSize, type OffsetRange } from '../../kafka/topic-range.js';
import type { DlqTool } from './dlq-tool.js';
import type { ReplayTarget } from './replay-record.js';

/** What a `weir dlq replay` run will do, decided before it reads a record. */
export interface ReplayPlan {
  readonly dlqTopic: string;
  readonly target: ReplayTarget;
  /** The consumer group that keeps the replay's position. */
  readonly group: string;
  readonly dryRun: boolean;
  /** Records per second (`--rate`); undefined: as fast as the broker acks. */
  readonly rate: number | undefined;
  /** `--max-replays`, overriding each record's `weir.replay.max`. */
  readonly maxReplays: number | undefined;
  /** The whole DLQ topic now. */
  readonly whole: ReadonlyMap<number, OffsetRange>;
  /** What this run reads: from the group's position to the end now. */
  readonly ranges: ReadonlyMap<number, OffsetRange>;
  /** Topics that exist (a record whose target does not is refused). */
  readonly existingTopics: ReadonlySet<string>;
  /** The report's first words: `Replay of <dlq> → <where>`. */
  readonly title: string;
}

/** A plan, or why there is nothing to run: a message and the exit code. */
export type ReplayPlanResult =
  | { readonly kind: 'plan'; readonly plan: ReplayPlan }
  | { readonly kind: 'done'; readonly message: string }
  | { readonly kind: 'refused'; readonly problem: string; readonly exit: 'usage' | 'failure' };

/** What {@link planReplay} needs beyond the tool. */
export interface ReplayPlanInput {
  readonly dlqTopic: string;
  readonly target: ReplayTarget;
  readonly group: string;
  readonly dryRun: boolean;
  readonly rate?: number;
  readonly maxReplays?: number;
  readonly whole: ReadonlyMap<number, OffsetRange>;
  /**
   * Called before the group's position is read, when there is something to replay (not in a
   * dry run): initializes the replay's transactional id, which fences an older run and
   * completes a crashed run's open transaction, so the position read next is final.
   */
  readonly claim?: () => Promise<void>;
}

/**
 * Plans a replay: checks the `--to` topic exists, takes over the replay's transactional id
 * (`claim`), and reads where the replay group stopped. Another run of the same group is not
 * refused: the claim fences it.
 *
 * @throws ReplayFencedError when an even newer run fenced this one during the claim
 * @throws the client's error when Kafka fails
 */
export async function planReplay(tool: DlqTool, input: ReplayPlanInput): Promise<ReplayPlanResult> {
  const { dlqTopic, target, group, dryRun, whole } = input;
  const existingTopics = new Set(await tool.admin.listTopics());
  if (target.kind === 'topic' && !existingTopics.has(target.topic)) {
    return { kind: 'refused', problem: `--to topic '${target.topic}' does not exist; create it first`, exit: 'usage' };
  }
  const where = target.kind === 'original' ? 'original topics' : `'${target.topic}'`;
  const title = `${dryRun ? 'Dry run: replay' : 'Replay'} of ${dlqTopic} → ${where}`;
  const before = rangeSize(whole);
  if (before === 0) return { kind: 'done', message: `${title}: nothing to replay, '${dlqTopic}' is empty\n` };
  if (!dryRun) await input.claim?.();
  const committed = await tool.admin.committedOffsets(group, dlqTopic);
  const ranges = new Map<number, OffsetRange>();
  for (const [p, r] of whole) ranges.set(p, { from: Math.min(r.to, Math.max(r.from, committed.get(p) ?? r.from)), to: r.to });
  if (rangeSize(ranges) === 0) {
    return {
      kind: 'done',
      message: `${title}: nothing to replay, all ${before} record(s) were handled by earlier runs (group ${group})\n`,
    };
  }
  return {
    kind: 'plan',
    plan: { dlqTopic, target, group, dryRun, rate: input.rate, maxReplays: input.maxReplays, whole, ranges, existingTopics, title },
  };
}
