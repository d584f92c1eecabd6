import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CIRCUIT_STATE_VALUE } from '../failure/circuit-breaker.js';
import type { MetricsRecordingLevel } from '../config/metrics-recording-level.js';
import type { ResilienceRegistry } from '../runtime/processor-resilience.js';
import type { TaskListener } from '../runtime/task-listener.js';
import { countMetricEvent, metricEventListener, type MetricEvent } from './metric-events.js';
import type { LagSource, TaskMetricsView } from './lag-source.js';
import type { Exposition } from './metrics-server.js';

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
  /**
   * `weir_records_total`: record outcomes by input topic. `success`, `dead-letter` and
   * `duplicate` are counted when durable — their outputs acknowledged (at_least_once) or their
   * transaction committed (exactly_once) — so after a drain the successes equal the records the
   * sinks got (replays included: a replayed record is counted again, as its sink has it again).
   * One exception: a stream thread that dies while a write is in flight may leave that write's
   * records in the sinks uncounted. `retry` and `held` count failed attempts as they happen.
   */
  readonly records: Counter<'topic' | 'outcome'>;
  readonly deadLetters: Counter<'topic' | 'error_class'>;
  readonly commits: Counter<'topic'>;
  readonly portErrors: Counter<'port'>;
  readonly dedupSkipped: Counter;
  readonly rebalances: Counter<'thread'>;
  readonly tasks: Gauge<'thread'>;
  readonly circuitState: Gauge<'processor' | 'thread'>;
  readonly circuitTransitions: Counter<'processor' | 'from' | 'to'>;
  readonly retryBudgetTokens: Gauge<'processor' | 'thread'>;
  readonly retriesDelayed: Counter<'processor'>;
  /** `weir_process_duration_seconds`, per attempt: recording level `debug` only (absent under `info`). */
  readonly processDuration: Histogram<'topic' | 'outcome'> | undefined;
  readonly endToEndLatency: Histogram<'topic' | 'outcome'>;
  readonly commitDuration: Histogram<'topic'>;
  readonly lag: Gauge<'topic' | 'partition'>;
  readonly retryTierBacklog: Gauge<'topic'>;
  readonly taskState: Gauge<'topic' | 'partition' | 'state' | 'thread'>;
  /** `weir_parked_keys` / `weir_parked_records`: what `order: 'key'` tasks hold back, per partition. */
  readonly parkedKeys: Gauge<'topic' | 'partition' | 'thread'>;
  readonly parkedRecords: Gauge<'topic' | 'partition' | 'thread'>;
  /** `weir_parked_full`: 1 while an `order: 'key'` task is at `maxParkedKeys` (its partition pauses). */
  readonly parkedFull: Gauge<'topic' | 'partition' | 'thread'>;
  private lagSource: LagSource | undefined;
  private resilience: { readonly registry: ResilienceRegistry; readonly now: () => number } | undefined;
  /** The `thread` label of the metrics that are one stream thread's state; none in a one-thread process. */
  private readonly thread: { readonly thread?: string };
  /** Where counter and histogram changes go: counted here, or forwarded (a stream thread's to its process). */
  private readonly emit: (event: MetricEvent) => void;

  /**
   * @param labels labels of every metric (`application_id`)
   * @param options `thread`: the stream thread these metrics count (a label on the metrics of
   *   one thread's state: tasks, rebalances, task states, circuit breakers, retry budgets; the
   *   rest are summed over the process's threads); `processMetrics`: also collect Node's process
   *   metrics (`weir_process_*`; default true — once per process, so a stream thread does not);
   *   `forward`: counter and histogram changes are not counted here but passed to it (a stream
   *   thread posts them to its process, which counts them with {@link count}), so this registry
   *   keeps only the gauges; `recordingLevel`: Kafka Streams' `metrics.recording.level` (default
   *   `info`, see {@link MetricsRecordingLevel}) — a stream thread's and its process's must agree
   */
  constructor(
    labels: Record<string, string> = {},
    options: {
      readonly thread?: string;
      readonly processMetrics?: boolean;
      readonly forward?: (event: MetricEvent) => void;
      readonly recordingLevel?: MetricsRecordingLevel;
    } = {},
  ) {
    this.registry.setDefaultLabels(labels);
    this.thread = options.thread === undefined ? {} : { thread: options.thread };
    this.emit = options.forward ?? ((event) => this.count(event));
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'weir_process_' });
    const registers = [this.registry];
    this.records = new Counter({
      name: 'weir_records_total',
      help: 'Record outcomes by input topic: success, dead-letter and duplicate once durable (outputs acknowledged or transaction committed); retry and held per failed attempt',
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
    this.rebalances = new Counter({
      name: 'weir_rebalances_total',
      help: 'Consumer-group rebalances seen by this worker (by stream thread)',
      labelNames: ['thread'],
      registers,
    });
    this.tasks = new Gauge({
      name: 'weir_tasks',
      help: 'Tasks (assigned partitions) running (by stream thread)',
      labelNames: ['thread'],
      registers,
    });
    const thread = this.thread;
    const watched = () => this.resilience;
    this.circuitState = new Gauge({
      name: 'weir_circuit_state',
      help: 'Circuit breaker state per processor (and stream thread): 0 closed, 1 half-open, 2 open',
      labelNames: ['processor', 'thread'],
      registers,
      collect() {
        for (const r of watched()?.registry.all() ?? [])
          if (r.breaker !== null) this.set({ processor: r.processor, ...thread }, CIRCUIT_STATE_VALUE[r.breaker.state]);
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
      help: 'Retry-budget tokens available per processor (and stream thread): retries it may make now',
      labelNames: ['processor', 'thread'],
      registers,
      collect() {
        const w = watched();
        if (w === undefined) return;
        for (const r of w.registry.all()) if (r.budget !== null) this.set({ processor: r.processor, ...thread }, r.budget.tokens(w.now()));
      },
    });
    this.retriesDelayed = new Counter({
      name: 'weir_retries_delayed_total',
      help: 'Retries that waited for a retry-budget token, per processor',
      labelNames: ['processor'],
      registers,
    });
    this.processDuration =
      options.recordingLevel !== 'debug'
        ? undefined
        : new Histogram({
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
      labelNames: ['topic', 'partition', 'state', 'thread'],
      registers,
      collect() {
        this.reset();
        for (const t of self().lagSource?.tasks() ?? [])
          this.set({ topic: t.topic, partition: String(t.partition), state: t.state, ...thread }, 1);
      },
    });
    const parkedGauge = (name: string, help: string, of: (p: NonNullable<TaskMetricsView['parked']>) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['topic', 'partition', 'thread'],
        registers,
        collect() {
          this.reset();
          for (const t of self().lagSource?.tasks() ?? [])
            if (t.parked !== undefined) this.set({ topic: t.topic, partition: String(t.partition), ...thread }, of(t.parked));
        },
      });
    this.parkedKeys = parkedGauge(
      'weir_parked_keys',
      "Keys an order: 'key' task holds records of (a failed record waits at its task, its key's later records behind it)",
      (p) => p.keys,
    );
    this.parkedRecords = parkedGauge(
      'weir_parked_records',
      "Records an order: 'key' task holds back: failed ones and those waiting behind them",
      (p) => p.records,
    );
    this.parkedFull = parkedGauge(
      'weir_parked_full',
      "1 while an order: 'key' task is at maxParkedKeys: it takes no new record and its partition pauses",
      (p) => (p.full ? 1 : 0),
    );
  }

  /** Counts a rebalance of this worker's group. */
  countRebalance(): void {
    this.emit({ kind: 'rebalance' });
  }

  /** Sets how many tasks (assigned partitions) this worker runs. */
  setTasks(count: number): void {
    this.tasks.set(this.thread, count);
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

  /**
   * A task listener that counts into these metrics — or, with `forward`, passes each change to
   * it — one event per poll and per flush (see {@link MetricEvent}), not one per record.
   */
  listener(): TaskListener {
    return metricEventListener(this.emit, this.processDuration !== undefined);
  }

  /**
   * Counts one change: an event of this worker, or (`thread`) one a stream thread posted to its
   * process. See {@link COUNTED_WHEN_DURABLE} for when record outcomes are counted.
   */
  count(event: MetricEvent, thread: string | undefined = this.thread.thread): void {
    countMetricEvent(this, event, thread);
  }

  /** The metrics as Prometheus text, for a `MetricsServer`. */
  async exposition(): Promise<Exposition> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
