import { AttemptRunner, type AttemptRunnerOptions, type AttemptStep } from './attempt-runner.js';
import { prepareRecord, type PreparedRecord } from './prepared-record.js';
import type { ProcessorResilience } from './processor-resilience.js';
import { subtopologyView, type SourceSerdes } from './subtopology-view.js';
import type { DedupPolicy, Subtopology } from '../topology/compiled-topology.js';
import type { Slot } from './task-buffer.js';
import type { InputRecord } from '../record/record-types.js';
import { WEIR_HEADERS, headerString } from '../record/weir-headers.js';
import { UnknownChainStepError } from '../errors.js';

/** What a {@link ChainRunner} needs: the attempt runner options but the view and the guards, which are per step. */
export interface ChainRunnerOptions extends Omit<AttemptRunnerOptions, 'view' | 'resilience' | 'fromRetryTier'> {
  readonly sub: Subtopology;
  /** The step the task's records start at: 0 on a source, the tier's step on a retry tier. */
  readonly start: number;
  /** Whether the task reads a retry tier (the start step's history is in the record's headers). */
  readonly fromRetryTier: boolean;
  /** The circuit breaker and retry budget of each step's processor. */
  readonly resilienceOf: (processor: string) => ProcessorResilience;
}

/**
 * A task's way through its sub-topology's processor chain: attempts the head record at the
 * step it reached, hands each step's output to the next step, and returns when the record is
 * decided (sink outputs, a retry-tier copy or a dead letter of the step that failed) or has to
 * wait. A record that waits (a retry in place, a hold for a breaker) keeps the step it reached
 * and that step's input in its slot: the retry runs that step again, never the ones before it.
 * A chain of one step is one {@link AttemptRunner}.
 */
export class ChainRunner {
  /** One runner per step from the start step on; earlier ones are never run by this task. */
  private readonly runners: AttemptRunner[] = [];
  private readonly start: number;
  private readonly sub: Subtopology;
  private readonly fromRetryTier: boolean;

  constructor(options: ChainRunnerOptions) {
    const { sub, start, resilienceOf, ...rest } = options;
    this.start = start;
    this.sub = sub;
    this.fromRetryTier = options.fromRetryTier;
    for (const step of sub.steps) {
      if (step.index < start) continue;
      this.runners[step.index] = new AttemptRunner({
        ...rest,
        view: subtopologyView(sub, step.index),
        // Only the start step reads the record's history from its headers: a later step is a new
        // processor for the record, whose attempts start at 1.
        fromRetryTier: options.fromRetryTier && step.index === start,
        resilience: resilienceOf(step.processor.name),
      });
    }
  }

  /**
   * The chain step a source record resumes at: a record carrying `weir.step` (a dead letter of a
   * step after the first, replayed to the source) resumes at that step; undefined: the task's
   * start (no `weir.step`, or the first step's name).
   *
   * @returns an UnknownChainStepError when `weir.step` names no step of this chain (the record is dead-lettered with it)
   */
  resumeStep(raw: InputRecord): number | UnknownChainStepError | undefined {
    if (this.fromRetryTier) return undefined;
    const name = headerString(raw.headers, WEIR_HEADERS.step);
    if (name === undefined) return undefined;
    const step = this.sub.steps.find((s) => s.processor.name === name);
    if (step === undefined) return new UnknownChainStepError(name, this.sub.steps.map((s) => s.processor.name).toArray());
    return step.index <= this.start ? undefined : step.index;
  }

  /**
   * Deserializes a slot's record (`slot.prepared`) with the serdes of the step it starts at:
   * the task's start step (`source`, with `dedup`), or, for a replayed dead letter of a later
   * step ({@link resumeStep}), that step's input serdes, without dedup (its key was confirmed),
   * and the slot's chain position set there. A `weir.step` naming no step makes it unreadable
   * ({@link UnknownChainStepError}): it goes to the start step's DLQ.
   */
  prepare(slot: Slot, source: SourceSerdes, dedup: DedupPolicy | null): void {
    const resume = this.resumeStep(slot.raw);
    if (resume === undefined) slot.prepared = prepareRecord(slot.raw, source, dedup);
    else if (typeof resume !== 'number') slot.prepared = { kind: 'unreadable', raw: slot.raw, error: resume, dedupKey: null };
    else {
      slot.prepared = prepareRecord(slot.raw, subtopologyView(this.sub, resume).source, null);
      slot.chain = { step: resume, prepared: slot.prepared };
    }
  }

  /**
   * Attempts the head record from the step it reached (see {@link AttemptRunner.attempt}).
   *
   * @param prepared the record as read, deserialized with the start step's input serdes
   * @param now the task's clock at the start, epoch ms
   * @returns the step at once when every processor called answered synchronously, else a promise of it
   */
  attempt(slot: Slot, prepared: PreparedRecord, now: number): AttemptStep | Promise<AttemptStep> {
    const at = slot.chain ?? { step: this.start, prepared };
    return this.from(slot, at.step, at.prepared, now);
  }

  private from(slot: Slot, step: number, prepared: PreparedRecord, now: number): AttemptStep | Promise<AttemptStep> {
    for (;;) {
      const result = this.runners[step]!.attempt(slot, prepared, now);
      if (result instanceof Promise) return result.then((r) => this.after(slot, step, prepared, r));
      const settled = this.settle(slot, step, prepared, result);
      if (settled !== undefined) return settled;
      const next = (result as AttemptStep & { kind: 'decided' }).next!;
      step += 1;
      prepared = next;
      now = this.runners[step]!.now();
    }
  }

  private after(slot: Slot, step: number, prepared: PreparedRecord, result: AttemptStep): AttemptStep | Promise<AttemptStep> {
    const settled = this.settle(slot, step, prepared, result);
    if (settled !== undefined) return settled;
    return this.from(slot, step + 1, (result as AttemptStep & { kind: 'decided' }).next!, this.runners[step]!.now());
  }

  /** The step's result when it ends this call (a wait, or the record decided), else undefined: go on to the next step. */
  private settle(slot: Slot, step: number, prepared: PreparedRecord, result: AttemptStep): AttemptStep | undefined {
    if (result.kind === 'wait') {
      slot.chain = step === this.start ? undefined : { step, prepared };
      return result;
    }
    if (result.next === undefined) {
      if (slot.chain !== undefined) slot.chain = undefined;
      return result;
    }
    slot.chain = { step: step + 1, prepared: result.next };
    return undefined;
  }
}
