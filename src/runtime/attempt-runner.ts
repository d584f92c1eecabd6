import type { Random } from '../failure/backoff.js';
import { historyFromHeaders, type RetryHistory } from '../failure/retry-history.js';
import type { InputRecord, OutputRecord } from '../record/record-types.js';
import { AttemptGate } from './attempt-gate.js';
import { withTraceHeaders, type AttemptSpan, type AttemptTracer } from './attempt-tracer.js';
import type { WaitReason } from './poll-result.js';
import type { Clock } from './ports.js';
import type { PreparedRecord } from './prepared-record.js';
import type { ProcessorResilience } from './processor-resilience.js';
import { runAttempt, type AttemptResult, type AttemptSetting } from './run-attempt.js';
import type { SubtopologyView } from './subtopology-view.js';
import type { Slot } from './task-buffer.js';
import type { TaskEvents } from './task-events.js';

/**
 * What became of the head record: decided (its outputs join the unit of work; at a chain step
 * before the last, `next` is the next step's input), or it waits at the head until `untilMs`.
 */
export type AttemptStep =
  | { readonly kind: 'decided'; readonly outputs: readonly OutputRecord[]; readonly next?: PreparedRecord; readonly park?: ParkRequest }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly reason: WaitReason };

/**
 * A failed record of an `order: 'key'` step that is to wait at its task (the `retry-parked`
 * outcome): the step it resumes at, that step's input as bytes, its attempts so far, and when
 * it is due (epoch ms).
 */
export interface ParkRequest {
  readonly step: number;
  readonly record: InputRecord;
  readonly history: RetryHistory;
  readonly dueAt: number;
}

/** What an {@link AttemptRunner} needs from its task. */
export interface AttemptRunnerOptions {
  readonly applicationId: string;
  /** The task's sub-topology, as plain objects. */
  readonly view: SubtopologyView;
  /** Whether the task reads a retry tier (the record's history is in its headers). */
  readonly fromRetryTier: boolean;
  readonly resilience: ProcessorResilience;
  readonly events: TaskEvents;
  readonly clock: Clock;
  readonly random: Random;
  /** Largest record, bytes. */
  readonly maxRecordBytes: number;
  /** Traces each attempt (a span per attempt, its context carried on in the outputs' headers); default none. */
  readonly tracer?: AttemptTracer;
}

/**
 * A task's way of attempting its head record: past the processor's retry budget and circuit
 * breaker ({@link AttemptGate}), through `runAttempt`, then — on failure — a retry in place, a
 * hold for the breaker, or a decided outcome (success, retry-tier copy, dead letter), each
 * reported to the task's listener.
 */
export class AttemptRunner {
  private readonly gate: AttemptGate;
  private readonly setting: AttemptSetting;
  /** The processor's name on the events of a chain's steps; undefined for a single processor. */
  private readonly step: string | undefined;

  constructor(private readonly options: AttemptRunnerOptions) {
    this.gate = new AttemptGate(options.resilience, options.events);
    this.step = options.view.sub.steps.size > 1 ? options.view.processorName : undefined;
    this.setting = {
      applicationId: options.applicationId,
      view: options.view,
      clock: options.clock,
      random: options.random,
      maxRecordBytes: options.maxRecordBytes,
    };
  }

  /** The task's clock now, epoch ms. */
  now(): number {
    return this.options.clock.now();
  }

