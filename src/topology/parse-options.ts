import type { z } from 'zod';
import { optionProblems, showValue, type OptionNames } from '../dsl/option-problems.js';
import { sinkOptionsSchema } from '../dsl/options-schema.js';
import { describeSerdeSpec, resolveSerde, type Serde } from '../dsl/serdes.js';
import { isSinkSpec, type SinkSpec } from '../dsl/sink.js';
import { TopologyError } from '../errors.js';

/**
 * Reserves a node name in the topology; `what` says what it names (`the dead-letter node of
 * processor 'x'`), for the error when a later node wants it too.
 *
 * @throws TopologyError naming the node and what has the name already
 */
export type ClaimNodeName = (name: string, what: string) => void;

/**
 * Parses options with their zod schema.
 *
 * @throws TopologyError naming `node` and every problem (see `optionProblems`)
 */
export function parseOptions<T extends z.ZodType>(node: string, schema: T, value: unknown, names: OptionNames): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw problemsAt(node, optionProblems(schema, value, parsed.error, names));
  return parsed.data;
}

/** A serde spec as a serde (`fallback` when absent); throws a TopologyError naming `node` and `field` when unknown. */
export function serdeOrThrow(node: string, field: string, spec: unknown, fallback: Serde<any>): Serde<any> {
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

/** A sink spec or topic name as a checked sink spec; problems name the sink's node (`defaultName` unless it has a name). */
export function toSinkSpec(node: string, value: unknown, what: string, defaultName: (topic: string) => string): SinkSpec {
  if (typeof value === 'string') return { topic: value } as SinkSpec;
  if (isSinkSpec(value)) {
    const name = typeof value.name === 'string' ? value.name : defaultName(value.topic);
    parseOptions(name, sinkOptionsSchema, { ...value }, { prefix: '', root: 'sink', unknownIn: `sink('${value.topic}')` });
    return value;
  }
  throw new TopologyError(node, `${what} must be sink('topic') or a topic name (got ${showValue(value)})`);
}

/** A policy resolver's answer as the policy, or a TopologyError naming the processor and every problem. */
export function policyOrThrow<T>(processor: string, policy: T | string[]): T {
  if (Array.isArray(policy)) throw problemsAt(processor, policy);
  return policy;
}

/** One TopologyError with each of `problems` (at least one) of `node` on a line of its own. */
function problemsAt(node: string, problems: readonly string[]): TopologyError {
  const [first = 'invalid options', ...others] = problems;
  return new TopologyError(
    node,
    first,
    undefined,
    others.map((problem) => ({ node, problem })),
  );
}
