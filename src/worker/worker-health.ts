import { performance } from 'node:perf_hooks';
import type { HealthProbes, ProbeResult } from '../observability/health-probes.js';
import type { PortName } from '../runtime/ports.js';
import type { TaskListener } from '../runtime/task-listener.js';
import type { TaskStateKind } from '../runtime/task-state.js';
import type { WorkerState } from './worker-state.js';

/** Period of the event-loop ticker, ms. */
const TICK_MS = 50;

/** One task as the health endpoints and `weir status` list it. */
export interface TaskHealth {
  /** `<topic>-<partition>`. */
  readonly task: string;
  readonly topic: string;
  readonly partition: number;
  /** The task's state, or `'creating'` while its producer and start offset are being set up. */
  readonly state: TaskStateKind | 'creating';
  /** Since when the task has been retrying a failed port call (epoch ms), if it is. */
  readonly portRetry?: { readonly port: PortName; readonly sinceMs: number };
}

/** What the worker tells its {@link WorkerHealth} at each probe. */
export interface WorkerHealthSnapshot {
  readonly state: WorkerState;
  /** Whether a replacement consumer is being started (state `restarting-consumer`). */
  readonly consumerRestarting: boolean;
  readonly groupId: string;
  /** The group member id of the current consumer; undefined before it joined. */
  readonly memberId: string | undefined;
  /** This member's assignments so far (0 before the first), not the group coordinator's generation id. */
  readonly generation: number;
  /** Assigned partitions, with their tasks' states. */
  readonly tasks: readonly Omit<TaskHealth, 'portRetry'>[];
}

/** Limits of {@link WorkerHealth}, ms. */
export interface WorkerHealthOptions {
  /** The event loop is stalled when a timer fires this much late (largest delay since the last probe). */
  readonly eventLoopStallMs: number;
  /** A task retrying a failed port call (produce, commit, transaction, dedup store) longer than this fails liveness. */
  readonly stuckTaskMs: number;
  /** Wall clock, epoch ms (default Date.now). */
  readonly now?: () => number;
}

/**
 * Liveness and readiness of a worker, in the spirit of Spring Boot's health groups and Kafka
 * Streams' `KafkaStreams.State` (`RUNNING` ready, `REBALANCING` not):
 *
 * - **readiness** (`/readyz`): 200 only when the worker is `running` — it joined the group and
 *   every assigned partition has a running task; 503 while starting, during a rebalance, while a
 *   crashed consumer is replaced and during shutdown.
 * - **liveness** (`/healthz`): 503 when the event loop stalled longer than `eventLoopStallMs`
 *   since the previous probe, when the consumer stopped and is not being replaced, or when a task
 *   has been retrying a port call for longer than `stuckTaskMs`. Restarting the process is the cure
 *   for each; a rebalance or a start is not.
 *
 * Both bodies list every task with its state. Call {@link close} to stop the event-loop monitor.
 */
export class WorkerHealth implements HealthProbes {
  private readonly ticker: NodeJS.Timeout;
  /** Largest lateness of the ticker since the last liveness probe, ms. */
  private maxDelayMs = 0;
  private readonly portRetries = new Map<string, { port: PortName; sinceMs: number }>();
  private readonly now: () => number;

  constructor(
    private readonly snapshot: () => WorkerHealthSnapshot,
    private readonly options: WorkerHealthOptions,
  ) {
    this.now = options.now ?? Date.now;
    // A timer that should fire every TICK_MS: how late it fires is how long the loop was blocked
    // (perf_hooks' monitorEventLoopDelay under-reports a single long block on Node 20).
    let last = performance.now();
    this.ticker = setInterval(() => {
      const at = performance.now();
      this.maxDelayMs = Math.max(this.maxDelayMs, at - last - TICK_MS);
      last = at;
    }, TICK_MS).unref();
  }

  /** A task listener that tracks which tasks are retrying port calls, and since when. */
  listener(): TaskListener {
    const recovered = (e: { readonly task: string }): void => void this.portRetries.delete(e.task);
    return {
      onPortError: (e) => {
        if (!this.portRetries.has(e.task)) this.portRetries.set(e.task, { port: e.port, sinceMs: this.now() });
      },
      onFlush: recovered,
      onRecords: recovered,
      onClosed: recovered,
    };
  }

  private tasks(s: WorkerHealthSnapshot): TaskHealth[] {
    return s.tasks.map((t) => {
      const retry = this.portRetries.get(t.task);
      return retry === undefined ? t : { ...t, portRetry: retry };
    });
  }

  readiness(): ProbeResult {
    const s = this.snapshot();
    const tasks = this.tasks(s);
    const waiting = tasks.filter((t) => t.state !== 'running').map((t) => t.task);
    const ready = s.state === 'running' && waiting.length === 0;
    const reason = ready
      ? undefined
      : s.state !== 'running'
        ? `worker is ${s.state}`
        : `tasks not running yet: ${waiting.slice(0, 10).join(', ')}${waiting.length > 10 ? ', …' : ''}`;
    return {
      status: ready ? 200 : 503,
      body: {
        status: ready ? 'ready' : 'not ready',
        ...(reason !== undefined ? { reason } : {}),
        state: s.state,
        groupId: s.groupId,
        memberId: s.memberId ?? null,
        generation: s.generation,
        tasks,
      },
    };
  }

  liveness(): ProbeResult {
    const s = this.snapshot();
    const now = this.now();
    const tasks = this.tasks(s);
    const maxDelayMs = Math.round(this.maxDelayMs);
    this.maxDelayMs = 0;
    const problems: string[] = [];
    if (maxDelayMs > this.options.eventLoopStallMs)
      problems.push(`event loop stalled for ${maxDelayMs} ms (limit ${this.options.eventLoopStallMs} ms)`);
    if (s.state === 'stopped' || (s.state === 'restarting-consumer' && !s.consumerRestarting))
      problems.push(`consumer stopped and not being replaced (worker ${s.state})`);
    const stuck = tasks.filter((t) => t.portRetry !== undefined && now - t.portRetry.sinceMs > this.options.stuckTaskMs);
    for (const t of stuck)
      problems.push(
        `task ${t.task} retrying ${t.portRetry!.port} for ${now - t.portRetry!.sinceMs} ms (limit ${this.options.stuckTaskMs} ms)`,
      );
    return {
      status: problems.length === 0 ? 200 : 503,
      body: {
        status: problems.length === 0 ? 'ok' : 'unhealthy',
        ...(problems.length > 0 ? { problems } : {}),
        state: s.state,
        memberId: s.memberId ?? null,
        eventLoopMaxDelayMs: maxDelayMs,
        tasks,
      },
    };
  }

  /** Stops the event-loop monitor. */
  close(): void {
    clearInterval(this.ticker);
  }
}