  /**
   * Attempts the head record, unless its processor's breaker or budget says wait. The record
   * stays at the head (a wait) for a retry in place (`backoff`), a hold for the breaker
   * (`circuit-open`: the failure was charged to the dependency, so the record keeps the
   * attempts it had), or a retry waiting for a budget token (`retry-budget`).
   *
   * @param now the task's clock at the start, epoch ms
   * @returns the step at once when the processor answered synchronously, else a promise of it
   */
  attempt(slot: Slot, prepared: PreparedRecord, now: number): AttemptStep | Promise<AttemptStep> {
    const { events, clock, view } = this.options;
    const history = slot.retry?.history ?? historyFromHeaders(slot.raw, this.options.fromRetryTier);
    let probe = false;
    if (prepared.kind === 'ready') {
      const admission = this.gate.admit(slot, history, now);
      if (admission.kind === 'wait') return admission;
      probe = admission.probe;
    }
    const started = clock.now();
    const tracer = this.options.tracer;
    const span =
      tracer?.isActive() !== true
        ? undefined
        : tracer.start({
            applicationId: this.options.applicationId,
            processor: view.processorName,
            topic: slot.raw.topic,
            partition: slot.raw.partition,
            offset: slot.raw.offset,
            attempt: prepared.kind === 'unreadable' ? history.attempts : history.attempts + 1,
            maxAttempts: view.maxAttempts,
            key: slot.raw.key,
            headers: slot.raw.headers,
          });
    if (span === undefined) {
      const result = runAttempt(this.setting, prepared, history, events);
      if (result instanceof Promise) return result.then((r) => this.decide(slot, prepared, history, started, probe, r, undefined));
      return this.decide(slot, prepared, history, started, probe, result, undefined);
    }
    return span
      .run(async () => runAttempt(this.setting, prepared, history, events))
      .then((r) => this.decide(slot, prepared, history, started, probe, r, span));
  }

  /** What the attempt's result means for the record: counted by the breaker, reported, and decided or held. */
  private decide(
    slot: Slot,
    prepared: PreparedRecord,
    history: RetryHistory,
    started: number,
    probe: boolean,
    result: AttemptResult,
    span: AttemptSpan | undefined,
  ): AttemptStep {
    const { events, clock, view } = this.options;
    const call = result.call;
    const outcome = span === undefined ? result.outcome : withTraceHeaders(result.outcome, span.headers());
    const at = clock.now();
    const durationMs = call === 'none' ? undefined : at - started;
    const attempt = prepared.kind === 'unreadable' ? history.attempts : history.attempts + 1;
    // A record is held for the breaker at most maxAttempts times: after that its failures count
    // again, so a record that fails on its own (not because of the outage) still reaches the DLQ.
    const holds = slot.retry?.holds ?? 0;
    const tripped = call === 'none' ? undefined : this.gate.settle(at, call, probe, outcome);
    const heldUntil = holds < view.maxAttempts ? tripped : undefined;
    span?.end(
      outcome.kind === 'success'
        ? { outcome: heldUntil === undefined ? outcome.kind : 'held' }
        : { outcome: heldUntil === undefined ? outcome.kind : 'held', errorClass: outcome.errorClass, error: outcome.error },
    );
    if (heldUntil !== undefined) {
      const kept = { ...history, firstFailureMs: history.firstFailureMs ?? at };
      slot.retry = { history: kept, dueAt: heldUntil, held: true, holds: holds + 1 };
      events.held(slot.raw, outcome, attempt, at, heldUntil - at, durationMs, this.step);
      return { kind: 'wait', untilMs: heldUntil, reason: 'circuit-open' };
    }
    if (outcome.kind === 'retry-in-place' || outcome.kind === 'retry-parked') {
      const dueAt = at + outcome.delayMs;
      const next: RetryHistory = {
        ...history,
        attempts: attempt,
        // A parked retry is a hop of the record's way, as a tier topic's is: maxHops guards it too.
        hops: outcome.kind === 'retry-parked' ? history.hops + 1 : history.hops,
        firstFailureMs: history.firstFailureMs ?? at,
        lastDelayMs: outcome.delayMs,
      };
      events.outcome(slot.raw, outcome, attempt, at, durationMs, this.step);
      if (outcome.kind === 'retry-parked') {
        if (slot.retry !== undefined) slot.retry = undefined;
        return { kind: 'decided', outputs: [], park: { step: view.step.index, record: prepared.raw, history: next, dueAt } };
      }
      slot.retry = { history: next, dueAt, holds };
      return { kind: 'wait', untilMs: dueAt, reason: 'backoff' };
    }
    if (slot.retry !== undefined) slot.retry = undefined;
    // A chain step that hands its output on has not decided the record: the step that does reports it.
    if (outcome.kind === 'success' && outcome.next !== undefined) return { kind: 'decided', outputs: [], next: outcome.next };
    events.outcome(slot.raw, outcome, attempt, at, durationMs, this.step);
    return { kind: 'decided', outputs: outcome.kind === 'success' ? outcome.outputs : [outcome.output] };
  }
}
