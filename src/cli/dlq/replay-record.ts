import type { InputRecord, OutputRecord, RecordHeaders } from '../../record/record-types.js';
import { WEIR_HEADERS, WEIR_HEADER_PREFIX, WEIR_ORIGINAL_PREFIX, headerNumber, headerString } from '../../record/weir-headers.js';

/** The replay limit when neither `--max-replays` nor the record's `weir.replay.max` gives one. */
export const DEFAULT_MAX_REPLAYS = 3;

/** Where `weir dlq replay` sends records: each record's original topic, or one named topic. */
export type ReplayTarget = { readonly kind: 'original' } | { readonly kind: 'topic'; readonly topic: string };

/** Options of {@link buildReplayRecord}. */
export interface ReplayRecordOptions {
  readonly target: ReplayTarget;
  /** The dead-letter topic being replayed: a record is never replayed into it (a loop). */
  readonly dlqTopic: string;
  /**
   * Replay limit for every record (`--max-replays`); default: the record's `weir.replay.max`
   * (the processor's `retry.maxReplays`), else {@link DEFAULT_MAX_REPLAYS}.
   */
  readonly maxReplays?: number;
}

/** Why a record is not replayed. */
export type ReplayRefusal =
  /** `weir.replay.count` reached the replay limit: the record stays in the DLQ for good. */
  | 'max-replays'
  /** `--to original`, but the record has no `weir.original.topic`. */
  | 'no-original-topic'
  /** The target is the dead-letter topic itself. */
  | 'target-is-dlq'
  /** `weir.replay.count` or `weir.replay.max` is not a whole number ≥ 0: the record's replay state cannot be trusted. */
  | 'bad-replay-header'
  /**
   * `weir.omitted`: the dead letter was too large and left out its value, headers or key
   * (`fitDeadLetter`), so it does not hold the record: replayed, the processor would get
   * `null` in their place (an empty value written to every sink).
   */
  | 'omitted-parts';

/** What to do with one dead-letter record. */
export type ReplayDecision =
  | { readonly kind: 'replay'; readonly output: OutputRecord; readonly replayCount: number }
  | { readonly kind: 'refused'; readonly reason: ReplayRefusal; readonly detail: string };

/**
 * The replay limit that applies to a dead-letter record: `override` (`--max-replays`), else
 * its `weir.replay.max` header, else {@link DEFAULT_MAX_REPLAYS}.
 */
export function replayLimitOf(record: InputRecord, override?: number): number {
  return override ?? headerNumber(record.headers, WEIR_HEADERS.replayMax) ?? DEFAULT_MAX_REPLAYS;
}

/**
 * The headers of a replayed record: the user's headers, weir's `weir.original.*` headers and
 * `weir.step` (a dead letter of a chain step after the first: the step it resumes at) kept,
 * every other `weir.*` header dropped (attempts, errors and retry state start again), and
 * `weir.replay.count` set to `replayCount`.
 */
export function replayHeaders(headers: RecordHeaders, replayCount: number): RecordHeaders {
  const out: RecordHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (name.startsWith(WEIR_HEADER_PREFIX) && !name.startsWith(WEIR_ORIGINAL_PREFIX) && name !== WEIR_HEADERS.step) continue;
    out[name] = value;
  }
  out[WEIR_HEADERS.replayCount] = String(replayCount);
  return out;
}

/**
 * Decides what `weir dlq replay` does with one dead-letter record: the copy to publish —
 * key and value unchanged, to the original topic (`weir.original.topic`) or the named topic,
 * partitioned by key like the original producer's default partitioner, with attempts reset
 * and `weir.replay.count` incremented — or why it is refused (the replay limit reached, no
 * original topic, a target that is the DLQ itself, a replay header that is not a count —
 * `weir.replay.count: -5` would buy five extra replays —, or a dead letter that left out parts
 * of the record to fit the size limit).
 *
 * @example
 * const decision = buildReplayRecord(dlqRecord, { target: { kind: 'original' }, dlqTopic: 'payments.dlq' });
 * if (decision.kind === 'replay') await producer.send([decision.output]);
 */
export function buildReplayRecord(record: InputRecord, options: ReplayRecordOptions): ReplayDecision {
  for (const name of [WEIR_HEADERS.replayCount, WEIR_HEADERS.replayMax]) {
    const text = headerString(record.headers, name);
    if (text !== undefined && !/^\d+$/.test(text.trim()))
      return { kind: 'refused', reason: 'bad-replay-header', detail: `${name} '${text}' is not a whole number ≥ 0` };
  }
  const omitted = headerString(record.headers, WEIR_HEADERS.omitted);
  if (omitted !== undefined) {
    const step = headerString(record.headers, WEIR_HEADERS.step);
    const where =
      step !== undefined
        ? `the input of chain step '${step}' is in no topic: produce it again from the source record at ${WEIR_ORIGINAL_PREFIX}*`
        : `the record is still in its source topic at ${WEIR_ORIGINAL_PREFIX}*: produce it again from there`;
    return {
      kind: 'refused',
      reason: 'omitted-parts',
      detail: `too large for the DLQ (${headerString(record.headers, WEIR_HEADERS.omittedBytes) ?? '?'} bytes), it left out its ${omitted}; ${where}`,
    };
  }
  const count = headerNumber(record.headers, WEIR_HEADERS.replayCount) ?? 0;
  const limit = replayLimitOf(record, options.maxReplays);
  if (count >= limit) {
    return { kind: 'refused', reason: 'max-replays', detail: `replayed ${count} time(s) already; the limit is ${limit}` };
  }
  let topic: string;
  if (options.target.kind === 'topic') {
    topic = options.target.topic;
  } else {
    const original = headerString(record.headers, WEIR_HEADERS.originalTopic);
    if (original === undefined || original === '')
      return { kind: 'refused', reason: 'no-original-topic', detail: `no ${WEIR_HEADERS.originalTopic} header` };
    topic = original;
  }
  if (topic === options.dlqTopic)
    return { kind: 'refused', reason: 'target-is-dlq', detail: `the target '${topic}' is the dead-letter topic itself` };
  return {
    kind: 'replay',
    output: { topic, key: record.key, value: record.value, headers: replayHeaders(record.headers, count + 1) },
    replayCount: count + 1,
  };
}
