import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { LogSink } from '../observability/logger.js';
import type { Exposition } from '../observability/metrics-server.js';
import type { FromThread, StreamThreadData, ToThread } from './stream-thread-protocol.js';
import { StreamThreadGroup } from './stream-thread-group.js';
import { askThreads, threadsLiveness, threadsReadiness } from './stream-thread-probes.js';
import { Slot } from './stream-thread-slot.js';
import { StreamThreadsStartError } from './stream-threads-start-error.js';
import { assertStreamThreadsTransition, type StreamThreadsState } from './stream-threads-state.js';
import type { HealthProbes, ProbeResult } from '../observability/health-probes.js';
import type { WorkerMetrics } from '../observability/worker-metrics.js';
import { withinTimeout } from '../failure/within-timeout.js';

/** A replaced thread that ran this long resets the replacement backoff, ms. */
const STABLE_AFTER_MS = 60_000;

/** Options of {@link StreamThreads}. */
export interface StreamThreadsOptions {
  /** The thread's entry module (it calls `hostStreamThread`). */
  readonly entry: URL;
  /** What every thread is started with; each gets its own `thread` number, and `holdTasks` from the start gate. */
  readonly data: Omit<StreamThreadData, 'thread' | 'holdTasks'>;
  /** The threads' consumer group: the topology's `application.id`. */
  readonly groupId: string;
  /** The process's logger, for what the process itself reports. */
  readonly logger: Logger;
  /** The process's log stream: the threads' lines are written here. */
  readonly sink: LogSink;
  /** The process's metrics (Node's process metrics): the threads' counters and histograms are counted here. */
  readonly metrics: WorkerMetrics;
}

/**
 * A process of `n` stream threads, as Kafka Streams runs `num.stream.threads`: each thread
 * (`node:worker_threads`) loads the topology file and runs its own consumer-group member, with
 * its own tasks and producers. The process stays one unit for its operator:
 *
 * - one log stream: every thread's lines (each naming its `thread`) go to the process's sink;
 * - one `/metrics`: each thread posts every change of its counters and histograms as it happens
 *   (one message per poll or flush, see `MetricEvent`) and the process counts them in its own
 *   registry, so they are monotonic and keep every count of a thread that crashed; a thread's own
 *   state — tasks, task states, lag, breakers, budgets — comes from the thread at each scrape,
 *   labelled with its `thread` (prom-client's `AggregatorRegistry`);
 * - one `/healthz` and `/readyz`: ready when every thread is; live unless a thread is not (or
 *   does not answer within 3 s: its event loop is blocked);
 * - one start: `start()` resolves when every thread joined the group and the group settled on
 *   all of them (the start gate, see `threadsSettled`): until then the threads hold their tasks,
 *   so no task starts on a partition the next thread's join moves away — a start replays nothing.
 *   It fails (with the exit code and message of the first thread that could not start) when one
 *   cannot;
 * - one shutdown: `stop()` stops every thread, each committing what it did.
 *
 * A thread that ends after it started — an uncaught error in a processor's callback, say — is
 * taken out of the group at once (a `LeaveGroup` for its member, sent by the process: see
 * `StreamThreadGroup.leave`), so the others rebalance now instead of after its session timeout,
 * and replaced after a backoff (1 s, doubling to 30 s), as Kafka Streams' `REPLACE_THREAD` does.
 * Each thread's place, its {@link Slot}, follows the state table of `SlotState`.
 */
export class StreamThreads implements HealthProbes {
  /**
   * Settles when a thread's worker gave up for good after its start (another worker runs with
   * its `group.instance.id`): the process must stop, exit with this code and print these lines.
   */
  readonly died: Promise<StreamThreadsStartError>;
  private settleDied: (failure: StreamThreadsStartError) => void = () => undefined;
  private readonly slots: Slot[];
  /** The start gate and the stop: see {@link StreamThreadsState}. */
  private state: StreamThreadsState = 'created';
  private readonly group: StreamThreadGroup;

  constructor(
    private readonly options: StreamThreadsOptions,
    count: number,
  ) {
    this.died = new Promise((resolve) => (this.settleDied = resolve));
    this.group = new StreamThreadGroup({ groupId: options.groupId, config: options.data.config, logger: options.logger });
    this.slots = Array.from({ length: count }, (_, i) => new Slot(i + 1));
  }

