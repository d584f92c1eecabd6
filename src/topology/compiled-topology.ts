import { List, Map as ImmutableMap, Record, type RecordOf } from 'immutable';
import type { ClassifyFn } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import type { Serde } from '../dsl/serdes.js';
import type { OutputView, ProcessingGuarantee } from '../dsl/topology-builder.js';
import type { CircuitBreakerPolicy } from '../failure/circuit-breaker-policy.js';
import type { RetryBudgetPolicy } from '../failure/retry-budget-policy.js';
import type { RetryPolicy } from '../failure/retry-policy.js';

/**
 * The compiled, frozen topology: immutable.js records and lists, built once by `compile()`
 * and shared read-only by every task. Node names are unique across the whole topology.
 */

/** A source node: the input topic of a sub-topology. */
export interface SourceNodeProps {
  name: string;
  topic: string;
  keySerde: Serde<any>;
  valueSerde: Serde<any>;
}
export type SourceNode = RecordOf<SourceNodeProps>;

/** A validated dedup policy. Times in ms. */
export interface DedupPolicy {
  readonly key: (record: any) => string | null | undefined;
  readonly ttlMs: number;
  readonly store: 'redis' | 'memory';
  readonly claimTtlMs: number;
  readonly onStoreError: 'fail' | 'skip-dedup';
}

/** A processor node: the user's function with its retry policy, classifier, dedup and outage guards. */
export interface ProcessorNodeProps {
  name: string;
  fn: ProcessorFn<any, any, any>;
  retry: RetryPolicy;
  classify: ClassifyFn | null;
  dedup: DedupPolicy | null;
  circuitBreaker: CircuitBreakerPolicy | null;
  retryBudget: RetryBudgetPolicy | null;
  /** Longest attempt, ms; null = no limit. */
  timeoutMs: number | null;
}
export type ProcessorNode = RecordOf<ProcessorNodeProps>;

/** A success sink; `when` null means "every output" (the default branch). */
export interface SinkNodeProps {
  name: string;
  topic: string;
  keySerde: Serde<any>;
  valueSerde: Serde<any>;
  when: ((output: OutputView<any>) => boolean) | null;
  /** Partitions when weir creates the topic; null = the source's count. */
  partitions: number | null;
}
export type SinkNode = RecordOf<SinkNodeProps>;

/** The dead-letter sink of a processor. */
export interface DeadLetterNodeProps {
  name: string;
  topic: string;
  partitions: number | null;
}
export type DeadLetterNode = RecordOf<DeadLetterNodeProps>;

/** One delay tier of retry-topic mode: `<application.id>.<processor>.retry.<index>`. */
export interface RetryTierProps {
  index: number;
  topic: string;
  delayMs: number;
}
export type RetryTier = RecordOf<RetryTierProps>;

/**
 * How outputs reach the success sinks: `'first-match'`, the first sink whose `when` holds takes
 * an output (Kafka Streams' `split()`); `'all'`, every sink takes a copy of every output
 * (multicast, Kafka Streams' repeated `to()`).
 */
export type SuccessRouting = 'first-match' | 'all';

/**
 * One step of a processor chain (`.process(a).process(b)`): the processor with its own dead-letter
 * sink and retry tiers, and the serdes its input is written with when a record waits in one of
 * its tiers or lands in its DLQ (the first step: the source's serdes).
 */
export interface ChainStepProps {
  /** 0-based position in the chain. */
  index: number;
  processor: ProcessorNode;
  deadLetter: DeadLetterNode;
  retryTiers: List<RetryTier>;
  inputKeySerde: Serde<any>;
  inputValueSerde: Serde<any>;
}
export type ChainStep = RecordOf<ChainStepProps>;

/**
 * One source → processor chain → branches sub-topology. `steps` is the chain, in order (one
 * step for a single processor); `processor`, `deadLetter` and `retryTiers` are its first step's.
 * The success branch (`sinks`) takes the last step's outputs.
 */
export interface SubtopologyProps {
  id: number;
  source: SourceNode;
  processor: ProcessorNode;
  sinks: List<SinkNode>;
  successRouting: SuccessRouting;
  deadLetter: DeadLetterNode;
  retryTiers: List<RetryTier>;
  steps: List<ChainStep>;
  /**
   * `retry.order: 'key'` on a step: the compacted changelog topic of the records its tasks hold
   * back per key (`<application.id>.<first ordered processor>.parked`, the source's partitions); null
   * when no step keeps key order.
   */
  parkedTopic: string | null;
  /** With `parkedTopic`: the most keys one task holds records of; else null. */
  maxParkedKeys: number | null;
}
export type Subtopology = RecordOf<SubtopologyProps>;

/** How a consumed topic maps to the topology: its sub-topology, the chain step it starts at and, for a tier topic, the tier. */
export interface TopicRouteProps {
  subtopologyId: number;
  /** The chain step records of this topic start at: 0 for the source, the tier's step for a tier topic. */
  step: number;
  tier: number | null;
}
export type TopicRoute = RecordOf<TopicRouteProps>;

/** The whole compiled topology. */
export interface CompiledTopologyProps {
  applicationId: string;
  processingGuarantee: ProcessingGuarantee;
  /** `commit.interval.ms`. */
  commitIntervalMs: number;
  subtopologies: List<Subtopology>;
  /** Every topic the worker consumes (sources and retry tiers) → its route. */
  topicRoutes: ImmutableMap<string, TopicRoute>;
}
export type CompiledTopology = RecordOf<CompiledTopologyProps>;

