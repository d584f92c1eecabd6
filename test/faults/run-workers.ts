/**
 * The workers of one run of the fault campaign, by name: started with the run's options, restarted
 * as a supervisor would when one exits on its own (a violation, unless it failed to reach the
 * broker at its start: the run's timeline says so), and stopped with their exit
 * checked (a SIGTERM that does not end in exit 0, or not within its shutdown bound, is a violation).
 */
import { waitFor } from '../../scripts/lib/wait-for.js';
import type { StartWorkerOptions, WorkerProcess } from '../../scripts/lib/worker-process.js';
import type { IntegrationFixture } from '../integration/support/integration-fixture.js';
import { SCRIPTED_TOPOLOGY } from '../integration/support/scripted-scenario.js';
import { COMMIT_INTERVAL_MS, MAX_ATTEMPTS, SESSION_TIMEOUT_MS, SHUTDOWN_TIMEOUT_MS, type RunPlan, type WorkerName } from './fault-plan.js';

/**
 * The dedup claims' TTL, ms: above the longest write a broker restart can hold up (the
 * documented bound), and far below a run, so windows that take longer than it to process — a
 * loaded machine, a zombie's partitions — exercise the check of the claims before each write.
 */
const CLAIM_TTL_MS = 120_000;

/** How long a worker may take to start its first task, ms: on a loaded 2-core machine eight runs' workers may take minutes to join. */
const TASK_STARTED_TIMEOUT_MS = 300_000;

/**
 * How long a SIGTERMed worker may take to exit, ms: its `--shutdown-timeout-ms`, which bounds its
 * graceful shutdown, and 30 s for a process that waits for a core on a loaded machine.
 */
const SIGTERM_EXIT_BOUND_MS = SHUTDOWN_TIMEOUT_MS + 30_000;

/** What {@link RunWorkers} needs of its run. */
export interface RunWorkersOptions {
  readonly fx: IntegrationFixture;
  readonly plan: RunPlan;
  readonly applicationId: string;
  readonly topics: { readonly source: string; readonly sink: string; readonly dlq: string };
  /** The run's own Redis (runs with dedup). */
  readonly redisUrl: string | undefined;
  /** The file whose absence makes the next `crash` record crash its thread. */
  readonly crashMarker: string;
  /** Where a violation goes (the run's list). */
  readonly violations: string[];
  /** The time since the run began, for a violation message. */
  since(): string;
  /** True while the broker is down (a worker that exited on its own is restarted once it is back). */
  brokerDown(): boolean;
  /** Adds an event to the run's timeline (a worker that failed to start and was started again). */
  note(what: string): void;
}

/**
 * The error message when `worker` never started a task and said it failed to start because the
 * broker did not answer in time, else undefined. `weir run` exits 1 then, by design: a supervisor
 * starts it again. On a 2-core machine running eight runs' workers and their broker, the broker
 * can take longer than the start's connection timeout to answer: that is the machine, not a
 * fault of the run.
 */
function failedToReachBroker(worker: WorkerProcess): string | undefined {
  if (worker.logs.some((l) => l.msg === 'task started')) return undefined;
  const failed = worker.logs.find((l) => l.msg === 'worker failed to start');
  const err = failed?.['err'] as { message?: unknown; type?: unknown } | undefined;
  const message = String(err?.message ?? '');
  // weir's own error for it (BrokerUnreachableError: "cannot reach Kafka at …"), or a client's
  // timeout or refused connection that reached the start unwrapped.
  if (err?.type === 'BrokerUnreachableError') return message;
  // librdkafka's own: 'Local: Broker transport failure' (the connection refused or dropped).
  return /timed out|unreachable|cannot reach Kafka|could not reach|ECONNREFUSED|transport failure/i.test(message) ? message : undefined;
}

/** A worker's last warnings and errors and its last non-JSON output, for a violation message. */
function lastWords(worker: WorkerProcess): string {
  const warnings = worker.logs
    .filter((l) => l.level >= 40)
    .slice(-4)
    .map((l) => `${l.msg}${l['err'] ? ` (${String((l['err'] as { message?: unknown }).message)})` : ''}`);
  // An uncaught error prints its stack over many lines: keep the error's own line and what follows.
  const output = worker.otherOutput;
  const thrown = output.findLastIndex((line) => /^\S*(Error|error)\b|^Uncaught|^node:|throw /.test(line));
  return `last warnings: ${JSON.stringify(warnings)}; other output: ${JSON.stringify(output.slice(thrown >= 0 ? Math.max(0, thrown - 2) : -3).slice(0, 8))}`;
}

/** The run's workers; see the file's comment. */
export class RunWorkers {
  /** Every worker the run started, in order (for the report). */
  readonly every: WorkerProcess[] = [];
  private readonly byName = new Map<WorkerName, WorkerProcess>();
  private readonly stopping = new Set<WorkerProcess>();
  /** Workers that failed to reach the broker at their start, and are started again. */
  private readonly restarted = new Set<WorkerProcess>();
  private finished = false;
  /** The `weir run` flags and environment of every worker of the run. */
  private readonly startOptions: StartWorkerOptions;

