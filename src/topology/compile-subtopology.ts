import { showValue } from './show-value.js';
import { List } from 'immutable';
import type { DedupOptions, ProcessOptions } from '../dsl/process-options.js';
import { describeSerdeSpec, resolveSerde, type Serde } from '../dsl/serdes.js';
import { isSinkSpec, type SinkSpec } from '../dsl/sink.js';
import type { BranchSpec, SubtopologyDefinition } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { resolveRetryPolicy, type RetryPolicy } from './retry-policy.js';
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
} from './compiled-topology.js';
import { defaultDeadLetterTopic, nodeNameProblem, retryTierTopic, topicNameProblem } from './topic-names.js';
import { unknownKeysProblem } from './unknown-keys.js';

/** Registers a node name; throws a TopologyError naming it when it is taken. */
export type ClaimNodeName = (name: string) => void;

function serdeOrThrow(node: string, field: string, spec: unknown, fallback: Serde<any>): Serde<any> {
  if (spec === undefined) return fallback;
  const serde = resolveSerde(spec);
  if (serde === undefined) {
    throw new TopologyError(node, `unknown serde ${describeSerdeSpec(spec)} for ${field}: use 'json', 'string', 'buffer' or an object with name, serialize and deserialize`);
  }
  return serde;
}

function partitionsOrThrow(node: string, value: unknown): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TopologyError(node, `partitions must be an integer ≥ 1 (got ${showValue(value)})`);
  }
  return value;
}

function toSinkSpec(node: string, value: unknown, what: string): SinkSpec {
  if (typeof value === 'string') return { topic: value } as SinkSpec;
  if (isSinkSpec(value)) {
    const unknown = unknownKeysProblem(value, ['topic', 'name', 'key', 'value', 'partitions'], `sink('${value.topic}')`);
    if (unknown !== undefined) throw new TopologyError(node, unknown);
    return value;
  }
  throw new TopologyError(node, `${what} must be sink('topic') or a topic name (got ${showValue(value)})`);
}


function resolveDedup(node: string, options: DedupOptions | undefined): DedupPolicy | null {
  if (options === undefined) return null;
  const fail = (problem: string): never => {
    throw new TopologyError(node, `dedup.${problem}`);
  };
  if (typeof options !== 'object' || options === null) fail(' must be an object { key, ttlMs }');
  const unknown = unknownKeysProblem(options, ['key', 'ttlMs', 'store', 'claimTtlMs', 'onStoreError'], 'dedup');
  if (unknown !== undefined) throw new TopologyError(node, unknown);
  if (typeof options.key !== 'function') fail('key must be a function (record) => string');
  if (typeof options.ttlMs !== 'number' || !Number.isFinite(options.ttlMs) || options.ttlMs <= 0) fail(`ttlMs must be a number of ms > 0 (got ${showValue(options.ttlMs)})`);
  const store = options.store ?? 'redis';
  if (store !== 'redis' && store !== 'memory') fail(`store must be 'redis' or 'memory' (got ${showValue(store)})`);
  const claimTtlMs = options.claimTtlMs ?? 60_000;
  if (typeof claimTtlMs !== 'number' || !Number.isFinite(claimTtlMs) || claimTtlMs <= 0) fail(`claimTtlMs must be a number of ms > 0 (got ${showValue(claimTtlMs)})`);
  const onStoreError = options.onStoreError ?? 'fail';
  if (onStoreError !== 'fail' && onStoreError !== 'skip-dedup') fail(`onStoreError must be 'fail' or 'skip-dedup' (got ${showValue(onStoreError)})`);
  return Object.freeze({ key: options.key, ttlMs: options.ttlMs, store, claimTtlMs, onStoreError });
}

function compileSuccessRoutes(
  processor: string,
  branch: BranchSpec,
  source: { topic: string; keySerde: Serde<any>; valueSerde: Serde<any> },
  claim: ClaimNodeName,
): List<SinkNode> {
  const success = branch.success;
  if (success === undefined || success === null || (Array.isArray(success) && success.length === 0)) {
    throw new TopologyError(processor, 'has no success route: branch({ success: sink(topic) })');
  }
  const routes = Array.isArray(success) ? success : [success];
  const sinks: SinkNode[] = [];
  routes.forEach((route: unknown, i: number) => {
    const where = routes.length > 1 ? `success route ${i + 1}` : 'success route';
    const isRoute = typeof route === 'object' && route !== null && !isSinkSpec(route) && 'to' in route;
    const unknownRoute = isRoute ? unknownKeysProblem(route, ['when', 'to'], where) : undefined;
    if (unknownRoute !== undefined) throw new TopologyError(processor, unknownRoute);
    const spec = toSinkSpec(processor, isRoute ? (route as { to: unknown }).to : route, where);
    const when = isRoute ? (route as { when?: unknown }).when : undefined;
    if (when !== undefined && typeof when !== 'function') throw new TopologyError(processor, `${where}: when must be a function (output) => boolean`);
    if (i > 0 && sinks[i - 1]?.when === null) {
      throw new TopologyError(processor, `${where} is unreachable: success route ${i} has no 'when' and takes every output`);
    }
    const name = spec.name ?? `${processor}-to-${spec.topic}`;
    const problem = topicNameProblem(spec.topic);
    if (problem !== undefined) throw new TopologyError(name, problem);
    if (spec.topic === source.topic) throw new TopologyError(name, `sink topic '${spec.topic}' is the source topic of its own processor '${processor}' (a loop)`);
    claim(name);
    sinks.push(
      makeSinkNode({
        name,
        topic: spec.topic,
        keySerde: serdeOrThrow(name, 'the key', spec.key, source.keySerde),
        valueSerde: serdeOrThrow(name, 'the value', spec.value, source.valueSerde),
        when: (when as SinkNode['when']) ?? null,
        partitions: partitionsOrThrow(name, spec.partitions),
      }),
    );
  });
  return List(sinks);
}

