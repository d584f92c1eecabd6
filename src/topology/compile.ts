import { List, Map as ImmutableMap } from 'immutable';
import { optionProblems } from '../dsl/option-problems.js';
import { topologyOptionsSchema } from '../dsl/options-schema.js';
import { topologyDefinitionOf, type ProcessingGuarantee, type SubtopologyDefinition } from '../dsl/topology-builder.js';
import { TopologyError, type TopologyProblem } from '../errors.js';
import { TopologyProblems } from './topology-problems.js';
import { compileSubtopology } from './compile-subtopology.js';
import { makeCompiledTopology, makeTopicRoute, type CompiledTopology, type Subtopology, type TopicRoute } from './compiled-topology.js';
import { nodeNameProblem } from './topic-names.js';

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

/** The application.id the nodes are checked with when the file gives no good one. */
const UNKNOWN_APPLICATION_ID = 'weir-unknown-application-id';

function fail(node: string | undefined, problem: string): never {
  throw new TopologyError(node, problem);
}

/** The application.id the file (or the command line) gives, when it is a good one; else undefined. */
function idOf(raw: unknown, overrides: CompileOverrides): string | undefined {
  const id =
    overrides.applicationId ?? (typeof raw === 'object' && raw !== null ? (raw as { applicationId?: unknown }).applicationId : undefined);
  return typeof id === 'string' && nodeNameProblem('application.id', id) === undefined ? id : undefined;
}

