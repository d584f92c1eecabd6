import type { FailureOutcome } from '../failure/failure-outcome.js';
import type { OutputRecord } from '../record/record-types.js';
import type { PreparedRecord } from './prepared-record.js';

/**
 * The outcome of one processing attempt of one record, as a value: `success` with the outputs
 * for the success sinks (possibly none: a filter) or, at a chain step before the last, with the
 * `next` step's input (then `outputs` is empty); or what the failure path decided
 * (`retry-in-place`, `retry-topic`, `dead-letter`; see {@link FailureOutcome}).
 */
export type RecordOutcome =
  { readonly kind: 'success'; readonly outputs: readonly OutputRecord[]; readonly next?: PreparedRecord } | FailureOutcome;
