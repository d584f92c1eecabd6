import type { FlushEvent, PortErrorEvent, RecordEvent, TaskListener } from '../runtime/task-listener.js';
import type { Clock } from '../runtime/ports.js';
import type { FiredFault } from './fault-injector.js';
import type { CircuitTransition } from '../failure/circuit-breaker.js';

/** A record outcome as one task incarnation reported it. */
export interface DriverRecordEvent extends RecordEvent {
  /** The task incarnation: `<topic>-<partition>#<n>` (n grows with every restart). */
  readonly instance: string;
  /** Reported by a zombie: a task that stalled and was replaced, after it resumed (never durable under exactly_once). */
  readonly zombie?: true;
}

/** A unit of work that became durable. `atMs` is the driver clock, epoch ms. */
export interface DriverFlushEvent extends FlushEvent {
  readonly instance: string;
  readonly atMs: number;
}

/** A failed port call (broker or dedup store); the task retried after `retryInMs`. */
export interface DriverPortErrorEvent extends PortErrorEvent {
  readonly instance: string;
  readonly atMs: number;
}

/** A task incarnation replaced by a new one. */
export interface DriverRestart {
  /** `<topic>-<partition>`. */
  readonly task: string;
  /** The incarnation that ended and the one that replaced it. */
  readonly from: string;
  readonly to: string;
  readonly reason: 'crash' | 'stall' | 'rebalance' | 'fenced';
  readonly atMs: number;
}

/** Everything the driver saw, in order: what invariants and failing properties read. */
export interface DriverHistory {
  readonly records: readonly DriverRecordEvent[];
  readonly flushes: readonly DriverFlushEvent[];
  readonly portErrors: readonly DriverPortErrorEvent[];
  /** Records processed without dedup because the store failed under `onStoreError: 'skip-dedup'`. */
  readonly dedupSkipped: number;
  readonly restarts: readonly DriverRestart[];
  readonly faults: readonly FiredFault[];
  /** Every circuit-breaker state change, of every processor, in order (times on the driver clock). */
  readonly circuitTransitions: readonly CircuitTransition[];
  /** Retries that waited for a retry-budget token (once per record and wait). */
  readonly retriesDelayed: number;
}

/** The driver's mutable history and the task listeners that fill it. */
export class HistoryRecorder {
  readonly records: DriverRecordEvent[] = [];
  readonly flushes: DriverFlushEvent[] = [];
  readonly portErrors: DriverPortErrorEvent[] = [];
  readonly restarts: DriverRestart[] = [];
  readonly circuitTransitions: CircuitTransition[] = [];
  dedupSkipped = 0;
  retriesDelayed = 0;
  private readonly zombies = new Set<string>();

  constructor(private readonly clock: Clock) {}

  /** The listener of one task incarnation. */
  listener(instance: string): TaskListener {
    return {
      onRecord: (event) => this.records.push(this.zombies.has(instance) ? { ...event, instance, zombie: true } : { ...event, instance }),
      onFlush: (event) => this.flushes.push({ ...event, instance, atMs: this.clock.now() }),
      onPortError: (event) => this.portErrors.push({ ...event, instance, atMs: this.clock.now() }),
      onDedupSkipped: (event) => {
        this.dedupSkipped += event.records;
      },
      onRetryDelayed: () => {
        this.retriesDelayed++;
      },
    };
  }

  /** From now on, `instance` is a zombie: its record events are marked so. */
  markZombie(instance: string): void {
    this.zombies.add(instance);
  }

  /** A read-only snapshot with the faults that fired. */
  snapshot(faults: readonly FiredFault[]): DriverHistory {
    return {
      records: this.records.slice(),
      flushes: this.flushes.slice(),
      portErrors: this.portErrors.slice(),
      dedupSkipped: this.dedupSkipped,
      restarts: this.restarts.slice(),
      faults: faults.slice(),
      circuitTransitions: this.circuitTransitions.slice(),
      retriesDelayed: this.retriesDelayed,
    };
  }
}
