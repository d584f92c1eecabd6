import type { Classification, ClassifyFn } from '../dsl/process-options.js';
import type { ProcessorRecord } from '../dsl/processor.js';
import { DeserializationError } from '../errors.js';

/** Programmer errors: retrying cannot fix them. */
const PROGRAMMER_ERRORS = ['TypeError', 'RangeError', 'SyntaxError', 'ReferenceError'] as const;

/**
 * weir's default classification, used when a processor has no `classify` hook:
 * - `'dlq'` for programmer errors (TypeError, RangeError, SyntaxError, ReferenceError),
 *   deserialization errors, and any error with `retriable: false` (Kafka Connect's and
 *   kafkajs' convention);
 * - `'retry'` for everything else, including values thrown that are not Errors.
 */
export function defaultClassify(error: unknown): Classification {
  if (error instanceof DeserializationError) return 'dlq';
  if (typeof error === 'object' && error !== null) {
    if ((error as { retriable?: unknown }).retriable === false) return 'dlq';
    if (error instanceof Error && (PROGRAMMER_ERRORS as readonly string[]).includes(error.name)) return 'dlq';
  }
  return 'retry';
}

/**
 * Classifies a failure with the user's hook if there is one, else {@link defaultClassify}.
 * A hook that throws or returns something other than `'retry'`/`'dlq'` cannot be trusted to
 * keep the record safe from loops: the record is dead-lettered, and `hookError` says why.
 */
export function classifyError(
  error: unknown,
  record: ProcessorRecord<any, any>,
  hook: ClassifyFn | undefined,
): { classification: Classification; hookError?: string } {
  if (hook === undefined) return { classification: defaultClassify(error) };
  try {
    const result = hook(error, record);
    if (result === 'retry' || result === 'dlq') return { classification: result };
    return { classification: 'dlq', hookError: `classify returned ${JSON.stringify(result)}, expected 'retry' or 'dlq'` };
  } catch (hookFailure) {
    const message = errorMessageOf(hookFailure);
    return { classification: 'dlq', hookError: `classify threw: ${message}` };
  }
}

/**
 * The class name weir records in `weir.error.class`: the error's `name` (its constructor's
 * name for subclasses that set it), or `typeof` for a thrown non-Error value.
 */
export function errorClassOf(error: unknown): string {
  if (error instanceof Error) return error.name && error.name !== 'Error' ? error.name : (error.constructor?.name ?? 'Error');
  if (error === null) return 'null';
  if (typeof error === 'object') return (error as { constructor?: { name?: string } }).constructor?.name ?? 'Object';
  return typeof error;
}

/**
 * The message weir records in `weir.error.message`: an Error's message, a thrown string as it
 * is, anything else as JSON (or its string form when it cannot be JSON, e.g. circular).
 */
export function errorMessageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    try {
      return JSON.stringify(error);
    } catch {
      return Object.prototype.toString.call(error);
    }
  }
  return String(error);
}
