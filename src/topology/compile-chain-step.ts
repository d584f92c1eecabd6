import { List } from 'immutable';
import { showValue, unknownKeysProblem } from '../dsl/option-problems.js';
import { dedupSchema, processOptionsSchema } from '../dsl/options-schema.js';
import type { ClassifyFn, ProcessOptions } from '../dsl/process-options.js';
import { resolveSerde, type Serde } from '../dsl/serdes.js';
import type { SinkSpec } from '../dsl/sink.js';
import type { BranchSpec } from '../dsl/topology-builder.js';
import { TopologyError, type TopologyProblem } from '../errors.js';
import { resolveCircuitBreakerPolicy } from '../failure/circuit-breaker-policy.js';
import { resolveRetryBudgetPolicy } from '../failure/retry-budget-policy.js';
import { resolveRetryPolicy, type RetryPolicy } from '../failure/retry-policy.js';
import {
  makeChainStep,
  makeDeadLetterNode,
  makeProcessorNode,
  makeRetryTier,
  type ChainStep,
  type DeadLetterNode,
  type DedupPolicy,
} from './compiled-topology.js';
import { parseOptions, policyOrThrow, serdeOrThrow, toSinkSpec, type ClaimNodeName } from './parse-options.js';
import { defaultDeadLetterTopic, nodeNameProblem, retryTierTopic, topicNameProblem } from './topic-names.js';
import { TopologyProblems } from './topology-problems.js';

/** One step as the compiler reads it from the builder's definition. */
export interface StepSource {
  readonly name: unknown;
  readonly fn: unknown;
  readonly options: unknown;
}

/** What a step is compiled in: its place in the chain and its sub-topology's settings. */
export interface StepContext {
  readonly applicationId: string;
  readonly index: number;
  /** Steps in the chain. */
  readonly length: number;
  /** The source topic, which no DLQ of the chain may be. */
  readonly sourceTopic: string;
  readonly sourceKeySerde: Serde<any>;
  readonly sourceValueSerde: Serde<any>;
  /** The branch of the sub-topology (its `retry` and `dlq` belong to the last step). */
  readonly branch: BranchSpec;
  readonly claim: ClaimNodeName;
}

function resolveDedup(node: string, options: unknown): DedupPolicy | null {
  if (options === undefined) return null;
  const dedup = parseOptions(node, dedupSchema, options, { prefix: 'dedup', root: 'dedup' });
  return Object.freeze({
    key: dedup.key as DedupPolicy['key'],
    ttlMs: dedup.ttlMs,
    store: dedup.store ?? 'redis',
    claimTtlMs: dedup.claimTtlMs ?? 60_000,
    onStoreError: dedup.onStoreError ?? 'fail',
  });
}

/**
 * @throws TopologyError naming the processor: a bad retry policy, or one given in both places (with
 *   the problems of each, so that fixing the one kept does not reveal more)
 */
function resolveRetry(processor: string, options: ProcessOptions, branchRetry: BranchSpec['retry']): RetryPolicy {
  // null is no policy, as `??` below takes it.
  if (options.retry != null && branchRetry != null) {
    const problems = new TopologyProblems();
    problems.attempt(() => {
      throw new TopologyError(processor, 'retry policy given twice: in the process options and in branch({ retry }); keep one');
    });
    for (const [place, given] of [
      ['in the process options', options.retry],
      ['in branch({ retry })', branchRetry],
    ] as const) {
      const policy = resolveRetryPolicy(given);
      problems.attempt(() => policyOrThrow(processor, Array.isArray(policy) ? policy.map((p) => `${place}: ${p}`) : policy));
    }
    problems.fail();
  }
  return policyOrThrow(processor, resolveRetryPolicy(options.retry ?? branchRetry));
}

/** The serdes a step's input is written and read with in its tiers and DLQ. */
function inputSerdes(name: string, options: ProcessOptions, ctx: StepContext): { key: Serde<any>; value: Serde<any> } {
  const spec: unknown = options.inputSerdes;
  if (ctx.index === 0) {
    if (spec !== undefined)
      throw new TopologyError(name, "inputSerdes is for chain steps after the first: the first step reads the source's serdes");
    return { key: ctx.sourceKeySerde, value: ctx.sourceValueSerde };
  }
  const split = typeof spec === 'object' && spec !== null && resolveSerde(spec) === undefined && ('key' in spec || 'value' in spec);
  const unknown = split ? unknownKeysProblem(spec, ['key', 'value'], 'inputSerdes') : undefined;
  if (unknown !== undefined) throw new TopologyError(name, unknown);
  const parts = (split ? spec : { value: spec }) as { key?: unknown; value?: unknown };
  return {
    key: serdeOrThrow(name, 'the input key', parts.key, ctx.sourceKeySerde),
    value: serdeOrThrow(name, 'the input value', parts.value, resolveSerde('json')!),
  };
}

function deadLetterSpec(name: string, options: ProcessOptions, ctx: StepContext): SinkSpec {
  const last = ctx.index === ctx.length - 1;
  const branchDlq = last ? ctx.branch.dlq : undefined;
  if (options.dlq !== undefined && branchDlq !== undefined)
    throw new TopologyError(name, 'dead-letter sink given twice: in the process options and in branch({ dlq }); keep one');
  const given = options.dlq ?? branchDlq;
  return given === undefined
    ? ({ topic: defaultDeadLetterTopic(ctx.applicationId, name) } as SinkSpec)
    : toSinkSpec(name, given, 'dlq', () => `${name}-dlq`);
}