function resolveRetry(processor: string, options: ProcessOptions, branch: BranchSpec): RetryPolicy {
  if (options.retry !== undefined && branch.retry !== undefined) {
    throw new TopologyError(processor, 'retry policy given twice: in the process options and in branch({ retry }); keep one');
  }
  const policy = resolveRetryPolicy(options.retry ?? branch.retry);
  if (Array.isArray(policy)) throw new TopologyError(processor, policy.join('; '));
  return policy;
}

/**
 * Validates and compiles one source → process → branch chain.
 *
 * @throws TopologyError naming the node and the problem
 */
export function compileSubtopology(def: SubtopologyDefinition, id: number, applicationId: string, claim: ClaimNodeName): Subtopology {
  const topicProblem = topicNameProblem(def.sourceTopic);
  if (topicProblem !== undefined) throw new TopologyError(typeof def.sourceTopic === 'string' ? def.sourceTopic : undefined, `source: ${topicProblem}`);
  const topic = def.sourceTopic as string;
  const sourceName = def.sourceName ?? `${topic}-source`;
  const sourceNameProblem = nodeNameProblem('source name', sourceName);
  if (sourceNameProblem !== undefined) throw new TopologyError(topic, sourceNameProblem);
  claim(sourceName as string);

  const serdes = def.sourceSerdes;
  const split = typeof serdes === 'object' && serdes !== null && resolveSerde(serdes) === undefined && ('key' in serdes || 'value' in serdes);
  const unknownSerdes = split ? unknownKeysProblem(serdes, ['key', 'value'], `the serdes of source '${topic}'`) : undefined;
  if (unknownSerdes !== undefined) throw new TopologyError(sourceName as string, unknownSerdes);
  const keySerde = serdeOrThrow(sourceName as string, 'the key', split ? (serdes as { key?: unknown }).key : undefined, resolveSerde('string')!);
  const valueSerde = serdeOrThrow(sourceName as string, 'the value', split ? (serdes as { value?: unknown }).value : serdes, resolveSerde('json')!);

  if (def.processorName === undefined) throw new TopologyError(sourceName as string, `source '${topic}' has no processor: add .process(name, fn)`);
  const processor = def.processorName;
  const nameProblem = nodeNameProblem('processor name', processor);
  if (nameProblem !== undefined) throw new TopologyError(typeof processor === 'string' ? processor : topic, nameProblem);
  const name = processor as string;
  if (typeof def.processorFn !== 'function') throw new TopologyError(name, `processor must be a function (record, ctx) => output (got ${showValue(def.processorFn)})`);
  claim(name);
  const options = (def.processOptions ?? {}) as ProcessOptions;
  if (typeof options !== 'object') throw new TopologyError(name, 'process options must be an object');
  const unknownOption = unknownKeysProblem(options, ['retry', 'classify', 'dedup'], 'the process options');
  if (unknownOption !== undefined) throw new TopologyError(name, unknownOption);
  if (options.classify !== undefined && typeof options.classify !== 'function') throw new TopologyError(name, "classify must be a function (error, record) => 'retry' | 'dlq'");
  if (def.branch === undefined) throw new TopologyError(name, 'has no success route: add .branch({ success: sink(topic) })');
  const branch = def.branch as BranchSpec;
  if (typeof branch !== 'object' || branch === null) throw new TopologyError(name, 'branch() takes { success, retry, dlq }');
  const unknownBranch = unknownKeysProblem(branch, ['success', 'retry', 'dlq'], 'branch()');
  if (unknownBranch !== undefined) throw new TopologyError(name, unknownBranch);

  const retry = resolveRetry(name, options, branch);
  const sinks = compileSuccessRoutes(name, branch, { topic, keySerde, valueSerde }, claim);
  const dlqSpec = branch.dlq === undefined ? ({ topic: defaultDeadLetterTopic(applicationId, name) } as SinkSpec) : toSinkSpec(name, branch.dlq, 'dlq');
  const dlqName = dlqSpec.name ?? `${name}-dlq`;
  const dlqProblem = topicNameProblem(dlqSpec.topic);
  if (dlqProblem !== undefined) throw new TopologyError(dlqName, dlqProblem);
  if (dlqSpec.topic === topic) throw new TopologyError(dlqName, `dead-letter topic '${topic}' is the source topic of its own processor '${name}' (a loop)`);
  if (sinks.some((s) => s.topic === dlqSpec.topic)) throw new TopologyError(dlqName, `dead-letter topic '${dlqSpec.topic}' is also a success sink of '${name}'`);
  claim(dlqName);

  const retryTiers = List(retry.tierDelaysMs.map((delayMs, index) => makeRetryTier({ index, delayMs, topic: retryTierTopic(applicationId, name, index) })));
  return makeSubtopology({
    id,
    source: makeSourceNode({ name: sourceName as string, topic, keySerde, valueSerde }),
    processor: makeProcessorNode({
      name,
      fn: def.processorFn as never,
      retry,
      classify: options.classify ?? null,
      dedup: resolveDedup(name, options.dedup),
    }),
    sinks,
    deadLetter: makeDeadLetterNode({ name: dlqName, topic: dlqSpec.topic, partitions: partitionsOrThrow(dlqName, dlqSpec.partitions) }),
    retryTiers,
  });
}