const noop = (): undefined => undefined;
const placeholderSerde: Serde<any> = { name: 'none', serialize: () => null, deserialize: () => null };

export const makeSourceNode = Record<SourceNodeProps>(
  { name: '', topic: '', keySerde: placeholderSerde, valueSerde: placeholderSerde },
  'SourceNode',
);
export const makeProcessorNode = Record<ProcessorNodeProps>(
  {
    name: '',
    fn: noop,
    retry: undefined as unknown as RetryPolicy,
    classify: null,
    dedup: null,
    circuitBreaker: null,
    retryBudget: null,
    timeoutMs: null,
  },
  'ProcessorNode',
);
export const makeSinkNode = Record<SinkNodeProps>(
  { name: '', topic: '', keySerde: placeholderSerde, valueSerde: placeholderSerde, when: null, partitions: null },
  'SinkNode',
);
export const makeDeadLetterNode = Record<DeadLetterNodeProps>({ name: '', topic: '', partitions: null }, 'DeadLetterNode');
export const makeRetryTier = Record<RetryTierProps>({ index: 0, topic: '', delayMs: 0 }, 'RetryTier');
export const makeChainStep = Record<ChainStepProps>(
  {
    index: 0,
    processor: makeProcessorNode(),
    deadLetter: makeDeadLetterNode(),
    retryTiers: List<RetryTier>(),
    inputKeySerde: placeholderSerde,
    inputValueSerde: placeholderSerde,
  },
  'ChainStep',
);
export const makeSubtopology = Record<SubtopologyProps>(
  {
    id: 0,
    source: makeSourceNode(),
    processor: makeProcessorNode(),
    sinks: List<SinkNode>(),
    successRouting: 'first-match',
    deadLetter: makeDeadLetterNode(),
    retryTiers: List<RetryTier>(),
    steps: List<ChainStep>(),
    parkedTopic: null,
    maxParkedKeys: null,
  },
  'Subtopology',
);
export const makeTopicRoute = Record<TopicRouteProps>({ subtopologyId: 0, step: 0, tier: null }, 'TopicRoute');
export const makeCompiledTopology = Record<CompiledTopologyProps>(
  {
    applicationId: '',
    processingGuarantee: 'at_least_once',
    commitIntervalMs: 1000,
    subtopologies: List<Subtopology>(),
    topicRoutes: ImmutableMap<string, TopicRoute>(),
  },
  'CompiledTopology',
);

/** Topics weir consumes: every source topic and every retry-tier topic. */
export function consumedTopics(topology: CompiledTopology): string[] {
  return [...topology.topicRoutes.keys()];
}

/** A topic weir writes to (see {@link producedTopics}). */
export interface ProducedTopic {
  readonly topic: string;
  /** Partitions its node asks for; null: the worker's default, else its source's count. */
  readonly partitions: number | null;
  /** The source topic of its sub-topology. */
  readonly sourceTopic: string;
  /**
   * A changelog (the parked records of `order: 'key'`): compacted, and always with exactly its
   * source's partitions, as Kafka Streams' changelog topics (task n writes partition n).
   */
  readonly changelog?: true;
}

/** The topics weir writes to and creates at start when missing: sinks, DLQs, retry tiers, changelogs. */
export function producedTopics(topology: CompiledTopology): ProducedTopic[] {
  const out: ProducedTopic[] = [];
  const seen = new Set<string>();
  const add = (topic: ProducedTopic): void => {
    if (seen.has(topic.topic)) return;
    seen.add(topic.topic);
    out.push(topic);
  };
  for (const sub of topology.subtopologies) {
    const sourceTopic = sub.source.topic;
    for (const s of sub.sinks) add({ topic: s.topic, partitions: s.partitions, sourceTopic });
    for (const step of sub.steps) {
      add({ topic: step.deadLetter.topic, partitions: step.deadLetter.partitions, sourceTopic });
      for (const t of step.retryTiers) add({ topic: t.topic, partitions: null, sourceTopic });
    }
    if (sub.parkedTopic !== null) add({ topic: sub.parkedTopic, partitions: null, sourceTopic, changelog: true });
  }
  return out;
}

/**
 * The sub-topology of a consumed topic, the chain step its records start at (the source: the
 * first; a tier: its step) and its tier (null for a source topic), if any.
 */
export function routeOf(
  topology: CompiledTopology,
  topic: string,
): { subtopology: Subtopology; step: ChainStep; tier: RetryTier | null } | undefined {
  const route = topology.topicRoutes.get(topic);
  if (route === undefined) return undefined;
  const subtopology = topology.subtopologies.get(route.subtopologyId);
  const step = subtopology?.steps.get(route.step);
  if (subtopology === undefined || step === undefined) return undefined;
  const tier = route.tier === null ? null : (step.retryTiers.get(route.tier) ?? null);
  return { subtopology, step, tier };
}

/** Every processor of a topology: each step of each sub-topology's chain, in order. */
export function chainSteps(topology: CompiledTopology): ChainStep[] {
  return topology.subtopologies.toArray().flatMap((sub) => sub.steps.toArray());
}
