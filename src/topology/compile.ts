import { showValue } from './show-value.js';
import { List, Map as ImmutableMap } from 'immutable';
import { topologyDefinitionOf, type ProcessingGuarantee } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { compileSubtopology } from './compile-subtopology.js';
import { makeCompiledTopology, makeTopicRoute, type CompiledTopology, type Subtopology, type TopicRoute } from './compiled-topology.js';
import { nodeNameProblem } from './topic-names.js';
import { unknownKeysProblem } from './unknown-keys.js';

/** Settings that override the topology file's (from `weir run` flags). */
export interface CompileOverrides {
  readonly applicationId?: string;
  readonly processingGuarantee?: ProcessingGuarantee;
  /** `commit.interval.ms`. */
  readonly commitIntervalMs?: number;
}

/** `commit.interval.ms` defaults: Kafka Streams' 100 ms under exactly_once; 1 s under at_least_once. */
export const DEFAULT_COMMIT_INTERVAL_MS: Readonly<Record<ProcessingGuarantee, number>> = Object.freeze({
  exactly_once: 100,
  at_least_once: 1000,
});

const GUARANTEES: readonly ProcessingGuarantee[] = ['at_least_once', 'exactly_once'];

function resolveOptions(raw: unknown, overrides: CompileOverrides): { applicationId: string; processingGuarantee: ProcessingGuarantee; commitIntervalMs: number } {
  const options = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const unknown = unknownKeysProblem(options, ['applicationId', 'processingGuarantee', 'commitIntervalMs'], 'topology()');
  if (unknown !== undefined) throw new TopologyError(undefined, unknown);
  const applicationId = overrides.applicationId ?? options.applicationId;
  const idProblem = nodeNameProblem('application.id', applicationId);
  if (idProblem !== undefined) throw new TopologyError(undefined, idProblem);
  const processingGuarantee = overrides.processingGuarantee ?? options.processingGuarantee ?? 'at_least_once';
  if (!GUARANTEES.includes(processingGuarantee as ProcessingGuarantee)) {
    throw new TopologyError(undefined, `processingGuarantee must be 'at_least_once' or 'exactly_once' (got ${showValue(processingGuarantee)})`);
  }
  const guarantee = processingGuarantee as ProcessingGuarantee;
  const commitIntervalMs = overrides.commitIntervalMs ?? options.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS[guarantee];
  if (typeof commitIntervalMs !== 'number' || !Number.isInteger(commitIntervalMs) || commitIntervalMs < 1) {
    throw new TopologyError(undefined, `commitIntervalMs must be an integer number of ms ≥ 1 (got ${showValue(commitIntervalMs)})`);
  }
  return { applicationId: applicationId as string, processingGuarantee: guarantee, commitIntervalMs };
}

/** Finds a cycle of topics (sink of one sub-topology feeding the source of another, and back). */
function findTopicLoop(subtopologies: readonly Subtopology[]): string[] | undefined {
  const bySource = new Map(subtopologies.map((s) => [s.source.topic, s]));
  const visit = (sub: Subtopology, path: string[]): string[] | undefined => {
    for (const sink of sub.sinks) {
      const next = bySource.get(sink.topic);
      if (next === undefined) continue;
      if (path.includes(next.source.topic)) return [...path.slice(path.indexOf(next.source.topic)), next.source.topic];
      const loop = visit(next, [...path, next.source.topic]);
      if (loop) return loop;
    }
    return undefined;
  };
  for (const sub of subtopologies) {
    const loop = visit(sub, [sub.source.topic]);
    if (loop) return loop;
  }
  return undefined;
}

/**
 * Validates a topology and compiles it into a frozen {@link CompiledTopology} (immutable.js).
 *
 * @param input what the topology file default-exports: a builder from `topology(...)`
 * @param overrides settings from the command line, which win over the file's
 * @throws TopologyError naming the node and the problem: no source, an unknown serde, a
 *   processor with no success route, a sink that loops back to its source, duplicate node
 *   names, invalid retry numbers, ...
 * @example
 * const compiled = compile(topology('app').source('in').process('p', fn).branch({ success: 'out' }));
 */
export function compile(input: unknown, overrides: CompileOverrides = {}): CompiledTopology {
  const def = topologyDefinitionOf(input);
  if (def === undefined) {
    throw new TopologyError(undefined, 'expected a topology built with topology(...) from weir as the default export');
  }
  const { applicationId, processingGuarantee, commitIntervalMs } = resolveOptions(def.options, overrides);
  if (def.subtopologies.length === 0) throw new TopologyError(undefined, 'topology has no source: add .source(topic, serdes)');

  const seenSources = new Set<unknown>();
  for (const sub of def.subtopologies) {
    if (seenSources.has(sub.sourceTopic)) {
      throw new TopologyError(String(sub.sourceName ?? `${String(sub.sourceTopic)}-source`), `topic '${String(sub.sourceTopic)}' is the source of two sub-topologies; use one source per topic`);
    }
    seenSources.add(sub.sourceTopic);
  }
  const names = new Set<string>();
  const claim = (name: string): void => {
    if (names.has(name)) throw new TopologyError(name, 'duplicate node name: node names must be unique in a topology');
    names.add(name);
  };
  const subtopologies = def.subtopologies.map((sub, id) => compileSubtopology(sub, id, applicationId, claim));

  const routes = new Map<string, TopicRoute>();
  for (const sub of subtopologies) {
    routes.set(sub.source.topic, makeTopicRoute({ subtopologyId: sub.id, tier: null }));
  }
  for (const sub of subtopologies) {
    for (const tier of sub.retryTiers) {
      if (routes.has(tier.topic)) throw new TopologyError(sub.processor.name, `retry tier topic '${tier.topic}' is also a source topic`);
      routes.set(tier.topic, makeTopicRoute({ subtopologyId: sub.id, tier: tier.index }));
    }
  }
  const loop = findTopicLoop(subtopologies);
  if (loop !== undefined) {
    const first = subtopologies.find((s) => s.source.topic === loop[0]);
    throw new TopologyError(first?.processor.name, `topics form a loop: ${loop.join(' → ')}`);
  }

  return makeCompiledTopology({
    applicationId,
    processingGuarantee,
    commitIntervalMs,
    subtopologies: List(subtopologies),
    topicRoutes: ImmutableMap(routes),
  });
}
