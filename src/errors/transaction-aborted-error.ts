import { WeirError } from './weir-error.js';

/**
 * A task's part of a shared transaction (exactly_once_v2: one transaction for every task of a
 * member) was aborted because another part of it failed: the task re-runs its unit of work,
 * as after any aborted transaction.
 */
export class TransactionAbortedError extends WeirError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super('WEIR_TRANSACTION_ABORTED', `the shared transaction was aborted (${reason})`, options);
  }
}
