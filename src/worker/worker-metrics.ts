import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CIRCUIT_STATE_VALUE } from '../failure/circuit-breaker.js';
import type { ResilienceRegistry } from '../runtime/processor-resilience.js';
import type { TaskListener } from '../runtime/task-listener.js';
import type { HealthProbes } from './worker-health.js';

/** One task as the lag and task-state metrics see it. */
export interface TaskMetricsView {
  readonly topic: string;
  readonly partition: number;
  readonly state: string;
  /** The next offset the task will process (its fetch position minus what it buffered); absent while the task is being created. */
  readonly position?: number;
}

/**
 * Where the metrics read the tasks and log-end offsets from at each scrape (the worker). Lag is
 * the Kafka consumer's per-partition `records-lag` (KIP-92), which Kafka Streams reports too:
 * end offset minus position, here the next offset the task will process, so buffered records
 * count as lag.
 */
export interface LagSource {
  tasks(): readonly TaskMetricsView[];
  /** End offsets (the last stable offset, as read_committed readers see it) of `topics`, by topic and partition. */
  endOffsets(topics: readonly string[]): Promise<ReadonlyMap<string, ReadonlyMap<number, number>>>;
  /** Whether `topic` is a retry tier. */
  isRetryTier(topic: string): boolean;
}

/** A scrape waits at most this long for end offsets, ms; after it, lag keeps its previous values. */
const END_OFFSETS_TIMEOUT_MS = 2_000;