/**
 * Validates and compiles one processor of a chain (the only one, for a single processor): its
 * options, retry policy, outage guards, DLQ and retry tiers. `branch({ retry, dlq })` belongs to
 * the last step; `dedup` only to the first (it applies to source records).
 *
 * @throws TopologyError naming the processor (or its DLQ node) and the problem
 */
export function compileChainStep(step: StepSource, ctx: StepContext): ChainStep {
  const nameProblem = nodeNameProblem('processor name', step.name);
  if (nameProblem !== undefined && typeof step.name !== 'string') throw new TopologyError(ctx.sourceTopic, nameProblem);
  const name = step.name as string;
  // Every problem of the step is collected: one bad option does not hide another. A bad name is
  // one problem: the topics weir would name after it (its DLQ and retry tiers) are not reported again.
  const problems = new TopologyProblems();
  const notAboutName = (p: TopologyProblem): boolean => nameProblem === undefined || !p.problem.includes(`.${name}.`);
  if (nameProblem !== undefined)
    problems.attempt(() => {
      throw new TopologyError(name, nameProblem);
    });
  problems.attempt(() => ctx.claim(name, `the name of processor '${name}'`));
  // A name taken already takes its derived node names (`<name>-dlq`, `<name>-retry-<n>`) too:
  // they are not claimed again, which would only repeat the problem.
  const nameTaken = problems.count > 0;
  const claimDerived: ClaimNodeName = (node, what) => {
    if (!nameTaken || !node.startsWith(`${name}-`)) ctx.claim(node, what);
  };
  if (typeof step.fn !== 'function')
    problems.attempt(() => {
      throw new TopologyError(name, `processor must be a function (record, ctx) => output (got ${showValue(step.fn)})`);
    });
  const raw = typeof step.options === 'object' && step.options !== null ? (step.options as ProcessOptions) : {};
  // With options that do not parse, the fields are still resolved one by one from what was given.
  const options =
    problems.attempt(
      () =>
        parseOptions(name, processOptionsSchema, step.options ?? {}, {
          prefix: '',
          root: 'process options',
          unknownIn: 'the process options',
        }) as ProcessOptions,
    ) ?? raw;
  if (ctx.index > 0 && options.dedup !== undefined)
    problems.attempt(() => {
      throw new TopologyError(name, 'dedup applies to source records: give it to the first step of the chain');
    });
  const retry = problems.attempt(() => resolveRetry(name, options, ctx.length === 1 ? ctx.branch.retry : undefined));
  const serdes = problems.attempt(() => inputSerdes(name, options, ctx));
  const circuitBreaker = problems.attempt(() =>
    options.circuitBreaker === undefined ? null : policyOrThrow(name, resolveCircuitBreakerPolicy(options.circuitBreaker)),
  );
  const retryBudget = problems.attempt(() =>
    options.retryBudget === undefined ? null : policyOrThrow(name, resolveRetryBudgetPolicy(options.retryBudget)),
  );
  const dedup = problems.attempt(() => (ctx.index === 0 ? resolveDedup(name, options.dedup) : null));
  const deadLetter = problems.attempt(() => deadLetterNode(name, options, { ...ctx, claim: claimDerived }), notAboutName);
  // An `order: 'key'` step has no tier topics: its records wait at the task for the tiers' delays.
  const tierTopics =
    retry?.order === 'key' ? [] : (retry?.tierDelaysMs ?? []).map((_, index) => retryTierTopic(ctx.applicationId, name, index));
  tierTopics.forEach((topic, index) =>
    problems.attempt(() => {
      const tierNode = `${name}-retry-${index}`;
      const topicProblem = topicNameProblem(topic);
      if (topicProblem !== undefined) throw new TopologyError(tierNode, `retry tier ${topicProblem}`);
      // Retry tiers are nodes too (`weir describe`: `<processor>-retry-<n>`).
      claimDerived(tierNode, `the node of retry tier ${index} of processor '${name}'`);
    }, notAboutName),
  );
  problems.throwIfAny();
  return makeChainStep({
    index: ctx.index,
    processor: makeProcessorNode({
      name,
      fn: step.fn as never,
      retry: retry!,
      classify: (options.classify as ClassifyFn | undefined) ?? null,
      dedup: dedup ?? null,
      circuitBreaker: circuitBreaker ?? null,
      retryBudget: retryBudget ?? null,
      timeoutMs: options.timeoutMs ?? null,
    }),
    deadLetter: deadLetter!,
    retryTiers: List(tierTopics.map((topic, index) => makeRetryTier({ index, delayMs: retry!.tierDelaysMs[index]!, topic }))),
    inputKeySerde: serdes!.key,
    inputValueSerde: serdes!.value,
  });
}

/**
 * The step's dead-letter node, its topic checked.
 *
 * @throws TopologyError naming the DLQ node: a bad topic name, the source topic (a loop), a name taken
 */
function deadLetterNode(name: string, options: ProcessOptions, ctx: StepContext): DeadLetterNode {
  const dlqSpec = deadLetterSpec(name, options, ctx);
  const dlqName = dlqSpec.name ?? `${name}-dlq`;
  const dlqProblem = topicNameProblem(dlqSpec.topic);
  if (dlqProblem !== undefined) throw new TopologyError(dlqName, dlqProblem);
  if (dlqSpec.topic === ctx.sourceTopic)
    throw new TopologyError(dlqName, `dead-letter topic '${ctx.sourceTopic}' is the source topic of its own processor '${name}' (a loop)`);
  ctx.claim(dlqName, `the dead-letter node of processor '${name}'`);
  return makeDeadLetterNode({ name: dlqName, topic: dlqSpec.topic, partitions: dlqSpec.partitions ?? null });
}
