import { List } from 'immutable';
import { multicastSchema, successRouteSchema } from '../dsl/options-schema.js';
import type { Serde } from '../dsl/serdes.js';
import { isSinkSpec } from '../dsl/sink.js';
import type { BranchSpec } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { makeSinkNode, type SinkNode, type SuccessRouting } from './compiled-topology.js';
import { parseOptions, serdeOrThrow, toSinkSpec, type ClaimNodeName } from './parse-options.js';
import { topicNameProblem } from './topic-names.js';
import { TopologyProblems } from './topology-problems.js';

/** A multicast entry that repeats an earlier entry's topic: not compiled. */
const REPEATED = Symbol('repeated multicast topic');

/**
 * The success branch's entries, and whether it is a multicast (`{ all: [...] }`); throws naming
 * the processor. A topic a multicast lists twice is a problem in `problems`, and its later
 * entries are {@link REPEATED} (checking them would only repeat it).
 */
function successEntries(
  processor: string,
  success: unknown,
  problems: TopologyProblems,
): { entries: readonly unknown[]; routing: SuccessRouting } {
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
    const entries = all.map((entry) => {
      const topic = typeof entry === 'string' ? entry : isSinkSpec(entry) ? entry.topic : undefined;
      if (topic === undefined || !seen.has(topic)) {
        if (topic !== undefined) seen.add(topic);
        return entry;
      }
      problems.attempt(() => {
        throw new TopologyError(
          processor,
          `success: { all } lists topic '${topic}' twice: each sink of a multicast takes every output once`,
        );
      });
      return REPEATED;
    });
    return { entries, routing: 'all' };
  }
  return { entries: Array.isArray(success) ? success : [success], routing: 'first-match' };
}

/**
 * Compiles a success branch — a sink, a first-match route list or a multicast — into its sink
 * nodes, in branch order, claiming their names.
 *
 * @throws TopologyError naming the processor or the sink
 */
export function compileSuccessRoutes(
  processor: string,
  branch: BranchSpec,
  source: { topic: string; keySerde: Serde<any>; valueSerde: Serde<any> },
  claim: ClaimNodeName,
): { sinks: List<SinkNode>; routing: SuccessRouting } {
  // Every route is checked: one bad sink does not hide another.
  const problems = new TopologyProblems();
  const { entries: routes, routing } = successEntries(processor, branch.success, problems);
  const sinks: SinkNode[] = [];
  /** Route index → its `when` (null: every output), for the routes that compiled. */
  const whens = new Map<number, SinkNode['when']>();
  routes.forEach((route: unknown, i: number) => {
    if (route !== REPEATED) problems.attempt(() => compileRoute(route, i));
  });
  problems.throwIfAny();
  return { sinks: List(sinks), routing };

  function compileRoute(route: unknown, i: number): void {
    const where = routing === 'all' ? `multicast sink ${i + 1}` : routes.length > 1 ? `success route ${i + 1}` : 'success route';
    const isRoute = routing === 'first-match' && typeof route === 'object' && route !== null && !isSinkSpec(route) && 'to' in route;
    const checked = isRoute ? parseOptions(processor, successRouteSchema, route, { prefix: `${where}:`, root: where }) : undefined;
    const spec = toSinkSpec(processor, isRoute ? checked?.to : route, where, (topic) => `${processor}-to-${topic}`);
    const when = checked?.when;
    if (i > 0 && routing === 'first-match' && whens.get(i - 1) === null) {
      throw new TopologyError(processor, `${where} is unreachable: success route ${i} has no 'when' and takes every output`);
    }
    const name = spec.name ?? `${processor}-to-${spec.topic}`;
    const problem = topicNameProblem(spec.topic);
    if (problem !== undefined) throw new TopologyError(name, problem);
    if (spec.topic === source.topic)
      throw new TopologyError(name, `sink topic '${spec.topic}' is the source topic of its own processor '${processor}' (a loop)`);
    whens.set(i, (when as SinkNode['when']) ?? null);
    claim(name, `a sink node of processor '${processor}' (topic '${spec.topic}')`);
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
  }
}
