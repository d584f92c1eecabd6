import { TopologyError } from '../errors.js';
import type { ProcessOptions, RetryOptions } from './process-options.js';
import type { ProcessorFn } from './processor.js';
import type { SerdeSpec } from './serdes.js';
import type { SinkSpec } from './sink.js';

const TOPOLOGY_BRAND = Symbol.for('weir.topology-builder');

/** `processing.guarantee`, as in Kafka Streams. */
export type ProcessingGuarantee = 'at_least_once' | 'exactly_once';

/** Topology-wide settings. */
export interface TopologyOptions {
  /** `application.id`: the consumer group id and the transactional-id prefix. */
  readonly applicationId: string;
  /** Default `'at_least_once'`. */
  readonly processingGuarantee?: ProcessingGuarantee;
  /** `commit.interval.ms`: default 100 under exactly_once, 1000 under at_least_once. */
  readonly commitIntervalMs?: number;
}

/** Key and value serdes of a source. A bare spec sets the value serde (key: `'string'`). */
export type SourceSerdes = SerdeSpec | { readonly key?: SerdeSpec; readonly value?: SerdeSpec };

/** A view of one processor output, as success-branch predicates see it. */
export interface OutputView<O = unknown> {
  readonly key: unknown;
  readonly value: O;
  readonly headers: Readonly<Record<string, string>>;
}

/** One success branch: outputs for which `when` holds (or all, without `when`) go `to` a sink. */
export interface SuccessRoute<O = unknown> {
  readonly when?: (output: OutputView<O>) => boolean;
  readonly to: SinkSpec | string;
}

/**
 * A multicast success branch: every output goes to every sink listed, as repeated `to()` calls
 * on one stream do in Kafka Streams (`stream.to('a'); stream.to('b')`). Each sink gets its own
 * copy, serialized with that sink's serdes; a record's copies are written all or none (under
 * exactly_once, in the transaction of the input's offset).
 *
 * @example
 * .branch({ success: { all: [sink('orders.audit'), sink('orders.enriched')] } })
 */
export interface MulticastSpec {
  /** The sinks, each topic at most once; at least one. */
  readonly all: ReadonlyArray<SinkSpec | string>;
}

/**
 * The outcome branches of a processor, as in Kafka Streams' `split()`/`branch()`:
 * - `success`: a sink (or topic name); a list of routes tried in order — the first route
 *   whose `when` holds takes the output (Kafka Streams' `split()`: first match); a route without
 *   `when` is the default branch; or `{ all: [...] }`, every sink takes every output (multicast,
 *   Kafka Streams' repeated `to()`, see {@link MulticastSpec}). An output that matches no route
 *   is dead-lettered (`NoMatchingBranchError`), never dropped.
 * - `retry`: the retry policy, if not given in the process options (not both).
 * - `dlq`: the dead-letter sink; default topic `<application.id>.<processor>.dlq`.
 */
export interface BranchSpec<O = unknown> {
  readonly success: SinkSpec | string | ReadonlyArray<SinkSpec | string | SuccessRoute<O>> | MulticastSpec;
  readonly retry?: RetryOptions;
  readonly dlq?: SinkSpec | string;
}

/** A step after the first of a processor chain, as the builder recorded it. */
export interface ChainStepDefinition {
  readonly name: unknown;
  readonly fn: unknown;
  readonly options: unknown;
  /** The step it was chained to (its builder's processor name). */
  readonly after: unknown;
  /** Chained to a processor whose `branch()` was already declared (a step after a terminal branch). */
  readonly afterBranch: boolean;
}

/** Plain description of one source → process → branch chain, as the builder recorded it. */
export interface SubtopologyDefinition {
  readonly sourceTopic: unknown;
  readonly sourceName?: unknown;
  readonly sourceSerdes?: unknown;
  processorName?: unknown;
  processorFn?: unknown;
  processOptions?: unknown;
  /** The steps after the first, in the order `.process()` was called. */
  chain?: ChainStepDefinition[];
  branch?: unknown;
}

/** Plain description of a whole topology, as the builder recorded it; `compile()` validates it. */
export interface TopologyDefinition {
  readonly options: unknown;
  readonly subtopologies: SubtopologyDefinition[];
}

interface Branded {
  readonly [TOPOLOGY_BRAND]: TopologyDefinition;
}

/** The fluent topology builder; a topology file default-exports it. */
export class TopologyBuilder implements Branded {
  readonly [TOPOLOGY_BRAND]: TopologyDefinition;

  constructor(definition: TopologyDefinition) {
    this[TOPOLOGY_BRAND] = definition;
  }

  /**
   * Adds a source topic and starts a new sub-topology.
   *
   * @param topic the input topic
   * @param serdes value serde, or `{ key, value }`; default key `'string'`, value `'json'`
   */
  source<K = string | null, V = unknown>(
    topic: string,
    serdes?: SourceSerdes,
    options: { readonly name?: string } = {},
  ): SourceBuilder<K, V> {
    const sub: SubtopologyDefinition = { sourceTopic: topic, sourceName: options.name, sourceSerdes: serdes };
    this[TOPOLOGY_BRAND].subtopologies.push(sub);
    return new SourceBuilder<K, V>(this, sub);
  }

