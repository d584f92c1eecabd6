import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { CappedBackoff } from '../failure/capped-backoff.js';
import type { LogSink } from './logger.js';
import type { Exposition } from './metrics-server.js';
import type { FromThread, StreamThreadData, ToThread } from './stream-thread-protocol.js';
import { ThreadMetricsHistory, type MetricsSnapshot } from './thread-metrics-history.js';
import type { HealthProbes, ProbeResult } from './worker-health.js';
import type { WorkerMetrics } from './worker-metrics.js';

/** How long a probe or a metrics scrape waits for a thread's answer, ms. */
const ANSWER_TIMEOUT_MS = 3_000;
/** A replaced thread that ran this long resets the replacement backoff, ms. */
const STABLE_AFTER_MS = 60_000;

/** Why the stream threads could not start: what `weir run` exits with and prints. */
export class StreamThreadsStartError extends Error {
  constructor(
    readonly exitCode: number,
    readonly lines: readonly string[],
  ) {
    super(lines[0] ?? 'a stream thread could not start');
  }
}

/** Options of {@link StreamThreads}. */
export interface StreamThreadsOptions {
  /** The thread's entry module (it calls `hostStreamThread`). */
  readonly entry: URL;
  /** What every thread is started with; each gets its own `thread` number. */
  readonly data: Omit<StreamThreadData, 'thread'>;
  /** The process's logger, for what the process itself reports. */
  readonly logger: Logger;
  /** The process's log stream: the threads' lines are written here. */
  readonly sink: LogSink;
  /** The process's metrics (Node's process metrics); the threads' are added to them. */
  readonly metrics: WorkerMetrics;
}

type SlotState = 'starting' | 'running' | 'replacing' | 'stopping' | 'stopped';

/** One stream thread's place: the thread running in it now, and its state. */
interface Slot {
  readonly thread: number;
  /** Its worker gave up for good: it is not replaced. */
  dead?: boolean;
  current: Thread | undefined;
  state: SlotState;
  startedAt: number;
  readonly backoff: CappedBackoff;
  /** Settles the first start of this slot (the process's start waits for every slot). */
  onStart?: (failure?: StreamThreadsStartError) => void;
  /** Requests waiting for this thread's answer, by id. */
  readonly waiting: Map<number, (message: FromThread) => void>;
}

/**
 * A process of `n` stream threads, as Kafka Streams runs `num.stream.threads`: each thread
 * (`node:worker_threads`) loads the topology file and runs its own consumer-group member, with
 * its own tasks and producers. The process stays one unit for its operator:
 *
 * - one log stream: every thread's lines (each naming its `thread`) go to the process's sink;
 * - one `/metrics`: the process's metrics and every thread's, aggregated with prom-client's
 *   `AggregatorRegistry` (counters and histograms summed over threads, and kept when a thread
 *   is replaced or misses a scrape, see {@link ThreadMetricsHistory}; a thread's own state —
 *   tasks, rebalances, task states, breakers, budgets — labelled with its `thread`);
 * - one `/healthz` and `/readyz`: ready when every thread is; live unless a thread is not (or
 *   does not answer within 3 s: its event loop is blocked);
 * - one shutdown: `stop()` stops every thread, each committing what it did;
 * - one start: `start()` resolves when every thread joined its group, and fails (with the
 *   exit code and message of the first thread that could not start) when one cannot.
 *
 * A thread that ends after it started — an uncaught error in a processor's callback, say — is
 * replaced after a backoff (1 s, doubling to 30 s), as a worker replaces a crashed consumer;
 * the other threads keep running.
 */
export class StreamThreads implements HealthProbes {
  /**
   * Settles when a thread's worker gave up for good after its start (another worker runs with
   * its `group.instance.id`): the process must stop, exit with this code and print these lines.
   */
  readonly died: Promise<StreamThreadsStartError>;
  private settleDied: (failure: StreamThreadsStartError) => void = () => undefined;
  private readonly slots: Slot[];
  private stopping = false;
  private nextId = 0;
  /** Keeps the counters of replaced (or silent) threads in `/metrics`. */
  private readonly history = new ThreadMetricsHistory();

  constructor(
    private readonly options: StreamThreadsOptions,
    count: number,
  ) {
    this.died = new Promise((resolve) => (this.settleDied = resolve));
    this.slots = Array.from({ length: count }, (_, i) => ({
      thread: i + 1,
      current: undefined,
      state: 'starting' as SlotState,
      startedAt: 0,
      backoff: new CappedBackoff(1_000, 30_000),
      waiting: new Map(),
    }));
  }

