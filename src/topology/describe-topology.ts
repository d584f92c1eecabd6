import ms from 'ms';
import type { CircuitBreakerPolicy } from '../failure/circuit-breaker-policy.js';
import { outageRideOut, type OutageRideOut } from '../failure/outage-ride-out.js';
import { retryArithmetic, type RetryArithmetic } from '../failure/retry-arithmetic.js';
import type { RetryBudgetPolicy } from '../failure/retry-budget-policy.js';
import type { RetryPolicy } from '../failure/retry-policy.js';
import type { CompiledTopology, Subtopology } from './compiled-topology.js';

/** Output formats of {@link describeTopology}. */
export type DescribeFormat = 'text' | 'json' | 'mermaid';

/** One node of a {@link TopologyDescription}. */
export interface NodeDescription {
  readonly type: 'source' | 'processor' | 'sink' | 'retry-tier' | 'dead-letter';
  readonly name: string;
  readonly topic?: string;
  readonly serdes?: { readonly key: string; readonly value: string };
  /** Sinks: whether a predicate (`when`) guards the route. */
  readonly predicate?: boolean;
  /** Retry tiers: the tier's delay, ms. */
  readonly delayMs?: number;
  readonly retry?: {
    readonly mode: string;
    readonly maxAttempts: number;
    readonly backoff: { readonly initialMs: number; readonly multiplier: number; readonly maxMs: number; readonly jitter: string };
    readonly maxHops: number;
    readonly maxReplays: number;
    /** Retry-topic mode: where the tier delays come from (`explicit` tiers or the `backoff` schedule). */
    readonly tiers?: 'explicit' | 'backoff';
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
  /** Retry edges: the delay before the retried record is processed, ms (topics mode: the tier's). */
  readonly delayMs?: number;
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
  };
}