function resolveOptions(
  raw: unknown,
  overrides: CompileOverrides,
): { applicationId: string; processingGuarantee: ProcessingGuarantee; commitIntervalMs: number } {
  const fromFile = typeof raw === 'object' && raw !== null ? raw : {};
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const merged = { ...fromFile, ...defined };
  const parsed = topologyOptionsSchema.safeParse(merged);
  // application.id is checked even when other options are wrong (zod's answer says nothing of it then).
  const idProblem = nodeNameProblem('application.id', (merged as { applicationId?: unknown }).applicationId);
  const problems = parsed.success ? [] : optionProblems(topologyOptionsSchema, merged, parsed.error, { prefix: '', root: 'topology()' });
  if (idProblem !== undefined && !problems.some((p) => p.includes('applicationId'))) problems.push(idProblem);
  const [first, ...others] = problems;
  if (first !== undefined)
    throw new TopologyError(
      undefined,
      first,
      undefined,
      others.map((problem) => ({ node: undefined, problem })),
    );
  if (!parsed.success) throw new TopologyError(undefined, 'invalid topology options');
  const processingGuarantee = parsed.data.processingGuarantee ?? 'at_least_once';
  const commitIntervalMs = parsed.data.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS[processingGuarantee];
  return { applicationId: parsed.data.applicationId as string, processingGuarantee, commitIntervalMs };
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
  const problems = new TopologyProblems();
  const options = problems.attempt(() => resolveOptions(def.options, overrides));
  // Bad options are reported with the nodes' problems. The nodes are checked with the file's
  // application.id when it is a good one (it names the DLQ and retry-tier topics), else with a
  // stand-in, and then the checks of those topics' names against other topics are left out.
  const givenId = idOf(def.options, overrides);
  const { applicationId, processingGuarantee, commitIntervalMs } = options ?? {
    applicationId: givenId ?? UNKNOWN_APPLICATION_ID,
    processingGuarantee: 'at_least_once' as const,
    commitIntervalMs: DEFAULT_COMMIT_INTERVAL_MS.at_least_once,
  };
  const derivedTopicsKnown = options !== undefined || givenId !== undefined;
  // A problem of a topic named after the stand-in (a DLQ or retry tier) is not the file's.
  const aboutKnownTopics = (p: TopologyProblem): boolean => derivedTopicsKnown || !p.problem.includes(UNKNOWN_APPLICATION_ID);
  if (def.subtopologies.length === 0) problems.attempt(() => fail(undefined, 'topology has no source: add .source(topic, serdes)'));

  const seenSources = new Set<unknown>();
  const duplicateSources = new Set<SubtopologyDefinition>();
  for (const sub of def.subtopologies) {
    if (seenSources.has(sub.sourceTopic)) {
      duplicateSources.add(sub);
      problems.attempt(() =>
        fail(
          String(sub.sourceName ?? `${String(sub.sourceTopic)}-source`),
          `topic '${String(sub.sourceTopic)}' is the source of two sub-topologies; use one source per topic`,
        ),
      );
    }
    seenSources.add(sub.sourceTopic);
  }
  // Node name → what it names: user-given names and the ones weir derives (`<processor>-dlq`,
  // `<processor>-to-<topic>`, `<processor>-retry-<n>`, `<topic>-source`) share one namespace.
  const names = new Map<string, string>();
  const claim = (name: string, what: string): void => {
    const taken = names.get(name);
    if (taken !== undefined) fail(name, `duplicate node name: node names must be unique in a topology, and '${name}' is already ${taken}`);
    names.set(name, what);
  };
  const subtopologies = def.subtopologies.flatMap(
    // A second source of a topic is not compiled: its nodes would only repeat that the topic is taken.
    (sub, id) =>
      duplicateSources.has(sub) ? [] : (problems.attempt(() => compileSubtopology(sub, id, applicationId, claim), aboutKnownTopics) ?? []),
  );

  const routes = new Map<string, TopicRoute>();
  for (const sub of subtopologies) {
    routes.set(sub.source.topic, makeTopicRoute({ subtopologyId: sub.id, step: 0, tier: null }));
  }
  for (const sub of derivedTopicsKnown ? subtopologies : []) {
    for (const step of sub.steps) {
      for (const tier of step.retryTiers) {
        if (routes.has(tier.topic))
          problems.attempt(() => fail(step.processor.name, `retry tier topic '${tier.topic}' is also a source topic`));
        else routes.set(tier.topic, makeTopicRoute({ subtopologyId: sub.id, step: step.index, tier: tier.index }));
      }
    }
  }
  // A retry tier's topic is weir's own: a sink or DLQ writing into one (its processor's or
  // another's) would feed the tier records without retry headers, which it processes and writes
  // back — a loop that grows without end.
  const steps = subtopologies.flatMap((sub) => sub.steps.toArray());
  const tierOwners = new Map(
    steps
      .filter(() => derivedTopicsKnown)
      .flatMap((step) => step.retryTiers.toArray().map((tier) => [tier.topic, step.processor.name] as const)),
  );
  for (const sub of subtopologies) {
    const outputs = [
      ...sub.sinks.map((sink) => ({ node: sink.name, what: 'sink', topic: sink.topic })),
      ...sub.steps.map((step) => ({ node: step.deadLetter.name, what: 'dead-letter', topic: step.deadLetter.topic })),
    ];
    for (const { node, what, topic } of outputs) {
      const owner = tierOwners.get(topic);
      if (owner !== undefined)
        problems.attempt(() =>
          fail(
            node,
            `${what} topic '${topic}' is a retry tier topic of processor '${owner}': weir writes its retry tiers itself (a sink there would loop)`,
          ),
        );
    }
  }
  // A parked-records changelog (order 'key') is weir's own too: no source reads it, and no sink or
  // DLQ of another sub-topology writes into it (its own sub-topology's are checked with it).
  const changelogs = new Map(
    subtopologies.flatMap((sub) =>
      sub.parkedTopic === null
        ? []
        : [[sub.parkedTopic, sub.steps.find((s) => s.processor.retry.order === 'key')!.processor.name] as const],
    ),
  );
  for (const sub of subtopologies) {
    const owner = changelogs.get(sub.source.topic);
    if (owner !== undefined)
      problems.attempt(() =>
        fail(
          sub.source.name,
          `source topic '${sub.source.topic}' is the parked-records changelog of processor '${owner}': weir writes and reads it itself`,
        ),
      );
    const outputs = [
      ...sub.sinks.map((sink) => ({ node: sink.name, what: 'sink', topic: sink.topic })),
      ...sub.steps.map((step) => ({ node: step.deadLetter.name, what: 'dead-letter', topic: step.deadLetter.topic })),
    ];
    for (const { node, what, topic } of outputs) {
      const parkedBy = changelogs.get(topic);
      if (parkedBy !== undefined && topic !== sub.parkedTopic)
        problems.attempt(() =>
          fail(node, `${what} topic '${topic}' is the parked-records changelog of processor '${parkedBy}': weir writes it itself`),
        );
    }
  }
  const loop = findTopicLoop(subtopologies);
  if (loop !== undefined) {
    const first = subtopologies.find((s) => s.source.topic === loop[0]);
    problems.attempt(() => fail(first?.processor.name, `topics form a loop: ${loop.join(' → ')}`));
  }
  problems.throwIfAny();

  return makeCompiledTopology({
    applicationId,
    processingGuarantee,
    commitIntervalMs,
    subtopologies: List(subtopologies),
    topicRoutes: ImmutableMap(routes),
  });
}