  /**
   * Starts every thread and waits until each has joined its group.
   *
   * @throws StreamThreadsStartError when a thread cannot start (its exit code and message); the
   *   other threads are stopped
   */
  async start(): Promise<void> {
    const started = this.slots.map(
      (slot) =>
        new Promise<StreamThreadsStartError | undefined>((resolve) => {
          slot.onStart = resolve;
          this.spawn(slot);
        }),
    );
    const failures = (await Promise.all(started)).filter((f) => f !== undefined);
    if (failures.length > 0) {
      // The threads that started stop gracefully, within the shutdown timeout.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>(
        (resolve) => (timer = setTimeout(() => resolve('timeout'), this.options.data.config.shutdownTimeoutMs)),
      );
      const stopped = await Promise.race([this.stop(), timeout]);
      clearTimeout(timer);
      if (stopped === 'timeout') await this.terminate();
      throw failures[0]!;
    }
    if (!this.stopping) this.options.logger.info({ threads: this.slots.length }, 'stream threads started');
  }

  private spawn(slot: Slot): void {
    const data: StreamThreadData = { ...this.options.data, thread: slot.thread };
    const thread = new Thread(this.options.entry, { workerData: data });
    slot.current = thread;
    slot.state = 'starting';
    slot.startedAt = Date.now();
    thread.on('message', (message: FromThread) => this.onMessage(slot, thread, message));
    thread.on('error', (error) => {
      if (slot.current === thread)
        this.options.logger.error({ err: error, thread: slot.thread }, 'stream thread failed with an uncaught error');
    });
    thread.on('exit', (code) => this.onExit(slot, thread, code));
  }

  private onMessage(slot: Slot, thread: Thread, message: FromThread): void {
    switch (message.type) {
      case 'log':
        this.options.sink.write(`${message.line}\n`);
        return;
      case 'started':
        if (slot.current !== thread) return;
        slot.state = this.stopping ? 'stopping' : 'running';
        slot.onStart?.(undefined);
        slot.onStart = undefined;
        return;
      case 'failed': {
        const failure = new StreamThreadsStartError(message.exitCode, message.lines);
        if (slot.onStart !== undefined) {
          // Its first start failed: the process does not start, so the thread is not replaced.
          slot.dead = true;
          slot.onStart(failure);
          slot.onStart = undefined;
        } else if (!this.stopping) {
          this.options.logger.error({ thread: slot.thread, error: message.lines.join(' ') }, 'replacement stream thread could not start');
        }
        void thread.terminate();
        return;
      }
      case 'stopped':
        void thread.terminate();
        return;
      case 'died':
        slot.dead = true;
        this.settleDied(new StreamThreadsStartError(message.exitCode, message.lines));
        void thread.terminate();
        return;
      case 'probe':
      case 'metrics':
        slot.waiting.get(message.id)?.(message);
        slot.waiting.delete(message.id);
        return;
    }
  }

  private onExit(slot: Slot, thread: Thread, code: number): void {
    if (slot.current !== thread) return;
    slot.current = undefined;
    for (const answer of slot.waiting.values()) answer({ type: 'stopped' });
    slot.waiting.clear();
    if (slot.onStart !== undefined) {
      // Ended before it started or said why: a crash during the start.
      slot.onStart(new StreamThreadsStartError(1, [`weir: stream thread ${slot.thread} ended during its start (exit code ${code})`]));
      slot.onStart = undefined;
      slot.state = 'stopped';
      return;
    }
    if (this.stopping || slot.dead === true) {
      slot.state = 'stopped';
      return;
    }
    void this.history.threadEnded(slot.thread);
    if (Date.now() - slot.startedAt > STABLE_AFTER_MS) slot.backoff.reset();
    const delayMs = slot.backoff.next();
    slot.state = 'replacing';
    this.options.logger.error({ thread: slot.thread, exitCode: code, replaceInMs: delayMs }, 'stream thread ended; replacing it');
    setTimeout(() => {
      if (!this.stopping && slot.state === 'replacing') this.spawn(slot);
    }, delayMs).unref();
  }

  /**
   * Graceful shutdown of every thread: each stops fetching, finishes the record in hand,
   * commits and leaves its group. Bound it with `shutdownTimeoutMs` (the CLI does); a thread
   * still running when `terminate()` is called ends at once.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.slots.map(async (slot) => {
        const thread = slot.current;
        if (thread === undefined) {
          slot.state = 'stopped';
          return;
        }
        slot.state = 'stopping';
        const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
        thread.postMessage({ type: 'stop' } satisfies ToThread);
        await exited;
      }),
    );
  }

  /** Ends every thread at once, without a clean commit (a shutdown that timed out). */
  async terminate(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.slots.map((slot) => slot.current?.terminate()));
  }

  /** Asks every live thread; threads that do not answer within {@link ANSWER_TIMEOUT_MS} answer `undefined`. */
  private async ask<T extends FromThread['type']>(
    type: T & ToThread['type'],
  ): Promise<Array<{ slot: Slot; thread: Thread | undefined; answer: Extract<FromThread, { type: T }> | undefined }>> {
    return Promise.all(
      this.slots.map(async (slot) => {
        const thread = slot.current;
        if (thread === undefined) return { slot, thread, answer: undefined };
        const id = ++this.nextId;
        const answer = await new Promise<FromThread | undefined>((resolve) => {
          const timer = setTimeout(() => {
            slot.waiting.delete(id);
            resolve(undefined);
          }, ANSWER_TIMEOUT_MS);
          slot.waiting.set(id, (message) => {
            clearTimeout(timer);
            resolve(message);
          });
          thread.postMessage({ type, id } as ToThread);
        });
        return { slot, thread, answer: answer?.type === type ? (answer as Extract<FromThread, { type: T }>) : undefined };
      }),
    );
  }

  /** `/readyz`: ready when every thread is ready (none starting, replaced or stopping). */
  async readiness(): Promise<ProbeResult> {
    const answers = await this.ask('probe');
    const threads = answers.map(({ slot, answer }) => ({
      thread: slot.thread,
      state: slot.state,
      ...(answer === undefined ? { status: 'no answer' } : answer.readiness.body),
      ready: answer?.readiness.status === 200 && slot.state === 'running',
    }));
    const waiting = threads.filter((t) => !t.ready).map((t) => t.thread);
    const ready = !this.stopping && waiting.length === 0;
    return {
      status: ready ? 200 : 503,
      body: {
        status: ready ? 'ready' : 'not ready',
        ...(ready ? {} : { reason: this.stopping ? 'the process is stopping' : `stream threads not ready: ${waiting.join(', ')}` }),
        threads,
      },
    };
  }

  /** `/healthz`: live unless a thread is not, or does not answer; a thread being replaced is live (its replacement is the cure). */
  async liveness(): Promise<ProbeResult> {
    const answers = await this.ask('probe');
    const problems: string[] = [];
    const threads = answers.map(({ slot, answer }) => {
      if (answer === undefined && slot.state !== 'replacing' && slot.state !== 'stopped' && slot.state !== 'stopping')
        problems.push(`stream thread ${slot.thread} did not answer within ${ANSWER_TIMEOUT_MS} ms (its event loop is blocked)`);
      if (answer !== undefined && answer.liveness.status !== 200) {
        const own = answer.liveness.body['problems'];
        for (const p of Array.isArray(own) ? own : ['unhealthy']) problems.push(`stream thread ${slot.thread}: ${String(p)}`);
      }
      return { thread: slot.thread, state: slot.state, ...(answer === undefined ? {} : answer.liveness.body) };
    });
    return {
      status: problems.length === 0 ? 200 : 503,
      body: { status: problems.length === 0 ? 'ok' : 'unhealthy', ...(problems.length > 0 ? { problems } : {}), threads },
    };
  }

  /** `/metrics`: the process's metrics and every thread's that answered, aggregated (see the class comment). */
  async exposition(): Promise<Exposition> {
    const answers = await this.ask('metrics');
    const all: MetricsSnapshot[] = [
      await this.options.metrics.registry.getMetricsAsJSON(),
      // The answer of a thread that ended since it answered is left out: its counters moved to
      // the history when it ended, and counting its answer too would count them twice.
      ...answers.flatMap(({ slot, thread, answer }) =>
        this.history.forScrape(slot.thread, slot.current === thread ? answer?.metrics : undefined),
      ),
    ];
    const registry = AggregatorRegistry.aggregate(all as Array<object>);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
