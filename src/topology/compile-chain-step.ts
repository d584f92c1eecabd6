import { List } from 'immutable';
import { showValue, unknownKeysProblem } from '../dsl/option-problems.js';
import { dedupSchema, processOptionsSchema } from '../dsl/options-schema.js';
import type { ClassifyFn, ProcessOptions } from '../dsl/process-options.js';
import { resolveSerde, type Serde } from '../dsl/serdes.js';
import type { SinkSpec } from '../dsl/sink.js';
import type { BranchSpec } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { resolveCircuitBreakerPolicy, type CircuitBreakerPolicy } from '../failure/circuit-breaker-policy.js';
import { resolveRetryBudgetPolicy, type RetryBudgetPolicy } from '../failure/retry-budget-policy.js';
import { resolveRetryPolicy, type RetryPolicy } from '../failure/retry-policy.js';
import {
  makeChainStep,
  makeDeadLetterNode,
  makeProcessorNode,
  makeRetryTier,
  type ChainStep,
  type DedupPolicy,
} from './compiled-topology.js';
import { parseOptions, policyOrThrow, serdeOrThrow, toSinkSpec, type ClaimNodeName } from './parse-options.js';
import { defaultDeadLetterTopic, nodeNameProblem, retryTierTopic, topicNameProblem } from './topic-names.js';

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

function resolveGuards(
  processor: string,
  options: ProcessOptions,
): { circuitBreaker: CircuitBreakerPolicy | null; retryBudget: RetryBudgetPolicy | null; timeoutMs: number | null } {
  return {
    circuitBreaker:
      options.circuitBreaker === undefined ? null : policyOrThrow(processor, resolveCircuitBreakerPolicy(options.circuitBreaker)),
    retryBudget: options.retryBudget === undefined ? null : policyOrThrow(processor, resolveRetryBudgetPolicy(options.retryBudget)),
    timeoutMs: options.timeoutMs ?? null,
  };
}

function resolveRetry(processor: string, options: ProcessOptions, branchRetry: BranchSpec['retry']): RetryPolicy {
  if (options.retry !== undefined && branchRetry !== undefined) {
    throw new TopologyError(processor, 'retry policy given twice: in the process options and in branch({ retry }); keep one');
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
  if (nameProblem !== undefined) throw new TopologyError(typeof step.name === 'string' ? step.name : ctx.sourceTopic, nameProblem);
  const name = step.name as string;
  if (typeof step.fn !== 'function')
    throw new TopologyError(name, `processor must be a function (record, ctx) => output (got ${showValue(step.fn)})`);
  ctx.claim(name, `the name of processor '${name}'`);
  const options = parseOptions(name, processOptionsSchema, step.options ?? {}, {
    prefix: '',
    root: 'process options',
    unknownIn: 'the process options',
  }) as ProcessOptions;
  if (ctx.index > 0 && options.dedup !== undefined)
    throw new TopologyError(name, 'dedup applies to source records: give it to the first step of the chain');
  const retry = resolveRetry(name, options, ctx.length === 1 ? ctx.branch.retry : undefined);
  const serdes = inputSerdes(name, options, ctx);
  const dlqSpec = deadLetterSpec(name, options, ctx);
  const dlqName = dlqSpec.name ?? `${name}-dlq`;
  const dlqProblem = topicNameProblem(dlqSpec.topic);
  if (dlqProblem !== undefined) throw new TopologyError(dlqName, dlqProblem);
  if (dlqSpec.topic === ctx.sourceTopic)
    throw new TopologyError(dlqName, `dead-letter topic '${ctx.sourceTopic}' is the source topic of its own processor '${name}' (a loop)`);
  ctx.claim(dlqName, `the dead-letter node of processor '${name}'`);
  // Retry tiers are nodes too (`weir describe`: `<processor>-retry-<n>`).
  retry.tierDelaysMs.forEach((_, index) => ctx.claim(`${name}-retry-${index}`, `the node of retry tier ${index} of processor '${name}'`));
  return makeChainStep({
    index: ctx.index,
    processor: makeProcessorNode({
      name,
      fn: step.fn as never,
      retry,
      classify: (options.classify as ClassifyFn | undefined) ?? null,
      dedup: ctx.index === 0 ? resolveDedup(name, options.dedup) : null,
      ...resolveGuards(name, options),
    }),
    deadLetter: makeDeadLetterNode({ name: dlqName, topic: dlqSpec.topic, partitions: dlqSpec.partitions ?? null }),
    retryTiers: List(
      retry.tierDelaysMs.map((delayMs, index) => makeRetryTier({ index, delayMs, topic: retryTierTopic(ctx.applicationId, name, index) })),
    ),
    inputKeySerde: serdes.key,
    inputValueSerde: serdes.value,
  });
}
