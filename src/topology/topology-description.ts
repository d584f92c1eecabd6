import { outageRideOut, type OutageRideOut } from '../failure/outage-ride-out.js';
import { retryArithmetic, type RetryArithmetic } from '../failure/retry-arithmetic.js';
import type { CircuitBreakerPolicy } from '../failure/circuit-breaker-policy.js';
import type { RetryBudgetPolicy } from '../failure/retry-budget-policy.js';
import type { RetryPolicy } from '../failure/retry-policy.js';
import type { ChainStep, CompiledTopology, Subtopology } from './compiled-topology.js';

/** One node of a {@link TopologyDescription}. */
export interface NodeDescription {
  readonly type: 'source' | 'processor' | 'sink' | 'retry-tier' | 'parked' | 'dead-letter';
  readonly name: string;
  /**
   * Processors of a chain (more than one processor on the source): the step's 1-based position,
   * the chain's length and, after the first step, the serdes its input is written with in its
   * retry tiers and DLQ.
   */
  readonly chain?: {
    readonly position: number;
    readonly length: number;
    readonly inputSerdes?: { readonly key: string; readonly value: string };
  };
  readonly topic?: string;
  readonly serdes?: { readonly key: string; readonly value: string };
  /** Sinks: whether a predicate (`when`) guards the route. */
  readonly predicate?: boolean;
  /** Sinks of a multicast branch (`success: { all }`): every output goes to each of them. */
  readonly multicast?: true;
  /** Retry tiers: the tier's delay, ms. */
  readonly delayMs?: number;
  /** The parked node (`order: 'key'`): the most keys one task holds records of (the least of its steps'). */
  readonly maxParkedKeys?: number;
  readonly retry?: {
    readonly mode: string;
    readonly maxAttempts: number;
    readonly backoff: { readonly initialMs: number; readonly multiplier: number; readonly maxMs: number; readonly jitter: string };
    readonly maxHops: number;
    readonly maxReplays: number;
    /** Retry-topic mode: where the tier delays come from (`explicit` tiers or the `backoff` schedule). */
    readonly tiers?: 'explicit' | 'backoff';
    /** Explicit tiers: their delays, ms, in order (the last one reused past them). */
    readonly delaysMs?: readonly number[];
    /** `order: 'key'`: failed records wait at their task (the `parked` node), their key's later records behind them. */
    readonly order?: 'key';
    readonly maxParkedKeys?: number;
  };
  readonly dedup?: { readonly store: string; readonly ttlMs: number; readonly onStoreError: string };
  /** Processors: delay ranges, worst-case time to the DLQ and P(success within maxAttempts). */
  readonly retryArithmetic?: RetryArithmetic;
  readonly circuitBreaker?: CircuitBreakerPolicy;
  /** Processors with a circuit breaker: how long an outage the breaker and the retry policy ride out. */
  readonly outageRideOut?: OutageRideOut;
  readonly retryBudget?: RetryBudgetPolicy;
  /** Processors: the attempt timeout, ms. */
  readonly timeoutMs?: number;
}

/** One edge: how records move between nodes, and on which outcome. */
export interface EdgeDescription {
  readonly from: string;
  readonly to: string;
  readonly kind: 'record' | 'success' | 'retry' | 'dlq';
  /** Retry edges: the delay before the retried record is processed, ms (topics mode: the tier's; parked: the first). */
  readonly delayMs?: number;
  /** The retry edge to the parked node (`order: 'key'`): the delay before each retry at the task, ms, in order. */
  readonly delaysMs?: readonly number[];
  /** Success edges of a multicast branch: a copy of every output takes this edge (and each of its siblings). */
  readonly multicast?: true;
}

/** The structure of a topology, like Kafka Streams' `TopologyDescription`. */
export interface TopologyDescription {
  readonly applicationId: string;
  readonly processingGuarantee: string;
  readonly commitIntervalMs: number;
  readonly subtopologies: ReadonlyArray<{
    readonly id: number;
    readonly nodes: readonly NodeDescription[];
    readonly edges: readonly EdgeDescription[];
  }>;
}

function retryOf(policy: RetryPolicy): NonNullable<NodeDescription['retry']> {
  return {
    mode: policy.mode,
    maxAttempts: policy.maxAttempts,
    backoff: { ...policy.backoff },
    maxHops: policy.maxHops,
    maxReplays: policy.maxReplays,
    ...(policy.mode === 'topics' ? { tiers: policy.explicitTiers ? ('explicit' as const) : ('backoff' as const) } : {}),
    ...(policy.mode === 'topics' && policy.explicitTiers ? { delaysMs: [...policy.tierDelaysMs] } : {}),
    ...(policy.order === 'key' ? { order: 'key' as const, maxParkedKeys: policy.maxParkedKeys! } : {}),
  };
}

