import type { OutputRecord } from '../record/record-types.js';

/**
 * The outcome of one processing attempt of one record, as a value:
 * - `success`: the outputs to write to the success sinks (possibly none: a filter);
 * - `retry`: try again after `delayMs` (blocking mode), or the `output` is the record's copy
 *   for the next retry tier (retry-topic mode);
 * - `dead-letter`: the record's DLQ copy.
 */
export type RecordOutcome =
  | { readonly kind: 'success'; readonly outputs: readonly OutputRecord[] }
  | { readonly kind: 'retry'; readonly delayMs: number; readonly errorClass: string; readonly error: unknown; readonly output?: OutputRecord }
  | { readonly kind: 'dead-letter'; readonly output: OutputRecord; readonly errorClass: string; readonly error: unknown };
