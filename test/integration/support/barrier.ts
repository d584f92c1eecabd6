/**
 * A one-shot barrier for runs that share one disruption (the crash test's and the fault
 * campaign's broker SIGKILL): the last of `parties` callers to {@link Barrier.arrive} runs the
 * action, and every caller resumes when it is done (or rejects with its error). A party that will
 * never arrive (its run failed) {@link Barrier.leave}s, so the others are not kept waiting.
 *
 * @example
 * const restart = new Barrier(3, () => restartBroker());
 * await restart.arrive(); // in each of the three runs
 */
export class Barrier {
  private arrived = 0;
  private started = false;
  private release!: () => void;
  private fail!: (error: unknown) => void;
  private readonly done = new Promise<void>((resolve, reject) => ((this.release = resolve), (this.fail = reject)));

  constructor(
    private parties: number,
    private readonly action: () => Promise<void>,
  ) {
    // A barrier nobody arrives at must not report an unhandled rejection.
    this.done.catch(() => undefined);
  }

  /** Waits for the other parties; the last one runs the action. @throws the action's error */
  async arrive(): Promise<void> {
    this.arrived++;
    this.check();
    await this.done;
  }

  /** One party fewer (it will not arrive); runs the action if everyone else is there. */
  leave(): void {
    this.parties--;
    this.check();
  }

  private check(): void {
    if (this.started || this.arrived < this.parties || this.arrived === 0) return;
    this.started = true;
    this.action().then(this.release, this.fail);
  }
}