function processorNode(step: ChainStep, length: number): NodeDescription {
  const p = step.processor;
  const arithmetic = retryArithmetic(p.retry, p.timeoutMs);
  return {
    type: 'processor',
    name: p.name,
    ...(length > 1
      ? {
          chain: {
            position: step.index + 1,
            length,
            ...(step.index > 0 ? { inputSerdes: { key: step.inputKeySerde.name, value: step.inputValueSerde.name } } : {}),
          },
        }
      : {}),
    retry: retryOf(p.retry),
    ...(p.dedup ? { dedup: { store: p.dedup.store, ttlMs: p.dedup.ttlMs, onStoreError: p.dedup.onStoreError } } : {}),
    retryArithmetic: arithmetic,
    ...(p.circuitBreaker
      ? {
          circuitBreaker: { ...p.circuitBreaker },
          outageRideOut: outageRideOut(p.retry.maxAttempts, arithmetic.retryDelaysMs, p.circuitBreaker),
        }
      : {}),
    ...(p.retryBudget ? { retryBudget: { ...p.retryBudget } } : {}),
    ...(p.timeoutMs !== null ? { timeoutMs: p.timeoutMs } : {}),
  };
}

/**
 * A step's retry edges (in place, through its tiers with the tier nodes, or — `order: 'key'` —
 * through its sub-topology's parked node, named `parked`) and its DLQ edge.
 */
function failureEdges(step: ChainStep, parked: string | undefined, nodes: NodeDescription[], edges: EdgeDescription[]): void {
  const p = step.processor;
  if (p.retry.maxAttempts > 1) {
    if (p.retry.mode === 'blocking') {
      edges.push({ from: p.name, to: p.name, kind: 'retry', delayMs: p.retry.backoff.initialMs });
    }
    if (p.retry.order === 'key' && parked !== undefined) {
      edges.push({ from: p.name, to: parked, kind: 'retry', delayMs: p.retry.tierDelaysMs[0] ?? 0, delaysMs: p.retry.tierDelaysMs });
      edges.push({ from: parked, to: p.name, kind: 'record' });
    }
    for (const tier of step.retryTiers) {
      const name = `${p.name}-retry-${tier.index}`;
      nodes.push({ type: 'retry-tier', name, topic: tier.topic, delayMs: tier.delayMs });
      edges.push({ from: p.name, to: name, kind: 'retry', delayMs: tier.delayMs });
      edges.push({ from: name, to: p.name, kind: 'record' });
    }
  }
  nodes.push({ type: 'dead-letter', name: step.deadLetter.name, topic: step.deadLetter.topic });
  edges.push({ from: p.name, to: step.deadLetter.name, kind: 'dlq' });
}

function describeSubtopology(sub: Subtopology): TopologyDescription['subtopologies'][number] {
  const steps = sub.steps.toArray();
  const nodes: NodeDescription[] = [
    {
      type: 'source',
      name: sub.source.name,
      topic: sub.source.topic,
      serdes: { key: sub.source.keySerde.name, value: sub.source.valueSerde.name },
    },
    ...steps.map((step) => processorNode(step, steps.length)),
  ];
  // As in Kafka Streams' TopologyDescription, each node's successors: the source feeds the first
  // step, each step the next, the last the sinks.
  const edges: EdgeDescription[] = steps.map((step, i) => ({
    from: i === 0 ? sub.source.name : steps[i - 1]!.processor.name,
    to: step.processor.name,
    kind: 'record' as const,
  }));
  const last = steps[steps.length - 1]!.processor;
  const multicast = sub.successRouting === 'all' ? (true as const) : undefined;
  for (const sink of sub.sinks) {
    nodes.push({
      type: 'sink',
      name: sink.name,
      topic: sink.topic,
      predicate: sink.when !== null,
      serdes: { key: sink.keySerde.name, value: sink.valueSerde.name },
      ...(multicast ? { multicast } : {}),
    });
    edges.push({ from: last.name, to: sink.name, kind: 'success', ...(multicast ? { multicast } : {}) });
  }
  // order 'key': the records a task holds back, durable in its changelog topic.
  const owner = steps.find((s) => s.processor.retry.order === 'key')?.processor.name;
  const parked = sub.parkedTopic === null || owner === undefined ? undefined : `${owner}-parked`;
  if (parked !== undefined) nodes.push({ type: 'parked', name: parked, topic: sub.parkedTopic!, maxParkedKeys: sub.maxParkedKeys! });
  for (const step of steps) failureEdges(step, parked, nodes, edges);
  return { id: sub.id, nodes, edges };
}

/** The structured description of a compiled topology (the `--format json` output). */
export function topologyDescription(topology: CompiledTopology): TopologyDescription {
  return {
    applicationId: topology.applicationId,
    processingGuarantee: topology.processingGuarantee,
    commitIntervalMs: topology.commitIntervalMs,
    subtopologies: topology.subtopologies.toArray().map(describeSubtopology),
  };
}
