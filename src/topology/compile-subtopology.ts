import { List } from 'immutable';
import { unknownKeysProblem } from '../dsl/option-problems.js';
import { branchSchema } from '../dsl/options-schema.js';
import { resolveSerde, type Serde } from '../dsl/serdes.js';
import type { BranchSpec, SubtopologyDefinition } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { resolveRetryPolicy } from '../failure/retry-policy.js';
import { compileChainStep, type StepSource } from './compile-chain-step.js';
import { compileSuccessRoutes } from './compile-success-routes.js';
import { compileKeyOrder } from './compile-key-order.js';
import { makeSourceNode, makeSubtopology, type ChainStep, type Subtopology } from './compiled-topology.js';
import { parseOptions, policyOrThrow, serdeOrThrow, type ClaimNodeName } from './parse-options.js';
import { nodeNameProblem, topicNameProblem } from './topic-names.js';
import { TopologyProblems } from './topology-problems.js';

export type { ClaimNodeName } from './parse-options.js';

/**
 * The steps of a chain, in order, checked for their shape: every step after the first chained to
 * the step before it, none after the terminal `branch()`.
 *
 * @throws TopologyError naming the step
 */
function chainOf(def: SubtopologyDefinition, sourceName: string): StepSource[] {
  if (def.processorName === undefined)
    throw new TopologyError(sourceName, `source '${String(def.sourceTopic)}' has no processor: add .process(name, fn)`);
  const steps: StepSource[] = [{ name: def.processorName, fn: def.processorFn, options: def.processOptions }];
  for (const step of def.chain ?? []) {
    const previous = steps[steps.length - 1]!.name;
    const node = typeof step.name === 'string' ? step.name : undefined;
    if (step.afterBranch)
      throw new TopologyError(
        node,
        `step '${String(step.name)}' comes after the terminal branch() of '${String(step.after)}': chain every .process() before .branch()`,
      );
    if (step.after !== previous)
      throw new TopologyError(
        node,
        `step '${String(step.name)}' is chained to '${String(step.after)}', which already has a next step: a chain does not fork (to send outputs to several sinks, use branch({ success: { all: [...] } }))`,
      );
    steps.push({ name: step.name, fn: step.fn, options: step.options });
  }
  return steps;
}

/**
 * Validates and compiles one source → processor chain → branch sub-topology.
 *
 * @throws TopologyError naming the node and the problem
 */