  /**
   * Starts every thread, waits until each has joined its group, then opens the start gate once
   * the group settled on all of them (at most the rebalance timeout, max(60 s, session timeout);
   * after it the gate opens anyway, with a warning).
   *
   * @throws StreamThreadsStartError when a thread cannot start (its exit code and message); the
   *   other threads are stopped
   */
  async start(): Promise<void> {
    // Stopped while the metrics server started: no thread starts.
    if (this.isStopping()) return;
    this.transition('gated');
    for (const slot of this.slots) this.spawn(slot);
    const failures = (await Promise.all(this.slots.map((slot) => slot.firstStart))).filter((f) => f !== undefined);
    if (failures.length > 0) {
      // The threads that started stop gracefully, within the shutdown timeout.
      if ((await withinTimeout(this.stop(), this.options.data.config.shutdownTimeoutMs)) === 'timeout') await this.terminate();
      throw failures[0]!;
    }
    const waitedFrom = Date.now();
    const settled = await this.group.settle(
      () => this.slots.map((s) => s.join),
      Math.max(60_000, this.options.data.config.sessionTimeoutMs),
      () => this.isStopping(),
    );
    if (this.isStopping()) return;
    if (settled !== true)
      this.options.logger.warn({ reason: settled }, 'the group did not settle on every stream thread in time: starting their tasks anyway');
    this.transition('open');
    for (const slot of this.slots) slot.current?.postMessage({ type: 'go' } satisfies ToThread);
    this.options.logger.info({ threads: this.slots.length, settledInMs: Date.now() - waitedFrom }, 'stream threads started');
  }

  private spawn(slot: Slot): void {
    slot.transition({ kind: 'starting', first: slot.state.kind === 'created' });
    const data: StreamThreadData = { ...this.options.data, thread: slot.thread, holdTasks: this.state !== 'open' };
    const thread = new Thread(this.options.entry, { workerData: data });
    slot.current = thread;
    slot.startedAt = Date.now();
    slot.join = undefined;
    thread.on('message', (message: FromThread) => this.onMessage(slot, thread, message));
    thread.on('error', (error) => {
      if (slot.current === thread)
        this.options.logger.error({ err: error, thread: slot.thread }, 'stream thread failed with an uncaught error');
    });
    thread.on('exit', (code) => this.onExit(slot, thread, code));
  }

