import type { ClassifyFn } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import type { Serde } from '../dsl/serdes.js';
import type { OutputView } from '../dsl/topology-builder.js';
import type { ChainStep, Subtopology } from '../topology/compiled-topology.js';

/** The serdes a source reads with (a compiled `SourceNode`, or a task's plain copy of them). */
export interface SourceSerdes {
  readonly keySerde: Serde<any>;
  readonly valueSerde: Serde<any>;
}

/** A success sink as the hot path reads it. */
export interface SinkView {
  readonly name: string;
  readonly topic: string;
  readonly keySerde: Serde<any>;
  readonly valueSerde: Serde<any>;
  readonly when: ((output: OutputView<any>) => boolean) | null;
}

/** The next step of a chain, as the step before it hands its output on. */
export interface NextStepView {
  readonly index: number;
  readonly name: string;
  /** The serdes the next step's input is written with in its tiers and DLQ. */
  readonly keySerde: Serde<any>;
  readonly valueSerde: Serde<any>;
}

/**
 * The fields of one chain step of a sub-topology (the only step, for a single processor) that a
 * task reads for every record, copied out of the
 * compiled topology into plain objects once: reading a field of an immutable.js `Record` is a
 * map lookup, and searching a `List` builds an iterator, which together cost a worker about a
 * tenth of its per-record CPU. The compiled topology stays the one source of truth; the failure
 * path, which runs rarely, still reads `sub`.
 */
export interface SubtopologyView {
  /** The compiled sub-topology this view was taken from. */
  readonly sub: Subtopology;
  /** The chain step this view is of. */
  readonly step: ChainStep;
  /** The step after this one; null for the last (its outputs go to the sinks). */
  readonly next: NextStepView | null;
  readonly processorName: string;
  readonly fn: ProcessorFn<any, any, any>;
  /** Longest attempt, ms; null = no limit. */
  readonly timeoutMs: number | null;
  readonly maxAttempts: number;
  readonly classify: ClassifyFn | null;
  /** The serdes the step's input is read with: the source's for the first step, its `inputSerdes` after. */
  readonly source: SourceSerdes;
  /** The success sinks, in branch order. */
  readonly sinks: readonly SinkView[];
  /** The first sink takes every output (it has no `when`): routing needs no predicate. */
  readonly firstSinkTakesAll: boolean;
  /** Every sink takes a copy of every output (`success: { all: [...] }`, multicast). */
  readonly multicast: boolean;
}

const views = new WeakMap<Subtopology, SubtopologyView[]>();

/** The plain view of step `index` (default the first) of `sub`, made once per step and shared by its tasks. */
export function subtopologyView(sub: Subtopology, index = 0): SubtopologyView {
  let list = views.get(sub);
  if (list === undefined) views.set(sub, (list = []));
  let view = list[index];
  if (view !== undefined) return view;
  const step = sub.steps.get(index) ?? sub.steps.get(0)!;
  const processor = step.processor;
  const nextStep = sub.steps.get(step.index + 1);
  const sinks: SinkView[] = sub.sinks.toArray().map((s) => ({
    name: s.name,
    topic: s.topic,
    keySerde: s.keySerde,
    valueSerde: s.valueSerde,
    when: s.when,
  }));
  view = Object.freeze({
    sub,
    step,
    next:
      nextStep === undefined
        ? null
        : Object.freeze({
            index: nextStep.index,
            name: nextStep.processor.name,
            keySerde: nextStep.inputKeySerde,
            valueSerde: nextStep.inputValueSerde,
          }),
    processorName: processor.name,
    fn: processor.fn,
    timeoutMs: processor.timeoutMs,
    maxAttempts: processor.retry.maxAttempts,
    classify: processor.classify,
    source: Object.freeze({ keySerde: step.inputKeySerde, valueSerde: step.inputValueSerde }),
    sinks: Object.freeze(sinks.map((s) => Object.freeze(s))),
    firstSinkTakesAll: sinks[0]?.when === null,
    multicast: sub.successRouting === 'all',
  });
  list[index] = view;
  return view;
}
