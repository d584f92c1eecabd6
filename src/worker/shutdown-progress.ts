import type { Logger } from 'pino';

/** How often a shutdown still under way says what it waits for, ms. */
export const SHUTDOWN_PROGRESS_INTERVAL_MS = 5_000;

/**
 * What a worker's shutdown waits for now, said in a warn line every
 * {@link SHUTDOWN_PROGRESS_INTERVAL_MS} until it ends, e.g. `shutdown still under way after
 * 10 s: waiting for tasks to commit and close: orders-3 (stopping, waiting on its transaction for
 * 8 s)`. The shutdown is bounded by
 * `--shutdown-timeout-ms` (the process's); these lines say which step a timed-out one was in.
 */
export class ShutdownProgress {
  private current: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private began = 0;

  /**
   * @param logger the worker's logger
   * @param detail more of a step's wait, e.g. the tasks not closed yet (empty: nothing to add)
   */
  constructor(
    private readonly logger: Logger,
    private readonly detail: (step: string) => readonly string[] = () => [],
  ) {}

  /** The shutdown began: from now on, say every interval what it waits for. */
  begin(): void {
    this.began = Date.now();
    this.timer = setInterval(() => this.report(), SHUTDOWN_PROGRESS_INTERVAL_MS);
    this.timer.unref();
  }

  /** The shutdown now waits for `what` (e.g. `the consumer to leave the group`). */
  step(what: string): void {
    this.current = what;
  }

  /** The shutdown ended (or gave up). */
  end(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.current = undefined;
  }

  /** `<step>[: <detail, …>]`, or undefined when no shutdown is under way. */
  waitingFor(): string | undefined {
    if (this.current === undefined) return undefined;
    const more = this.detail(this.current);
    return more.length > 0 ? `${this.current}: ${more.join(', ')}` : this.current;
  }

  private report(): void {
    const waiting = this.waitingFor();
    if (waiting === undefined) return;
    const elapsedMs = Date.now() - this.began;
    this.logger.warn(
      { waitingFor: waiting, elapsedMs },
      `shutdown still under way after ${Math.round(elapsedMs / 1000)} s: waiting for ${waiting}`,
    );
  }
}