  private onMessage(slot: Slot, thread: Thread, message: FromThread): void {
    const current = slot.current === thread;
    switch (message.type) {
      case 'log':
        this.options.sink.write(`${message.line}\n`);
        return;
      case 'metric':
        // Counted even from a thread that ended since: what it posted before it died counts.
        this.options.metrics.count(message.event, String(slot.thread));
        return;
      case 'joined':
        if (current) slot.join = { memberId: message.memberId, assignment: message.assignment };
        return;
      case 'started':
        if (!current) return;
        if (slot.state.kind === 'starting') slot.transition({ kind: 'running' });
        slot.firstStartEnded();
        return;
      case 'failed': {
        // Its worker stopped and left the group.
        if (current) slot.join = undefined;
        const failure = new StreamThreadsStartError(message.exitCode, message.lines);
        const { state } = slot;
        if (state.kind === 'starting' && state.first) {
          // Its first start failed: the process does not start, so the thread is not replaced.
          slot.transition({ kind: 'given-up' });
          slot.firstStartEnded(failure);
        } else if (state.kind === 'stopping') {
          // Stopped during its first start, if it was: that start failed.
          slot.firstStartEnded(failure);
        } else if (!this.isStopping()) {
          this.options.logger.error({ thread: slot.thread, error: message.lines.join(' ') }, 'replacement stream thread could not start');
        }
        void thread.terminate();
        return;
      }
      case 'stopped':
        if (current) slot.join = undefined;
        void thread.terminate();
        return;
      case 'died':
        if (current) slot.join = undefined;
        if (slot.state.kind === 'starting' || slot.state.kind === 'running') slot.transition({ kind: 'given-up' });
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
    // Its worker did not leave the group (it would have said so): its member leaves now.
    const orphan = slot.join;
    slot.join = undefined;
    if (orphan !== undefined) void this.leave(slot, orphan.memberId);
    // Ended before it started or said why, if its first start was pending: a crash during the start.
    slot.firstStartEnded(new StreamThreadsStartError(1, [`weir: stream thread ${slot.thread} ended during its start (exit code ${code})`]));
    const { state } = slot;
    if ((state.kind === 'starting' && state.first) || state.kind === 'given-up' || state.kind === 'stopping') {
      slot.transition({ kind: 'stopped' });
      return;
    }
    if (Date.now() - slot.startedAt > STABLE_AFTER_MS) slot.backoff.reset();
    const delayMs = slot.backoff.next();
    slot.transition({ kind: 'replacing' });
    this.options.logger.error({ thread: slot.thread, exitCode: code, replaceInMs: delayMs }, 'stream thread ended; replacing it');
    // Not unref()'d: while every thread is being replaced, this timer is what keeps the process
    // alive (else it would end with no thread at all). stop() and terminate() clear it.
    slot.replaceTimer = setTimeout(() => {
      slot.replaceTimer = undefined;
      if (!this.isStopping() && slot.state.kind === 'replacing') this.spawn(slot);
    }, delayMs);
  }

  /** Takes the member of a thread that ended without leaving out of the group (best effort: else its session times out). */
  private async leave(slot: Slot, memberId: string): Promise<void> {
    const from = Date.now();
    try {
      const sent = await this.group.leave(memberId);
      if (sent)
        this.options.logger.info(
          { thread: slot.thread, memberId, tookMs: Date.now() - from },
          "the ended stream thread's member left the group",
        );
    } catch (error) {
      this.options.logger.warn(
        { err: error, thread: slot.thread, memberId },
        "could not take the ended stream thread's member out of the group; the group rebalances when its session times out",
      );
    }
  }

  /**
   * Graceful shutdown of every thread: each stops fetching, finishes the record in hand,
   * commits and leaves its group. Bound it with `shutdownTimeoutMs` (`StreamProcess` does); a
   * thread still running when `terminate()` is called ends at once.
   */
  async stop(): Promise<void> {
    this.halt();
    await Promise.all(
      this.slots.map(async (slot) => {
        const thread = slot.current;
        if (thread === undefined) return;
        const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
        thread.postMessage({ type: 'stop' } satisfies ToThread);
        await exited;
      }),
    );
    await this.group.close();
  }

  /** Ends every thread at once, without a clean commit (a shutdown that timed out). */
  async terminate(): Promise<void> {
    this.halt();
    await Promise.all(this.slots.map((slot) => slot.current?.terminate()));
    await this.group.close();
  }

  /** The process stops: clears the pending replacements' timers; each slot stops (or is stopped, with no thread). */
  private halt(): void {
    if (!this.isStopping()) this.transition('stopping');
    for (const slot of this.slots) {
      clearTimeout(slot.replaceTimer);
      slot.replaceTimer = undefined;
      const to = slot.current === undefined ? 'stopped' : 'stopping';
      if (slot.state.kind !== to && slot.state.kind !== 'stopped') slot.transition({ kind: to });
    }
  }

  /** A stop came (read through a method: the state changes across awaits). */
  private isStopping(): boolean {
    return this.state === 'stopping';
  }

  private transition(to: StreamThreadsState): void {
    assertStreamThreadsTransition(this.state, to);
    this.state = to;
  }

  /** `/readyz`: ready when every thread is ready (none starting, replaced or stopping). */
  async readiness(): Promise<ProbeResult> {
    return threadsReadiness(await askThreads(this.slots, 'probe'), this.isStopping());
  }

  /** `/healthz`: live unless a thread is not, or does not answer; a thread being replaced is live (its replacement is the cure). */
  async liveness(): Promise<ProbeResult> {
    return threadsLiveness(await askThreads(this.slots, 'probe'));
  }

  /** `/metrics`: the process's metrics (with every thread's counters and histograms) and the gauges of every thread that answered. */
  async exposition(): Promise<Exposition> {
    const answers = await askThreads(this.slots, 'metrics');
    const all = [
      await this.options.metrics.registry.getMetricsAsJSON(),
      ...answers.flatMap(({ answer }) => (answer === undefined ? [] : [answer.metrics.filter((m) => String(m.type) === 'gauge')])),
    ];
    const registry = AggregatorRegistry.aggregate(all as Array<object>);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
