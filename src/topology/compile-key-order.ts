import { TopologyError } from '../errors.js';
import type { ChainStep } from './compiled-topology.js';
import type { ClaimNodeName } from './parse-options.js';
import { parkedChangelogTopic, topicNameProblem } from './topic-names.js';

/** A sub-topology's per-key order (`retry.order: 'key'`): its changelog topic and key limit. */
export interface KeyOrder {
  /** `<application.id>.<first ordered processor>.parked`: the compacted changelog of the parked records. */
  readonly parkedTopic: string;
  /** The most keys one task holds records of: the least `maxParkedKeys` of the ordered steps. */
  readonly maxParkedKeys: number;
}

/**
 * The per-key order of a chain, if a step asks for it (`retry: { mode: 'topics', order: 'key' }`).
 * The records of a parked key wait at the task whatever step parked them, so every other step
 * that retries through topics must keep the order too (a blocking step keeps it already).
 *
 * @param chain the compiled steps, in order (undefined: a step that did not compile)
 * @param taken the topics of the sub-topology's sinks and DLQs, which the changelog may not be, each with what it is
 * @throws TopologyError naming the step: a retry-topic step without `order: 'key'` in an ordered
 *   chain, or a changelog topic that is not a legal name or is taken
 */
export function compileKeyOrder(
  applicationId: string,
  chain: ReadonlyArray<ChainStep | undefined>,
  taken: ReadonlyMap<string, string>,
  claim: ClaimNodeName,
): KeyOrder | null {
  // Steps with problems of their own are left out: the others are still checked.
  const steps = chain.filter((s) => s !== undefined);
  const ordered = steps.filter((s) => s.processor.retry.order === 'key');
  if (ordered.length === 0) return null;
  const first = ordered[0]!.processor.name;
  for (const step of steps) {
    const { name, retry } = step.processor;
    if (retry.mode === 'topics' && retry.order !== 'key')
      throw new TopologyError(
        name,
        `retries through topics without retry.order 'key', but step '${first}' of its chain keeps key order: ` +
          `records of one key would overtake each other at '${name}' (give it order: 'key' too, or mode: 'blocking')`,
      );
  }
  if (steps.length < chain.length) return null;
  const owner = first;
  const parkedTopic = parkedChangelogTopic(applicationId, owner);
  const node = `${owner}-parked`;
  const problem = topicNameProblem(parkedTopic);
  if (problem !== undefined) throw new TopologyError(node, `parked-records changelog ${problem}`);
  const takenBy = taken.get(parkedTopic);
  if (takenBy !== undefined)
    throw new TopologyError(node, `parked-records changelog topic '${parkedTopic}' of processor '${owner}' is also ${takenBy}`);
  claim(node, `the parked-records changelog of processor '${owner}'`);
  return { parkedTopic, maxParkedKeys: Math.min(...ordered.map((s) => s.processor.retry.maxParkedKeys!)) };
}
