import { WeirError } from './weir-error.js';

/**
 * A processing attempt outlived its processor's `timeoutMs`: `ctx.signal` was aborted with this
 * error, and the attempt failed with it even if the processor ignored the signal (its late
 * outputs are dropped). Retriable, like any failure of a slow dependency.
 */
export class AttemptTimeoutError extends WeirError {
  readonly retriable = true;
  readonly timeoutMs: number;

  constructor(processor: string, timeoutMs: number) {
    super('WEIR_ATTEMPT_TIMEOUT', `processor '${processor}' did not finish its attempt within timeoutMs (${timeoutMs} ms)`);
    this.timeoutMs = timeoutMs;
  }
}
