// A record fails at once, without retries: the errors weir dead-letters a record with.
import { WeirError } from './weir-error.js';

/**
 * Throw this (or any error with `retriable: false`) from a processor to send the record to
 * the dead-letter queue at once, without retries. Mirrors Spring Kafka's
 * "not retryable exceptions" and Kafka Connect's non-retriable errors.
 *
 * @example
 * if (!order.id) throw new NonRetriableError('order has no id');
 */
export class NonRetriableError extends WeirError {
  readonly retriable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super('WEIR_NON_RETRIABLE', message, options);
  }
}

/** A record's key or value could not be deserialized with the source's serde. Non-retriable. */
export class DeserializationError extends WeirError {
  readonly retriable = false;
  /** Which part of the record failed. */
  readonly part: 'key' | 'value';

  constructor(part: 'key' | 'value', serde: string, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('WEIR_DESERIALIZATION', `cannot deserialize record ${part} with serde '${serde}'${reason}`, options);
    this.part = part;
  }
}

/** An output could not be serialized with its sink's serde. Non-retriable. */
export class SerializationError extends WeirError {
  readonly retriable = false;

  /**
   * @param sink the sink node, or `{ step }`: the input of that chain step (a hand-off between steps)
   */
  constructor(sink: string | { readonly step: string }, serde: string, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    const target =
      typeof sink === 'string'
        ? `output for sink '${sink}'`
        : `output as the input of chain step '${sink.step}' (its inputSerdes: every hand-off is serialized, for the step's retry-tier copies and dead letters)`;
    super('WEIR_SERIALIZATION', `cannot serialize ${target} with serde '${serde}'${reason}`, options);
  }
}

/** An output matched none of the success branches' predicates. Non-retriable. */
export class NoMatchingBranchError extends WeirError {
  readonly retriable = false;

  constructor(processor: string) {
    super('WEIR_NO_MATCHING_BRANCH', `output of processor '${processor}' matched no success branch`);
  }
}

/**
 * A chain step before the last forwarded more than one output: such a step hands at most one
 * record on to the next step (its return value, or one `ctx.forward()`). Non-retriable: the
 * record goes to that step's DLQ.
 */
export class ChainStepOutputError extends WeirError {
  readonly retriable = false;

  constructor(processor: string, outputs: number) {
    super(
      'WEIR_CHAIN_STEP_OUTPUT',
      `chain step '${processor}' forwarded ${outputs} outputs; a step before the last hands on at most one (its return value or one ctx.forward())`,
    );
  }
}

/**
 * A replayed dead letter's `weir.step` names no step after the first of its sub-topology's
 * chain (the step was renamed or removed since): its value is that step's input, which no
 * step here takes. Non-retriable: the record goes to the first step's DLQ, as it came.
 */
export class UnknownChainStepError extends WeirError {
  readonly retriable = false;

  constructor(step: string, steps: readonly string[]) {
    super(
      'WEIR_UNKNOWN_CHAIN_STEP',
      `the record resumes at chain step '${step}' (weir.step), which this chain does not have after its first step (steps: ${steps.join(', ')}); it holds that step's input`,
    );
  }
}

/**
 * A record exceeded a loop guard (hop limit or replay limit) and was sent to the DLQ instead
 * of going around again. Non-retriable.
 */
export class LoopGuardError extends WeirError {
  readonly retriable = false;

  constructor(message: string) {
    super('WEIR_LOOP_GUARD', message);
  }
}

/**
 * A processor's `classify` hook threw, or answered something other than `'retry'` or `'dlq'`.
 * A hook that cannot be trusted cannot keep the record safe from loops, so the record is
 * dead-lettered with this error; `cause` is the processor's own failure. Non-retriable.
 */
export class ClassifyHookError extends WeirError {
  readonly retriable = false;

  /**
   * @param problem what the hook did wrong, e.g. `classify threw: boom`
   * @param reason the processor's error message
   * @param processorError the processor's error (the `cause`)
   */
  constructor(problem: string, reason: string, processorError: unknown) {
    super('WEIR_CLASSIFY_HOOK', `${problem}; the processor failed with: ${reason}`, { cause: processorError });
  }
}

/**
 * An output (or a retry-tier copy) is larger than the record size limit (`--max-record-bytes`,
 * which must not exceed the broker's `message.max.bytes`). The broker would reject it on every
 * retry, so the input record is dead-lettered at once. Non-retriable.
 */
export class RecordTooLargeError extends WeirError {
  readonly retriable = false;

  constructor(what: string, bytes: number, limitBytes: number) {
    super('WEIR_RECORD_TOO_LARGE', `${what} is ${bytes} bytes, over the record size limit of ${limitBytes} bytes (--max-record-bytes)`);
  }
}
