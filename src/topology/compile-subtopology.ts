import { List } from 'immutable';
import type { z } from 'zod';
import { optionProblems, showValue, unknownKeysProblem, type OptionNames } from '../dsl/option-problems.js';
import {
  branchSchema,
  dedupSchema,
  multicastSchema,
  processOptionsSchema,
  sinkOptionsSchema,
  successRouteSchema,
} from '../dsl/options-schema.js';
import type { ClassifyFn, ProcessOptions } from '../dsl/process-options.js';
import { describeSerdeSpec, resolveSerde, type Serde } from '../dsl/serdes.js';
import { isSinkSpec, type SinkSpec } from '../dsl/sink.js';
import type { BranchSpec, SubtopologyDefinition } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { resolveCircuitBreakerPolicy, type CircuitBreakerPolicy } from '../failure/circuit-breaker-policy.js';
import { resolveRetryBudgetPolicy, type RetryBudgetPolicy } from '../failure/retry-budget-policy.js';
import { resolveRetryPolicy, type RetryPolicy } from '../failure/retry-policy.js';
import {
  makeDeadLetterNode,
  makeProcessorNode,
  makeRetryTier,
  makeSinkNode,
  makeSourceNode,
  makeSubtopology,
  type DedupPolicy,
  type SinkNode,
  type Subtopology,
  type SuccessRouting,
} from './compiled-topology.js';
import { defaultDeadLetterTopic, nodeNameProblem, retryTierTopic, topicNameProblem } from './topic-names.js';

/** Registers a node name; throws a TopologyError naming it when it is taken. */
export type ClaimNodeName = (name: string) => void;

function serdeOrThrow(node: string, field: string, spec: unknown, fallback: Serde<any>): Serde<any> {
  if (spec === undefined) return fallback;
  const serde = resolveSerde(spec);
  if (serde === undefined) {
    throw new TopologyError(
      node,
      `unknown serde ${describeSerdeSpec(spec)} for ${field}: use 'json', 'string', 'buffer' or an object with name, serialize and deserialize`,
    );
  }
  return serde;
}

/**
 * Parses options with their zod schema.
 *
 * @throws TopologyError naming `node` and every problem (see `optionProblems`)
 */
function parseOptions<T extends z.ZodType>(node: string, schema: T, value: unknown, names: OptionNames): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new TopologyError(node, optionProblems(schema, value, parsed.error, names).join('; '));
  return parsed.data;
}

