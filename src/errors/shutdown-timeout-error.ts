import { WeirError } from './weir-error.js';

/**
 * `weir run`'s graceful shutdown (finish the record in hand, flush, commit, leave the group) did
 * not end within `--shutdown-timeout-ms`: the process ended its threads without a clean commit
 * (a processor that never returns; a join that waits for a crashed member's session to expire).
 * Nothing is lost: what was not committed is read again by the member that gets its partitions
 * (at_least_once), and an open transaction is aborted (exactly_once). Exit code 1.
 */
export class ShutdownTimeoutError extends WeirError {
  /** The timeout that ran out, ms. */
  readonly shutdownTimeoutMs: number;

  constructor(shutdownTimeoutMs: number) {
    super(
      'WEIR_SHUTDOWN_TIMEOUT',
      `shutdown did not finish within ${shutdownTimeoutMs} ms (--shutdown-timeout-ms): exited without committing or leaving the group ` +
        '(a processor that did not return, a commit or a group join that did not answer); nothing is lost: what was not committed ' +
        'is processed again (at_least_once) or its transaction aborted (exactly_once)',
    );
    this.shutdownTimeoutMs = shutdownTimeoutMs;
  }
}
