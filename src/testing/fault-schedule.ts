import type { ProcessingGuarantee } from '../dsl/topology-builder.js';
import type { BrokerOperation } from './in-memory-kafka.js';

/**
 * A named point in a task's write path where a fault can strike.
 *
 * | point | at_least_once | exactly_once |
 * |---|---|---|
 * | `before-produce` | before the outputs are sent | before the outputs are added to the transaction |
 * | `after-produce` | outputs acked, offset not committed | outputs in the open transaction |
 * | `mid-transaction` | — | outputs and offsets in the open transaction, commit not sent |
 * | `before-commit` | before the offset commit | before `commitTransaction` |
 * | `after-commit` | offset committed, task not told | transaction committed, task not told |
 */
export type FaultPoint = 'before-produce' | 'after-produce' | 'mid-transaction' | 'before-commit' | 'after-commit';

/** Every {@link FaultPoint}. */
export const FAULT_POINTS: readonly FaultPoint[] = Object.freeze([
  'before-produce',
  'after-produce',
  'mid-transaction',
  'before-commit',
  'after-commit',
]);

/**
 * One fault for the TopologyTestDriver. `nth` counts (1-based) how many times any task
 * reached the point since the fault was scheduled; `atPoll` counts the driver's task polls.
 *
 * - `crash`: the task dies at the point (its call never returns, as a killed process); the
 *   driver discards it and starts a new task from the committed offset, as a restarted worker
 *   would (under exactly_once the new transactional producer fences the old one).
 * - `broker-error`: the broker operation at the point fails once with a retriable error (the
 *   task backs off and tries again; under exactly_once it aborts or resolves the in-doubt
 *   commit).
 * - `stall`: exactly_once only: the task freezes at the point (a long GC pause, a network
 *   partition); the driver gives its partition to a new task, and once the tasks are idle the
 *   old one resumes as a zombie — it must be fenced and write nothing.
 * - `abort-transaction`: exactly_once only: the nth transaction fails before its commit and is
 *   aborted; the task re-runs its batch.
 * - `rebalance`: before poll `atPoll`, every partition moves to a new task (the old one closes
 *   without committing, or after a commit when `graceful`).
 * - `dedup-store-down`: from poll `atPoll` the dedup store fails every call, for `forPolls`
 *   polls.
 */
export type Fault =
  | { readonly kind: 'crash'; readonly point: FaultPoint; readonly nth: number }
  | { readonly kind: 'broker-error'; readonly point: FaultPoint; readonly nth: number }
  | { readonly kind: 'stall'; readonly point: FaultPoint; readonly nth: number }
  | { readonly kind: 'abort-transaction'; readonly nth: number }
  | { readonly kind: 'rebalance'; readonly atPoll: number; readonly graceful?: boolean }
  | { readonly kind: 'dedup-store-down'; readonly atPoll: number; readonly forPolls: number };

/** A list of faults, applied by the driver as their triggers come. */
export type FaultSchedule = readonly Fault[];

/** A broker operation and phase: where the in-memory broker's fault hook intercepts. */
export interface BrokerStep {
  readonly operation: BrokerOperation;
  readonly phase: 'before' | 'after';
}

const AT_LEAST_ONCE: Readonly<Partial<Record<FaultPoint, BrokerStep>>> = {
  'before-produce': { operation: 'produce', phase: 'before' },
  'after-produce': { operation: 'produce', phase: 'after' },
  'before-commit': { operation: 'commit', phase: 'before' },
  'after-commit': { operation: 'commit', phase: 'after' },
};

const EXACTLY_ONCE: Readonly<Record<FaultPoint, BrokerStep>> = {
  'before-produce': { operation: 'txn-send', phase: 'before' },
  'after-produce': { operation: 'txn-send', phase: 'after' },
  'mid-transaction': { operation: 'txn-send-offsets', phase: 'after' },
  'before-commit': { operation: 'txn-commit', phase: 'before' },
  'after-commit': { operation: 'txn-commit', phase: 'after' },
};

/**
 * The broker operation behind a fault point under a `processing.guarantee`.
 *
 * @throws RangeError for `mid-transaction` under at_least_once (there is no transaction)
 */
export function brokerStepOf(point: FaultPoint, guarantee: ProcessingGuarantee): BrokerStep {
  const step = guarantee === 'exactly_once' ? EXACTLY_ONCE[point] : AT_LEAST_ONCE[point];
  if (step === undefined)
    throw new RangeError(`fault point '${point}' needs processing.guarantee exactly_once (this topology runs ${guarantee})`);
  return step;
}

/** A readable one-line description of a fault, for logs and counterexamples. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'crash':
    case 'broker-error':
    case 'stall':
      return `${fault.kind} at ${fault.point} #${fault.nth}`;
    case 'abort-transaction':
      return `abort transaction #${fault.nth}`;
    case 'rebalance':
      return `${fault.graceful ? 'graceful ' : ''}rebalance before poll ${fault.atPoll}`;
    case 'dedup-store-down':
      return `dedup store down from poll ${fault.atPoll} for ${fault.forPolls} polls`;
  }
}