/** Histogram buckets, seconds: 1 ms … 10 s for attempts and commits, 5 ms … 10 min for end-to-end latency. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/**
 * The worker's Prometheus metrics (prom-client), served on `/metrics` when a port is given.
 * Names follow Prometheus conventions with a `weir_` prefix.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly records: Counter<'topic' | 'outcome'>;
  readonly deadLetters: Counter<'topic' | 'error_class'>;
  readonly commits: Counter<'topic'>;
  readonly portErrors: Counter<'port'>;
  readonly dedupSkipped: Counter;
  readonly rebalances: Counter;
  readonly tasks: Gauge;
  readonly circuitState: Gauge<'processor'>;
  readonly circuitTransitions: Counter<'processor' | 'from' | 'to'>;
  readonly retryBudgetTokens: Gauge<'processor'>;
  readonly retriesDelayed: Counter<'processor'>;
  readonly processDuration: Histogram<'topic' | 'outcome'>;
  readonly endToEndLatency: Histogram<'topic' | 'outcome'>;
  readonly commitDuration: Histogram<'topic'>;
  readonly lag: Gauge<'topic' | 'partition'>;
  readonly retryTierBacklog: Gauge<'topic'>;
  readonly taskState: Gauge<'topic' | 'partition' | 'state'>;
  private lagSource: LagSource | undefined;
  /** Per task: input timestamps of records decided since its last durable flush (for end-to-end latency). */
  private readonly undecided = new Map<string, Array<{ readonly timestampMs: number; readonly outcome: string }>>();
  private resilience: { readonly registry: ResilienceRegistry; readonly now: () => number } | undefined;
  private server: Server | undefined;

  constructor(labels: Record<string, string> = {}) {
    this.registry.setDefaultLabels(labels);
    collectDefaultMetrics({ register: this.registry, prefix: 'weir_process_' });
    const registers = [this.registry];
    this.records = new Counter({
      name: 'weir_records_total',
      help: 'Record outcomes by input topic: success, retry, dead-letter, duplicate',
      labelNames: ['topic', 'outcome'],
      registers,
    });
    this.deadLetters = new Counter({
      name: 'weir_dead_letters_total',
      help: 'Records sent to the dead-letter queue, by error class',
      labelNames: ['topic', 'error_class'],
      registers,
    });
    this.commits = new Counter({
      name: 'weir_commits_total',
      help: 'Offset commits (or committed transactions)',
      labelNames: ['topic'],
      registers,
    });
    this.portErrors = new Counter({
      name: 'weir_port_errors_total',
      help: 'Failed produce, commit, transaction and dedup-store calls (retried)',
      labelNames: ['port'],
      registers,
    });
    this.dedupSkipped = new Counter({
      name: 'weir_dedup_skipped_total',
      help: "Records processed without dedup because the store failed (onStoreError: 'skip-dedup')",
      registers,
    });
    this.rebalances = new Counter({ name: 'weir_rebalances_total', help: 'Consumer-group rebalances seen by this worker', registers });
    this.tasks = new Gauge({ name: 'weir_tasks', help: 'Tasks (assigned partitions) running', registers });
    const watched = () => this.resilience;
    this.circuitState = new Gauge({
      name: 'weir_circuit_state',
      help: 'Circuit breaker state per processor: 0 closed, 1 half-open, 2 open',
      labelNames: ['processor'],
      registers,
      collect() {
        for (const r of watched()?.registry.all() ?? [])
          if (r.breaker !== null) this.set({ processor: r.processor }, CIRCUIT_STATE_VALUE[r.breaker.state]);
      },
    });
    this.circuitTransitions = new Counter({
      name: 'weir_circuit_transitions_total',
      help: 'Circuit breaker state changes per processor',
      labelNames: ['processor', 'from', 'to'],
      registers,
    });
    this.retryBudgetTokens = new Gauge({
      name: 'weir_retry_budget_tokens',
      help: 'Retry-budget tokens available per processor (retries it may make now)',
      labelNames: ['processor'],
      registers,
      collect() {
        const w = watched();
        if (w === undefined) return;
        for (const r of w.registry.all()) if (r.budget !== null) this.set({ processor: r.processor }, r.budget.tokens(w.now()));
      },
    });
    this.retriesDelayed = new Counter({
      name: 'weir_retries_delayed_total',
      help: 'Retries that waited for a retry-budget token, per processor',
      labelNames: ['processor'],
      registers,
    });
    this.processDuration = new Histogram({
      name: 'weir_process_duration_seconds',
      help: 'Duration of one processing attempt (processor call, routing, serialization) by input topic and outcome',
      labelNames: ['topic', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.endToEndLatency = new Histogram({
      name: 'weir_end_to_end_latency_seconds',
      help: "Time from an input record's timestamp to its durable outcome (success, dead-letter, duplicate, retry-tier copy), by input topic",
      labelNames: ['topic', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.commitDuration = new Histogram({
      name: 'weir_commit_duration_seconds',
      help: 'Duration of a write that committed offsets: produce acks plus offset commit (at_least_once) or the whole transaction (exactly_once)',
      labelNames: ['topic'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const self = () => this;
    this.lag = new Gauge({
      name: 'weir_consumer_lag_records',
      help: 'Records not yet processed per assigned partition (sources and retry tiers): end offset minus the next offset to process',
      labelNames: ['topic', 'partition'],
      registers,
      async collect() {
        await self().collectLag();
      },
    });
    this.retryTierBacklog = new Gauge({
      name: 'weir_retry_tier_backlog_records',
      help: "Records waiting in a retry tier, summed over this worker's partitions of it",
      labelNames: ['topic'],
      registers,
    });
    this.taskState = new Gauge({
      name: 'weir_task_state',
      help: "Tasks by state: 1 for each task's current state (running, suspended, stopping, closed, fenced, creating)",
      labelNames: ['topic', 'partition', 'state'],
      registers,
      collect() {
        this.reset();
        for (const t of self().lagSource?.tasks() ?? []) this.set({ topic: t.topic, partition: String(t.partition), state: t.state }, 1);
      },
    });
  }

  /** Reads lag and task states from `source` at each scrape. */
  watchTasks(source: LagSource): void {
    this.lagSource = source;
  }

  private async collectLag(): Promise<void> {
    const source = this.lagSource;
    if (source === undefined) return;
    const tasks = source.tasks();
    const topics = [...new Set(tasks.map((t) => t.topic))];
    let timer: NodeJS.Timeout | undefined;
    const ends = await Promise.race([
      source.endOffsets(topics).catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), END_OFFSETS_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (ends === undefined) return;
    this.lag.reset();
    this.retryTierBacklog.reset();
    for (const t of tasks) {
      const end = ends.get(t.topic)?.get(t.partition);
      if (end === undefined || t.position === undefined) continue;
      const lag = Math.max(0, end - t.position);
      this.lag.set({ topic: t.topic, partition: String(t.partition) }, lag);
      if (source.isRetryTier(t.topic)) this.retryTierBacklog.inc({ topic: t.topic }, lag);
    }
    for (const topic of topics) if (source.isRetryTier(topic)) this.retryTierBacklog.inc({ topic }, 0);
  }

  /** Reports the circuit-breaker states and retry-budget tokens of `registry` at each scrape; `now` is the tasks' clock (epoch ms). */
  watchResilience(registry: ResilienceRegistry, now: () => number = Date.now): void {
    this.resilience = { registry, now };
  }

  /** A task listener that counts into these metrics. */
  listener(): TaskListener {
    return {
      onRecord: (e) => {
        this.records.inc({ topic: e.topic, outcome: e.outcome });
        if (e.outcome === 'dead-letter') this.deadLetters.inc({ topic: e.topic, error_class: e.errorClass ?? 'unknown' });
        if (e.durationMs !== undefined) this.processDuration.observe({ topic: e.topic, outcome: e.outcome }, e.durationMs / 1_000);
        // A retry in place is not an outcome yet (the record stays at the head); a retry-tier copy is.
        const final =
          e.outcome === 'success' ||
          e.outcome === 'dead-letter' ||
          e.outcome === 'duplicate' ||
          (e.outcome === 'retry' && e.retryTopic !== undefined);
        if (final && e.timestampMs !== undefined) {
          const list = this.undecided.get(e.task) ?? [];
          list.push({ timestampMs: e.timestampMs, outcome: e.outcome });
          this.undecided.set(e.task, list);
        }
      },
      onFlush: (e) => {
        if (e.committedOffset !== undefined) {
          this.commits.inc({ topic: e.topic });
          if (e.durationMs !== undefined) this.commitDuration.observe({ topic: e.topic }, e.durationMs / 1_000);
        }
        const now = Date.now();
        for (const r of this.undecided.get(e.task) ?? [])
          this.endToEndLatency.observe({ topic: e.topic, outcome: r.outcome }, Math.max(0, now - r.timestampMs) / 1_000);
        this.undecided.delete(e.task);
      },
      onClosed: (e) => void this.undecided.delete(e.task),
      onPortError: (e) => {
        this.portErrors.inc({ port: e.port });
        // An aborted transaction re-runs its records: they are decided again.
        if (e.port === 'transaction') this.undecided.delete(e.task);
      },
      onDedupSkipped: (e) => this.dedupSkipped.inc(e.records),
      onCircuitTransition: (t) => this.circuitTransitions.inc({ processor: t.processor, from: t.from, to: t.to }),
      onRetryDelayed: (e) => this.retriesDelayed.inc({ processor: e.processor }),
    };
  }

  /**
   * Serves `/metrics` on `port` of every interface (0 picks a free port), and with `probes`
   * also `/healthz` (liveness) and `/readyz` (readiness): JSON bodies, 200 or 503.
   *
   * @returns the port it listens on
   * @throws the `listen` error (e.g. `EADDRINUSE`) when the port cannot be had
   */
  async serve(port: number, probes?: HealthProbes): Promise<number> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (probes !== undefined && (path === '/healthz' || path === '/readyz')) {
        const { status, body } = path === '/healthz' ? probes.liveness() : probes.readiness();
        res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
        return;
      }
      if (path !== '/metrics') {
        res.writeHead(404).end(`not found; try /metrics${probes ? ', /healthz or /readyz' : ''}\n`);
        return;
      }
      this.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(body),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, resolve));
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