  /**
   * Not a step of a topology: `branch()` ends its chain. Typed `never` so TypeScript flags the
   * call; in plain JavaScript the step is recorded after the last sub-topology's branch, and
   * `compile()` rejects it naming the step (a step after a terminal branch).
   */
  process(name: never, fn: never, options?: never): never {
    const subs = this[TOPOLOGY_BRAND].subtopologies;
    const last = subs[subs.length - 1];
    if (last === undefined) throw new TopologyError(String(name), '.process() needs a source before it: .source(topic).process(name, fn)');
    const after = lastStepName(last);
    (last.chain ??= []).push({ name, fn, options, after, afterBranch: true });
    return new ProcessorBuilder<unknown>(this, last, name) as never;
  }
}

function lastStepName(sub: SubtopologyDefinition): unknown {
  const chain = sub.chain ?? [];
  return chain.length === 0 ? sub.processorName : chain[chain.length - 1]!.name;
}

/** A source whose processor is still to be declared. */
export class SourceBuilder<K, V> implements Branded {
  readonly [TOPOLOGY_BRAND]: TopologyDefinition;

  constructor(
    private readonly root: TopologyBuilder,
    private readonly sub: SubtopologyDefinition,
  ) {
    this[TOPOLOGY_BRAND] = root[TOPOLOGY_BRAND];
  }

  /**
   * Declares the processor of this source.
   *
   * @param name unique node name; also used in retry-topic and DLQ topic names
   * @param fn the processor function
   * @param options retry policy, error classification, dedup
   */
  process<O>(name: string, fn: ProcessorFn<K, V, O>, options: ProcessOptions = {}): ProcessorBuilder<O> {
    this.sub.processorName = name;
    this.sub.processorFn = fn;
    this.sub.processOptions = options;
    return new ProcessorBuilder<O>(this.root, this.sub, name);
  }

  /**
   * Not a step of a source: a source needs its processor first (`.process(name, fn)`), and the
   * branches belong to it. Typed `never` so TypeScript flags the call; plain JavaScript gets a
   * clear error instead of "branch is not a function".
   *
   * @throws TopologyError naming the source topic, always
   */
  branch(_spec: never): never {
    throw new TopologyError(
      String(this.sub.sourceName ?? this.sub.sourceTopic),
      ".branch() needs a processor before it: .source(topic).process('name', fn).branch({ success: sink(topic) })",
    );
  }
}

/** A processor whose branches (or next step) are still to be declared. */
export class ProcessorBuilder<O> implements Branded {
  readonly [TOPOLOGY_BRAND]: TopologyDefinition;

  constructor(
    private readonly root: TopologyBuilder,
    private readonly sub: SubtopologyDefinition,
    private readonly processor: unknown,
  ) {
    this[TOPOLOGY_BRAND] = root[TOPOLOGY_BRAND];
  }

  /**
   * Chains one more processor (a step) in the same task, like Kafka Streams'
   * `stream.process(a).process(b)`: it gets this step's output — its return value, or the one
   * output it forwarded — as its record (same key unless the output set one, same timestamp,
   * headers plus the output's). A step that returns `undefined` forwards nothing: the record
   * ends there (a filter). A step before the last may forward at most one output.
   *
   * Each step has its own options — retry, classify, circuitBreaker, retryBudget, timeoutMs, its
   * `dlq` (default `<application.id>.<name>.dlq`) and the `inputSerdes` its input is written with
   * when it waits in one of its retry tiers or lands in its DLQ (default: the source's key serde,
   * value `'json'`). A record that fails at a step is retried at that step with the previous
   * step's output, never from the source (see docs/retry-and-dlq.md, "Chains").
   *
   * @param name unique node name; also used in this step's retry-topic and DLQ topic names
   * @example
   * .source('orders', 'json')
   * .process('parse', parse, { retry: { maxAttempts: 1 } })
   * .process('enrich', enrich, { retry: { mode: 'topics', maxAttempts: 4 } })
   * .branch({ success: sink('orders.enriched') })
   */
  process<P>(name: string, fn: ProcessorFn<any, O, P>, options: ProcessOptions = {}): ProcessorBuilder<P> {
    (this.sub.chain ??= []).push({ name, fn, options, after: this.processor, afterBranch: this.sub.branch !== undefined });
    return new ProcessorBuilder<P>(this.root, this.sub, name);
  }

  /** Declares where outcomes go. Returns the topology builder, to add more sources. */
  branch(spec: BranchSpec<O>): TopologyBuilder {
    this.sub.branch = spec;
    return this.root;
  }
}

/**
 * Starts a topology.
 *
 * @param options the `application.id`, or the topology-wide settings
 * @example
 * export default topology({ applicationId: 'orders-enricher' })
 *   .source('orders', 'json')
 *   .process('enrich', enrich, { retry: { maxAttempts: 5 } })
 *   .branch({ success: sink('orders.enriched'), dlq: sink('orders.dlq') });
 */
export function topology(options: string | TopologyOptions): TopologyBuilder {
  const opts = typeof options === 'string' ? { applicationId: options } : options;
  return new TopologyBuilder({ options: opts, subtopologies: [] });
}

/**
 * The definition behind any builder object (also one made by another copy of weir), or
 * `undefined` when the value is not a weir builder.
 */
export function topologyDefinitionOf(value: unknown): TopologyDefinition | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const def = (value as Record<symbol, unknown>)[TOPOLOGY_BRAND];
  return def === undefined ? undefined : (def as TopologyDefinition);
}
