import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { CIRCUIT_STATE_VALUE } from '../failure/circuit-breaker.js';
import type { ResilienceRegistry } from '../runtime/processor-resilience.js';
import type { TaskListener } from '../runtime/task-listener.js';
import type { HealthProbes } from './worker-health.js';

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
      },
      onFlush: (e) => {
        if (e.committedOffset !== undefined) this.commits.inc({ topic: e.topic });
      },
      onPortError: (e) => this.portErrors.inc({ port: e.port }),
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
