import type { ProcessingGuarantee } from '../dsl/topology-builder.js';
import type { BrokerFaultHook, BrokerOperation } from './in-memory-kafka.js';
import { brokerStepOf, describeFault, type BrokerStep, type Fault, type FaultSchedule } from './fault-schedule.js';

/** The error an injected `broker-error` or `abort-transaction` fault raises. */
export class InjectedBrokerError extends Error {
  override readonly name = 'InjectedBrokerError';
}

/** A fault that struck. */
export interface FiredFault {
  readonly fault: Fault;
  /** The task it struck (`<topic>-<partition>#<incarnation>`), or `*` for every task. */
  readonly task: string;
  /** Driver clock, epoch ms. */
  readonly atMs: number;
  /** The driver's poll count when it struck. */
  readonly poll: number;
}

/** The task whose poll is running, as the injector sees it. */
export interface ActiveTask {
  readonly name: string;
  /** The task dies here: the driver discards it and restarts the partition from committed state. */
  crash(): void;
  /** The task freezes here; the driver restarts the partition and later resumes it as a zombie. @returns what resumes it */
  stall(): Promise<void>;
}

/** What the driver must do before a poll. */
export type PollAction =
  | { readonly kind: 'rebalance'; readonly graceful: boolean; readonly fault: Fault }
  | { readonly kind: 'dedup-store'; readonly down: boolean; readonly fault: Fault };

interface Armed {
  readonly fault: Fault;
  readonly step: BrokerStep;
  readonly action: 'crash' | 'stall' | 'fail';
  readonly nth: number;
  seen: number;
}

function checkCount(index: number, fault: Fault, field: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`fault ${index} (${fault.kind}): ${field} must be an integer ≥ ${min} (got ${value})`);
}

/**
 * Applies a {@link FaultSchedule} for the TopologyTestDriver: as the in-memory broker's fault
 * hook it crashes or fails the running task at named points, and it tells the driver when a
 * poll-triggered fault (rebalance, dedup store down) is due.
 */
export class FaultInjector {
  /** Every fault that struck, in order. */
  readonly fired: FiredFault[] = [];
  private readonly armed: Armed[] = [];
  private readonly actions: Array<{ readonly atPoll: number; readonly action: PollAction }> = [];

  constructor(
    private readonly guarantee: ProcessingGuarantee,
    private readonly active: () => ActiveTask | undefined,
    private readonly now: () => number,
    private readonly polls: () => number,
  ) {}

  /**
   * Adds faults. Counts (`nth`) start now; `atPoll` is absolute.
   *
   * @throws RangeError naming the fault when a count is not a positive integer, or a fault
   *   needs exactly_once and the topology runs at_least_once
   */
  schedule(faults: FaultSchedule): void {
    faults.forEach((fault, index) => {
      switch (fault.kind) {
        case 'crash':
        case 'stall':
        case 'broker-error': {
          checkCount(index, fault, 'nth', fault.nth, 1);
          if (fault.kind === 'stall' && this.guarantee !== 'exactly_once')
            throw new RangeError(`fault ${index} (stall) needs processing.guarantee exactly_once (this topology runs ${this.guarantee})`);
          const step = brokerStepOf(fault.point, this.guarantee);
          this.armed.push({ fault, step, action: fault.kind === 'broker-error' ? 'fail' : fault.kind, nth: fault.nth, seen: 0 });
          break;
        }
        case 'abort-transaction':
          checkCount(index, fault, 'nth', fault.nth, 1);
          if (this.guarantee !== 'exactly_once')
            throw new RangeError(
              `fault ${index} (abort-transaction) needs processing.guarantee exactly_once (this topology runs ${this.guarantee})`,
            );
          this.armed.push({ fault, step: { operation: 'txn-send-offsets', phase: 'before' }, action: 'fail', nth: fault.nth, seen: 0 });
          break;
        case 'rebalance':
          checkCount(index, fault, 'atPoll', fault.atPoll, 1);
          this.actions.push({ atPoll: fault.atPoll, action: { kind: 'rebalance', graceful: fault.graceful === true, fault } });
          break;
        case 'dedup-store-down':
          checkCount(index, fault, 'atPoll', fault.atPoll, 1);
          checkCount(index, fault, 'forPolls', fault.forPolls, 1);
          this.actions.push({ atPoll: fault.atPoll, action: { kind: 'dedup-store', down: true, fault } });
          this.actions.push({ atPoll: fault.atPoll + fault.forPolls, action: { kind: 'dedup-store', down: false, fault } });
          break;
        default:
          throw new RangeError(`fault ${index}: unknown kind ${JSON.stringify((fault as { kind?: unknown }).kind)}`);
      }
    });
  }

  /** The actions due before poll `poll` (1-based), in schedule order; each is returned once. */
  takeActions(poll: number): PollAction[] {
    const due: PollAction[] = [];
    for (let i = 0; i < this.actions.length;) {
      const entry = this.actions[i]!;
      if (entry.atPoll <= poll) {
        due.push(entry.action);
        this.actions.splice(i, 1);
        if (entry.action.kind === 'rebalance' || entry.action.down) this.record(entry.action.fault, '*');
      } else {
        i++;
      }
    }
    return due;
  }

  /** Faults scheduled that have not struck yet. */
  get pending(): number {
    return this.armed.length + this.actions.filter((a) => a.action.kind === 'rebalance' || a.action.down).length;
  }

  /** The in-memory broker's fault hook. Operations outside a task poll (pipeInput) pass. */
  readonly hook: BrokerFaultHook = (operation: BrokerOperation, phase) => {
    const task = this.active();
    if (task === undefined) return;
    let failure: Armed | undefined;
    for (let i = 0; i < this.armed.length;) {
      const armed = this.armed[i]!;
      if (armed.step.operation !== operation || armed.step.phase !== phase || ++armed.seen < armed.nth) {
        i++;
        continue;
      }
      this.armed.splice(i, 1);
      this.record(armed.fault, task.name);
      if (armed.action === 'crash') {
        task.crash();
        return new Promise<void>(() => undefined);
      }
      if (armed.action === 'stall') return task.stall();
      failure ??= armed;
    }
    if (failure !== undefined) throw new InjectedBrokerError(`injected fault: ${describeFault(failure.fault)} (${operation} ${phase})`);
  };

  private record(fault: Fault, task: string): void {
    this.fired.push({ fault, task, atMs: this.now(), poll: this.polls() });
  }
}