export function compileSubtopology(def: SubtopologyDefinition, id: number, applicationId: string, claim: ClaimNodeName): Subtopology {
  // Every problem of the sub-topology is collected: its steps are checked even when its source's
  // topic name, serdes or another step are wrong. Only a topic that is not a string stops here.
  const problems = new TopologyProblems();
  const topicProblem = topicNameProblem(def.sourceTopic);
  if (topicProblem !== undefined) {
    const error = new TopologyError(typeof def.sourceTopic === 'string' ? def.sourceTopic : undefined, `source: ${topicProblem}`);
    if (typeof def.sourceTopic !== 'string') throw error;
    problems.attempt(() => {
      throw error;
    });
  }
  const topic = def.sourceTopic as string;
  const sourceName = def.sourceName ?? `${topic}-source`;
  // A name derived from a bad topic name would only repeat its problem.
  const derivedFromBadTopic = def.sourceName === undefined && topicProblem !== undefined;
  const sourceNameProblem = derivedFromBadTopic ? undefined : nodeNameProblem('source name', sourceName);
  if (sourceNameProblem !== undefined) {
    const error = new TopologyError(topic, sourceNameProblem);
    if (typeof sourceName !== 'string') throw error;
    problems.attempt(() => {
      throw error;
    });
  }
  problems.attempt(() => claim(sourceName as string, `the source node of topic '${String(def.sourceTopic)}'`));
  const { keySerde, valueSerde } = problems.attempt(() => sourceSerdes(def, topic, sourceName as string)) ?? {
    keySerde: resolveSerde('string')!,
    valueSerde: resolveSerde('json')!,
  };

  const chain = problems.attempt(() => chainOf(def, sourceName as string));
  // A chain of the wrong shape: its steps cannot be told apart, so they are not checked.
  if (chain === undefined) return problems.fail();
  const lastName = String(chain[chain.length - 1]!.name);
  const lastNode = typeof chain[chain.length - 1]!.name === 'string' ? lastName : topic;
  const branch =
    def.branch === undefined
      ? problems.attempt(() => {
          throw new TopologyError(lastNode, 'has no success route: add .branch({ success: sink(topic) })');
        })
      : problems.attempt(() => parseOptions(lastNode, branchSchema, def.branch, { prefix: '', root: 'branch()' }) as BranchSpec);
  if (chain.length > 1 && branch?.retry != null) {
    problems.attempt(() => {
      throw new TopologyError(
        lastNode,
        "branch({ retry }) is for a single processor: in a chain, give each step's retry in its process options",
      );
    });
    // Its own problems too, so that moving it into a step's options does not reveal more.
    const policy = resolveRetryPolicy(branch.retry);
    problems.attempt(() => policyOrThrow(lastNode, Array.isArray(policy) ? policy.map((p) => `in branch({ retry }): ${p}`) : policy));
  }

  const steps = chain.map((step, index) =>
    problems.attempt(() =>
      compileChainStep(step, {
        applicationId,
        index,
        length: chain.length,
        sourceTopic: topic,
        sourceKeySerde: keySerde,
        sourceValueSerde: valueSerde,
        // Without a usable branch the steps are still checked, as if it gave no retry or DLQ.
        branch: branch ?? ({ success: [] } as unknown as BranchSpec),
        claim,
      }),
    ),
  );
  // Outputs of the last step go to the sinks with the source's serdes by default, as for one
  // processor (checked even when that step has problems of its own).
  const routes =
    branch === undefined
      ? undefined
      : problems.attempt(() => compileSuccessRoutes(lastName, branch, { topic, keySerde, valueSerde }, claim));
  for (const step of steps) {
    const dlq = step?.deadLetter;
    if (dlq !== undefined && routes?.sinks.some((s) => s.topic === dlq.topic))
      problems.attempt(() => {
        throw new TopologyError(dlq.name, `dead-letter topic '${dlq.topic}' is also a success sink of '${lastName}'`);
      });
  }
  const taken = new Map([
    ...(routes?.sinks.map((s) => [s.topic, 'a sink of its success branch'] as const) ?? []),
    ...steps.flatMap((s) => (s ? [[s.deadLetter.topic, `the DLQ of processor '${s.processor.name}'`] as const] : [])),
  ]);
  const keyOrder = problems.attempt(() => compileKeyOrder(applicationId, steps, taken, claim));
  problems.throwIfAny();
  const compiled = steps as ChainStep[];
  const first = compiled[0]!;
  return makeSubtopology({
    id,
    source: makeSourceNode({ name: sourceName as string, topic, keySerde, valueSerde }),
    processor: first.processor,
    sinks: routes!.sinks,
    successRouting: routes!.routing,
    deadLetter: first.deadLetter,
    retryTiers: first.retryTiers,
    steps: List(compiled),
    parkedTopic: keyOrder?.parkedTopic ?? null,
    maxParkedKeys: keyOrder?.maxParkedKeys ?? null,
  });
}

/**
 * The source's key and value serdes (`string` and `json` by default).
 *
 * @throws TopologyError naming the source node: an unknown serde or an unknown key in `{ key, value }`
 */
function sourceSerdes(def: SubtopologyDefinition, topic: string, sourceName: string): { keySerde: Serde; valueSerde: Serde } {
  const serdes = def.sourceSerdes;
  const split =
    typeof serdes === 'object' && serdes !== null && resolveSerde(serdes) === undefined && ('key' in serdes || 'value' in serdes);
  const unknownSerdes = split ? unknownKeysProblem(serdes, ['key', 'value'], `the serdes of source '${topic}'`) : undefined;
  if (unknownSerdes !== undefined) throw new TopologyError(sourceName, unknownSerdes);
  // Both checked: a bad key serde does not hide a bad value serde.
  const problems = new TopologyProblems();
  const keySerde = problems.attempt(() =>
    serdeOrThrow(sourceName, 'the key', split ? (serdes as { key?: unknown }).key : undefined, resolveSerde('string')!),
  );
  const valueSerde = problems.attempt(() =>
    serdeOrThrow(sourceName, 'the value', split ? (serdes as { value?: unknown }).value : serdes, resolveSerde('json')!),
  );
  problems.throwIfAny();
  return { keySerde: keySerde!, valueSerde: valueSerde! };
}
