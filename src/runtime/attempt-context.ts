import type { ProcessorContext, ProcessorOutput } from '../dsl/processor.js';
import type { InputRecord } from '../record/record-types.js';
import { recordOrigin } from '../record/record-origin.js';
import { WEIR_HEADERS } from '../record/weir-headers.js';

/** Hears of outputs forwarded after their attempt ended (they are dropped); a task's `TaskEvents`. */
export interface LateForwardListener {
  lateForward(raw: InputRecord, processor: string): void;
}

/**
 * The `ctx` of one processing attempt (see {@link ProcessorContext}). One object per attempt:
 * `ctx.signal` and `ctx.forward` are made on first use (most processors never read them), and
 * outputs are collected only when `forward()` is called.
 */
export class AttemptContext implements ProcessorContext {
  readonly originalTopic: string;
  readonly originalPartition: number;
  readonly originalOffset: number;
  /** What `forward()` collected while the attempt was open. */
  forwarded: ProcessorOutput[] | undefined;
  private open = true;
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private bound: ((output: ProcessorOutput) => void) | undefined;

  constructor(
    readonly applicationId: string,
    readonly processor: string,
    readonly attempt: number,
    readonly maxAttempts: number,
    private readonly raw: InputRecord,
    /** Hears when the processor forwards after its attempt ended (the output is dropped). */
    private readonly late: LateForwardListener | undefined,
  ) {
    if (raw.headers[WEIR_HEADERS.originalTopic] === undefined) {
      this.originalTopic = raw.topic;
      this.originalPartition = raw.partition;
      this.originalOffset = raw.offset;
    } else {
      const origin = recordOrigin(raw);
      this.originalTopic = origin.topic;
      this.originalPartition = origin.partition;
      this.originalOffset = origin.offset;
    }
  }

  /** Aborts when the attempt times out; made on first use, one per attempt. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Forwards an output to the success branch; also works detached (`const { forward } = ctx`). */
  get forward(): (output: ProcessorOutput) => void {
    return (this.bound ??= (output) => this.push(output));
  }

  private push(output: ProcessorOutput): void {
    if (!this.open) {
      // Throwing here would throw into the user's timer or callback, outside any attempt.
      this.late?.lateForward(this.raw, this.processor);
      return;
    }
    if (typeof output !== 'object' || output === null || !('value' in output)) {
      throw new TypeError(
        `ctx.forward() takes { value, key?, headers? } (got ${output === null ? 'null' : typeof output === 'object' ? 'an object without value' : typeof output})`,
      );
    }
    (this.forwarded ??= []).push(output);
  }

  /** The attempt timed out: `signal` aborts with `reason`. */
  abort(reason: unknown): void {
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  /** The attempt ended: later `forward()` calls are dropped. */
  close(): void {
    this.open = false;
  }
}