function describeSubtopology(sub: Subtopology): TopologyDescription['subtopologies'][number] {
  const p = sub.processor;
  const arithmetic = retryArithmetic(p.retry, p.timeoutMs);
  const nodes: NodeDescription[] = [
    {
      type: 'source',
      name: sub.source.name,
      topic: sub.source.topic,
      serdes: { key: sub.source.keySerde.name, value: sub.source.valueSerde.name },
    },
    {
      type: 'processor',
      name: p.name,
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
    },
  ];
  const edges: EdgeDescription[] = [{ from: sub.source.name, to: p.name, kind: 'record' }];
  for (const sink of sub.sinks) {
    nodes.push({
      type: 'sink',
      name: sink.name,
      topic: sink.topic,
      predicate: sink.when !== null,
      serdes: { key: sink.keySerde.name, value: sink.valueSerde.name },
    });
    edges.push({ from: p.name, to: sink.name, kind: 'success' });
  }
  if (p.retry.maxAttempts > 1) {
    if (p.retry.mode === 'blocking') {
      edges.push({ from: p.name, to: p.name, kind: 'retry', delayMs: p.retry.backoff.initialMs });
    }
    for (const tier of sub.retryTiers) {
      const name = `${p.name}-retry-${tier.index}`;
      nodes.push({ type: 'retry-tier', name, topic: tier.topic, delayMs: tier.delayMs });
      edges.push({ from: p.name, to: name, kind: 'retry', delayMs: tier.delayMs });
      edges.push({ from: name, to: p.name, kind: 'record' });
    }
  }
  nodes.push({ type: 'dead-letter', name: sub.deadLetter.name, topic: sub.deadLetter.topic });
  edges.push({ from: p.name, to: sub.deadLetter.name, kind: 'dlq' });
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

function nodeLine(node: NodeDescription, tierCount = 0): string {
  switch (node.type) {
    case 'source':
      return `Source: ${node.name} (topics: [${node.topic}], key: ${node.serdes?.key}, value: ${node.serdes?.value})`;
    case 'processor': {
      const r = node.retry!;
      const b = r.backoff;
      const dedup = node.dedup ? `, dedup: ${node.dedup.store} ${node.dedup.ttlMs}ms` : '';
      const backoff = `backoff: ${b.initialMs}ms ×${b.multiplier} ≤ ${b.maxMs}ms, jitter: ${b.jitter}`;
      const reuse = r.maxAttempts - 1 > tierCount ? ', the last reused' : '';
      const how = r.tiers === undefined ? backoff : r.tiers === 'explicit' ? `tiers: explicit${reuse}` : `tiers: from ${backoff}${reuse}`;
      const guards = r.mode === 'topics' ? `, maxHops: ${r.maxHops}` : '';
      return `Processor: ${node.name} (retry: ${r.mode}, maxAttempts: ${r.maxAttempts}, ${how}${guards}, maxReplays: ${r.maxReplays}${dedup})`;
    }
    case 'sink':
      return `Sink: ${node.name} (topic: ${node.topic}${node.predicate ? ', when: predicate' : ''})`;
    case 'retry-tier':
      return `Retry tier: ${node.name} (topic: ${node.topic}, delay: ${node.delayMs}ms)`;
    case 'dead-letter':
      return `Dead-letter queue: ${node.name} (topic: ${node.topic})`;
  }
}

/** A share as a percentage, with as many decimals as it takes not to round a share below 1 up to 100 %. */
function percent(x: number): string {
  let digits = 1;
  while (x < 1 && digits < 12 && Number((x * 100).toFixed(digits)) >= 100) digits++;
  return `${(x * 100).toFixed(digits)} %`;
}

/** The indented lines under a processor: retry arithmetic and outage guards. */
function processorDetails(node: NodeDescription): string[] {
  const lines: string[] = [];
  const a = node.retryArithmetic;
  if (a !== undefined) {
    const attempts = node.retry?.maxAttempts ?? 1;
    if (a.retryDelaysMs.length > 0) {
      const ranges = a.retryDelaysMs.map(
        (d) =>
          `#${d.retry}${d.throughRetry === undefined ? '' : `–#${d.throughRetry}`} ${d.minMs === d.maxMs ? `${d.minMs}` : `${d.minMs}–${d.maxMs}`}ms`,
      );
      lines.push(`retry delays: ${ranges.join(', ')}`);
      const note = a.attemptsBounded ? ' (attempts at their timeout)' : ' (plus the attempts themselves)';
      const worst = a.worstCaseToDeadLetterMs;
      const readable = worst >= 60_000 ? ` (about ${ms(worst, { long: true })})` : '';
      lines.push(`worst case from first failure to the DLQ: ${worst}ms${readable}${note}`);
    }
    const odds = a.successProbability.map((s) => `${percent(s.probability)} at p=${s.p}`).join(', ');
    lines.push(`P(success within ${attempts} attempt${attempts === 1 ? '' : 's'}): ${odds}`);
  }
  const cb = node.circuitBreaker;
  if (cb !== undefined)
    lines.push(
      `circuit breaker: opens at ${percent(cb.failureRateThreshold)} retriable failures of ≥ ${cb.minimumCalls} calls in ${cb.windowMs}ms; ` +
        `open ${cb.openMs}ms${cb.maxOpenMs > cb.openMs ? ` (doubling, ≤ ${cb.maxOpenMs}ms)` : ''}; ${cb.halfOpenCalls} half-open probe${cb.halfOpenCalls === 1 ? '' : 's'}`,
    );
  const ride = node.outageRideOut;
  if (ride !== undefined) {
    const min = ride.minOutageToDeadLetterMs;
    lines.push(
      `outages ridden out: up to ${min}ms${min >= 60_000 ? ` (about ${ms(min, { long: true })})` : ''} from the breaker opening ` +
        `(a longer one dead-letters the record taking every probe, at failed probe ${ride.deadLetterProbe})`,
    );
    if (ride.caveat !== undefined) lines.push(`warning: ${ride.caveat}`);
  }
  if (node.retryBudget !== undefined)
    lines.push(`retry budget: ${node.retryBudget.ratio} × first attempts + ${node.retryBudget.minPerSecond}/s, over 10 s`);
  if (node.timeoutMs !== undefined) lines.push(`attempt timeout: ${node.timeoutMs}ms`);
  return lines;
}

function edgeLabel(edge: EdgeDescription): string {
  if (edge.kind === 'record') return edge.to;
  if (edge.kind === 'retry' && edge.from === edge.to) return `${edge.to} (retry in place, backoff from ${edge.delayMs}ms)`;
  if (edge.kind === 'retry') return `${edge.to} (retry after ${edge.delayMs}ms)`;
  return `${edge.to} (${edge.kind})`;
}

function describeText(d: TopologyDescription): string {
  const lines = [
    `Topology: ${d.applicationId} (processing.guarantee: ${d.processingGuarantee}, commit.interval.ms: ${d.commitIntervalMs})`,
  ];
  for (const sub of d.subtopologies) {
    lines.push(`  Sub-topology: ${sub.id}`);
    for (const node of sub.nodes) {
      lines.push(`    ${nodeLine(node, sub.nodes.filter((n) => n.type === 'retry-tier').length)}`);
      if (node.type === 'processor') for (const detail of processorDetails(node)) lines.push(`      ${detail}`);
      const out = sub.edges.filter((e) => e.from === node.name);
      const into = sub.edges.filter((e) => e.to === node.name && e.from !== node.name);
      if (out.length > 0) lines.push(`      --> ${out.map(edgeLabel).join(', ')}`);
      if (into.length > 0) lines.push(`      <-- ${into.map((e) => e.from).join(', ')}`);
    }
  }
  return lines.join('\n');
}

function describeMermaid(d: TopologyDescription): string {
  const lines = ['flowchart LR'];
  for (const sub of d.subtopologies) {
    const ids = new Map(sub.nodes.map((n, i) => [n.name, `s${sub.id}n${i}`]));
    const label = (text: string): string => text.replace(/"/g, '#quot;');
    lines.push(`  subgraph sub${sub.id}["Sub-topology ${sub.id}"]`);
    for (const node of sub.nodes) {
      const id = ids.get(node.name)!;
      if (node.type === 'processor') lines.push(`    ${id}["${label(node.name)}"]`);
      else if (node.type === 'retry-tier') lines.push(`    ${id}[("${label(`${node.topic} (${node.delayMs}ms)`)}")]`);
      else lines.push(`    ${id}[("${label(node.topic ?? node.name)}")]`);
    }
    for (const edge of sub.edges) {
      const from = ids.get(edge.from)!;
      const to = ids.get(edge.to)!;
      if (edge.kind === 'record') lines.push(`    ${from} --> ${to}`);
      else if (edge.kind === 'retry') lines.push(`    ${from} -.->|"retry ${edge.delayMs}ms"| ${to}`);
      else lines.push(`    ${from} -->|${edge.kind}| ${to}`);
    }
    lines.push('  end');
  }
  return lines.join('\n');
}

/**
 * Describes a compiled topology: `'text'` like Kafka Streams' `TopologyDescription.toString()`,
 * `'json'` (a {@link TopologyDescription}), or a `'mermaid'` flowchart. Retry and DLQ edges
 * are shown in all three.
 */
export function describeTopology(topology: CompiledTopology, format: DescribeFormat = 'text'): string {
  const d = topologyDescription(topology);
  if (format === 'json') return JSON.stringify(d, null, 2);
  if (format === 'mermaid') return describeMermaid(d);
  return describeText(d);
}