/** A sink spec or topic name as a checked sink spec; problems name the sink's node (`defaultName` unless it has a name). */
function toSinkSpec(node: string, value: unknown, what: string, defaultName: (topic: string) => string): SinkSpec {
  if (typeof value === 'string') return { topic: value } as SinkSpec;
  if (isSinkSpec(value)) {
    const name = typeof value.name === 'string' ? value.name : defaultName(value.topic);
    parseOptions(name, sinkOptionsSchema, { ...value }, { prefix: '', root: 'sink', unknownIn: `sink('${value.topic}')` });
    return value;
  }
  throw new TopologyError(node, `${what} must be sink('topic') or a topic name (got ${showValue(value)})`);
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

/** The success branch's entries, and whether it is a multicast (`{ all: [...] }`); throws naming the processor. */
function successEntries(processor: string, success: unknown): { entries: readonly unknown[]; routing: SuccessRouting } {
  if (success === undefined || success === null || (Array.isArray(success) && success.length === 0)) {
    throw new TopologyError(processor, 'has no success route: branch({ success: sink(topic) })');
  }
  if (typeof success === 'object' && !Array.isArray(success) && !isSinkSpec(success) && 'all' in success) {
    const { all } = parseOptions(processor, multicastSchema, success, {
      prefix: 'success',
      root: 'success',
      unknownIn: 'success: { all }',
    });
    const seen = new Set<string>();
    for (const entry of all) {
      const topic = typeof entry === 'string' ? entry : isSinkSpec(entry) ? entry.topic : undefined;
      if (topic === undefined) continue;
      if (seen.has(topic))
        throw new TopologyError(
          processor,
          `success: { all } lists topic '${topic}' twice: each sink of a multicast takes every output once`,
        );
      seen.add(topic);
    }
    return { entries: all, routing: 'all' };
  }
  return { entries: Array.isArray(success) ? success : [success], routing: 'first-match' };
}

function compileSuccessRoutes(
  processor: string,
  branch: BranchSpec,
  source: { topic: string; keySerde: Serde<any>; valueSerde: Serde<any> },
  claim: ClaimNodeName,
): { sinks: List<SinkNode>; routing: SuccessRouting } {
  const { entries: routes, routing } = successEntries(processor, branch.success);
  const sinks: SinkNode[] = [];
  routes.forEach((route: unknown, i: number) => {
    const where = routing === 'all' ? `multicast sink ${i + 1}` : routes.length > 1 ? `success route ${i + 1}` : 'success route';
    const isRoute = routing === 'first-match' && typeof route === 'object' && route !== null && !isSinkSpec(route) && 'to' in route;
    const checked = isRoute ? parseOptions(processor, successRouteSchema, route, { prefix: `${where}:`, root: where }) : undefined;
    const spec = toSinkSpec(processor, isRoute ? checked?.to : route, where, (topic) => `${processor}-to-${topic}`);
    const when = checked?.when;
    if (i > 0 && routing === 'first-match' && sinks[i - 1]?.when === null) {
      throw new TopologyError(processor, `${where} is unreachable: success route ${i} has no 'when' and takes every output`);
    }
    const name = spec.name ?? `${processor}-to-${spec.topic}`;
    const problem = topicNameProblem(spec.topic);
    if (problem !== undefined) throw new TopologyError(name, problem);
    if (spec.topic === source.topic)
      throw new TopologyError(name, `sink topic '${spec.topic}' is the source topic of its own processor '${processor}' (a loop)`);
    claim(name);
    sinks.push(
      makeSinkNode({
        name,
        topic: spec.topic,
        keySerde: serdeOrThrow(name, 'the key', spec.key, source.keySerde),
        valueSerde: serdeOrThrow(name, 'the value', spec.value, source.valueSerde),
        when: (when as SinkNode['when']) ?? null,
        partitions: spec.partitions ?? null,
      }),
    );
  });
  return { sinks: List(sinks), routing };
}

/** A policy resolver's answer as the policy, or a TopologyError naming the processor and every problem. */
function policyOrThrow<T>(processor: string, policy: T | string[]): T {
  if (Array.isArray(policy)) throw new TopologyError(processor, policy.join('; '));
  return policy;
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

function resolveRetry(processor: string, options: ProcessOptions, branch: BranchSpec): RetryPolicy {
  if (options.retry !== undefined && branch.retry !== undefined) {
    throw new TopologyError(processor, 'retry policy given twice: in the process options and in branch({ retry }); keep one');
  }
  return policyOrThrow(processor, resolveRetryPolicy(options.retry ?? branch.retry));
}

/**
 * Validates and compiles one source → process → branch chain.
 *
 * @throws TopologyError naming the node and the problem
 */
export function compileSubtopology(def: SubtopologyDefinition, id: number, applicationId: string, claim: ClaimNodeName): Subtopology {
  const topicProblem = topicNameProblem(def.sourceTopic);
  if (topicProblem !== undefined)
    throw new TopologyError(typeof def.sourceTopic === 'string' ? def.sourceTopic : undefined, `source: ${topicProblem}`);
  const topic = def.sourceTopic as string;
  const sourceName = def.sourceName ?? `${topic}-source`;
  const sourceNameProblem = nodeNameProblem('source name', sourceName);
  if (sourceNameProblem !== undefined) throw new TopologyError(topic, sourceNameProblem);
  claim(sourceName as string);

  const serdes = def.sourceSerdes;
  const split =
    typeof serdes === 'object' && serdes !== null && resolveSerde(serdes) === undefined && ('key' in serdes || 'value' in serdes);
  const unknownSerdes = split ? unknownKeysProblem(serdes, ['key', 'value'], `the serdes of source '${topic}'`) : undefined;
  if (unknownSerdes !== undefined) throw new TopologyError(sourceName as string, unknownSerdes);
  const keySerde = serdeOrThrow(
    sourceName as string,
    'the key',
    split ? (serdes as { key?: unknown }).key : undefined,
    resolveSerde('string')!,
  );
  const valueSerde = serdeOrThrow(
    sourceName as string,
    'the value',
    split ? (serdes as { value?: unknown }).value : serdes,
    resolveSerde('json')!,
  );

  if (def.processorName === undefined)
    throw new TopologyError(sourceName as string, `source '${topic}' has no processor: add .process(name, fn)`);
  const processor = def.processorName;
  const nameProblem = nodeNameProblem('processor name', processor);
  if (nameProblem !== undefined) throw new TopologyError(typeof processor === 'string' ? processor : topic, nameProblem);
  const name = processor as string;
  if (typeof def.processorFn !== 'function')
    throw new TopologyError(name, `processor must be a function (record, ctx) => output (got ${showValue(def.processorFn)})`);
  claim(name);
  const options = parseOptions(name, processOptionsSchema, def.processOptions ?? {}, {
    prefix: '',
    root: 'process options',
    unknownIn: 'the process options',
  }) as ProcessOptions;
  if (def.branch === undefined) throw new TopologyError(name, 'has no success route: add .branch({ success: sink(topic) })');
  const branch = parseOptions(name, branchSchema, def.branch, { prefix: '', root: 'branch()' }) as BranchSpec;

  const retry = resolveRetry(name, options, branch);
  const guards = resolveGuards(name, options);
  const { sinks, routing } = compileSuccessRoutes(name, branch, { topic, keySerde, valueSerde }, claim);
  const dlqSpec =
    branch.dlq === undefined
      ? ({ topic: defaultDeadLetterTopic(applicationId, name) } as SinkSpec)
      : toSinkSpec(name, branch.dlq, 'dlq', () => `${name}-dlq`);
  const dlqName = dlqSpec.name ?? `${name}-dlq`;
  const dlqProblem = topicNameProblem(dlqSpec.topic);
  if (dlqProblem !== undefined) throw new TopologyError(dlqName, dlqProblem);
  if (dlqSpec.topic === topic)
    throw new TopologyError(dlqName, `dead-letter topic '${topic}' is the source topic of its own processor '${name}' (a loop)`);
  if (sinks.some((s) => s.topic === dlqSpec.topic))
    throw new TopologyError(dlqName, `dead-letter topic '${dlqSpec.topic}' is also a success sink of '${name}'`);
  claim(dlqName);

  const retryTiers = List(
    retry.tierDelaysMs.map((delayMs, index) => makeRetryTier({ index, delayMs, topic: retryTierTopic(applicationId, name, index) })),
  );
  return makeSubtopology({
    id,
    source: makeSourceNode({ name: sourceName as string, topic, keySerde, valueSerde }),
    processor: makeProcessorNode({
      name,
      fn: def.processorFn as never,
      retry,
      classify: (options.classify as ClassifyFn | undefined) ?? null,
      dedup: resolveDedup(name, options.dedup),
      ...guards,
    }),
    sinks,
    successRouting: routing,
    deadLetter: makeDeadLetterNode({ name: dlqName, topic: dlqSpec.topic, partitions: dlqSpec.partitions ?? null }),
    retryTiers,
  });
}
