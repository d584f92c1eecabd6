/** A call a task's loop can wait on for long: its processor (an async one), or its write. */
export type AwaitedCallKind = 'processor' | 'write';

/**
 * What a task's loop waits on now, and since when, so that a shutdown that waits for the task to
 * close can say why it does not (`waiting on its transaction for 42 s`): a processor call that
 * never returns, or a write (under exactly_once, its transaction) that hangs. One per task; set
 * around each such wait, with no allocation per record.
 */
export class TaskAwaits {
  private kind: AwaitedCallKind | undefined;
  private since = 0;
  private offset = -1;

  /** @param guarantee the task's `processing.guarantee`: it names what a write is */
  constructor(private readonly guarantee: 'at_least_once' | 'exactly_once') {}

  /**
   * Waits for `work`, a call of `kind` begun at `now` (epoch ms), on the record at `offset`
   * (a processor call), and says so until it settles.
   */
  async on<T>(kind: AwaitedCallKind, now: number, work: Promise<T>, offset = -1): Promise<T> {
    this.kind = kind;
    this.since = now;
    this.offset = offset;
    try {
      return await work;
    } finally {
      this.kind = undefined;
    }
  }

  /**
   * What the task waits on at `now` (epoch ms), e.g. `its processor (offset 1234) for 42 s`, or
   * undefined when it waits on none of these calls.
   */
  describe(now: number): string | undefined {
    if (this.kind === undefined) return undefined;
    const forS = `for ${Math.max(0, Math.round((now - this.since) / 1000))} s`;
    if (this.kind === 'processor') return `its processor${this.offset >= 0 ? ` (offset ${this.offset})` : ''} ${forS}`;
    return `${this.guarantee === 'exactly_once' ? 'its transaction' : 'its write and offset commit'} ${forS}`;
  }
}