  constructor(private readonly options: RunWorkersOptions) {
    const { fx, plan, applicationId: id, topics, redisUrl, crashMarker: marker } = options;
    const { client, guarantee, dedup } = plan.config;
    this.startOptions = {
      args: [
        ...['--application-id', id, '--client', client, '--guarantee', guarantee, '--brokers', fx.brokers],
        ...['--commit-interval-ms', String(COMMIT_INTERVAL_MS[guarantee]), '--session-timeout-ms', String(SESSION_TIMEOUT_MS)],
        ...['--heartbeat-interval-ms', '1000', '--transaction-timeout-ms', '10000', '--shutdown-timeout-ms', String(SHUTDOWN_TIMEOUT_MS)],
        ...['--threads', String(plan.threads)],
        ...(redisUrl ? ['--redis-url', redisUrl] : []),
      ],
      env: {
        WEIR_TEST_SOURCE: topics.source,
        WEIR_TEST_SINK: topics.sink,
        WEIR_TEST_DLQ: topics.dlq,
        WEIR_TEST_DEDUP: dedup ? 'redis' : 'off',
        // docs/guarantees.md: keep claimTtlMs above the time one write can take (a broker outage).
        WEIR_TEST_CLAIM_TTL_MS: String(CLAIM_TTL_MS),
        WEIR_TEST_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        WEIR_TEST_BACKOFF_MS: '5',
        WEIR_TEST_RETRY_MODE: plan.retryMode,
        WEIR_TEST_RECORD_DELAY_MS: '10',
        WEIR_TEST_CRASH_MARKER: marker,
        ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      },
    };
  }

  /** The running worker `name`. */
  get(name: WorkerName): WorkerProcess {
    return this.byName.get(name)!;
  }

  /** The names of the running workers. */
  names(): WorkerName[] {
    return [...this.byName.keys()];
  }

  /** The running workers. */
  running(): WorkerProcess[] {
    return [...this.byName.values()];
  }

  /** The run is done with its workers: one that exits from now on is neither a violation nor restarted. */
  finish(): void {
    this.finished = true;
  }

  /** Starts worker `name` (in place of the one of that name, if any). */
  start(name: WorkerName): WorkerProcess {
    const { fx, violations } = this.options;
    const worker = fx.startWorker(SCRIPTED_TOPOLOGY, this.startOptions);
    this.every.push(worker);
    this.byName.set(name, worker);
    // Once its output is read to the end: its last lines say why it exited.
    void worker.closed.then((code) => {
      if (this.stopping.has(worker) || this.finished) return;
      const unreachable = code === 1 ? failedToReachBroker(worker) : undefined;
      if (unreachable !== undefined) {
        this.restarted.add(worker);
        this.options.note(`worker ${name} (pid ${worker.child.pid}) failed to start (${unreachable}); started again`);
      } else
        violations.push(
          `worker ${name} (pid ${worker.child.pid}) exited on its own (${code}) at ${this.options.since()}; ${lastWords(worker)}`,
        );
      // Restarted as a supervisor would, once the broker is back (a start without a broker exits 1).
      if (name !== 'c' || unreachable !== undefined)
        void waitFor(
          () => !this.options.brokerDown(),
          600_000,
          () => 'the broker is down',
        ).then(() => this.finished || this.byName.get(name) !== worker || this.start(name));
    });
    return worker;
  }

  /**
   * Resolves once worker `name` started a task, following it to the worker started in its place
   * when it failed to reach the broker at its start.
   *
   * @throws when no task started within `timeoutMs`, or the worker exited otherwise
   */
  async taskStarted(name: WorkerName, timeoutMs = TASK_STARTED_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const worker = this.get(name);
      try {
        await worker.waitForLog((l) => l.msg === 'task started', Math.max(1, deadline - Date.now()));
        return;
      } catch (error) {
        // The worker exited: let its exit be judged (the handler in start) before asking whether it is started again.
        if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
          await worker.closed;
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (!this.restarted.has(worker)) throw error;
        await waitFor(
          () => this.finished || this.byName.get(name) !== worker,
          Math.max(1, deadline - Date.now()),
          () => `worker ${name} failed to start and was not started again`,
        );
        if (this.finished) throw error;
      }
    }
  }

  /** Stops a worker the campaign means to stop; a SIGTERM that does not end in exit 0 within {@link SIGTERM_EXIT_BOUND_MS} is a violation. */
  async stop(name: WorkerName, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const worker = this.get(name);
    const alive = worker.child.exitCode === null && worker.child.signalCode === null;
    this.stopping.add(worker);
    this.byName.delete(name);
    // One that exited on its own before is a violation already (and is being restarted).
    if (!alive || signal === 'SIGKILL') {
      await worker.stop(signal);
      return;
    }
    const at = this.options.since();
    worker.child.kill('SIGTERM');
    let code: number | string;
    try {
      code = await worker.exitWithin(SIGTERM_EXIT_BOUND_MS);
    } catch {
      // A worker that outlives its own shutdown bound would hold the run (and the campaign) up to
      // the round's timeout: it is a violation of its own, and it is SIGKILLed.
      this.options.violations.push(
        `SIGTERM of worker ${name} (pid ${worker.child.pid}) at ${at} did not end it within ${SIGTERM_EXIT_BOUND_MS / 1000} s ` +
          `(--shutdown-timeout-ms ${SHUTDOWN_TIMEOUT_MS}); SIGKILLed; ${lastWords(worker)}`,
      );
      await worker.stop('SIGKILL');
      return;
    }
    if (code !== 0)
      this.options.violations.push(
        `SIGTERM of worker ${name} (pid ${worker.child.pid}) at ${at} ended in ${code}, not 0; ${lastWords(worker)}`,
      );
  }
}
