import { withoutWeirHeaders } from '../record/weir-headers.js';
import type { ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { NoMatchingBranchError, SerializationError } from '../errors.js';
import type { InputRecord, OutputRecord, RecordHeaders } from '../record/record-types.js';
import type { SinkView, SubtopologyView } from './subtopology-view.js';

/** A routing failure: the whole input record goes to the DLQ with `error`. */
export interface RoutingError {
  readonly error: unknown;
}

/**
 * Routes a successful attempt's outputs to the success sinks and serializes them. The first
 * sink whose `when` holds takes an output (Kafka Streams' `split()` semantics), or, for a
 * multicast branch (`success: { all }`), every sink takes a copy of it, serialized with that
 * sink's serdes (Kafka Streams' repeated `to()`): output by output, sink by sink in branch
 * order. Outputs keep the input's timestamp and headers (weir's own headers removed), plus their
 * own headers.
 *
 * @param forwarded what the processor passed to `ctx.forward()`, in order (or undefined)
 * @param returned what the processor returned: one more output with the input's key, unless `undefined`
 * @returns the records to write, or the error that sends the whole input record to the DLQ
 *   (`NoMatchingBranchError`, `SerializationError`, or what a `when` predicate threw) — a
 *   record's outputs are written all or none.
 */
export function routeOutputs(
  view: SubtopologyView,
  raw: InputRecord,
  record: ProcessorRecord,
  forwarded: readonly ProcessorOutput[] | undefined,
  returned: unknown,
): OutputRecord[] | RoutingError {
  const count = (forwarded?.length ?? 0) + (returned === undefined ? 0 : 1);
  if (count === 0) return [];
  const baseHeaders = withoutWeirHeaders(raw.headers);
  if (view.multicast) return multicast(view, raw, baseHeaders, forwarded, record.key, returned);
  const routed: OutputRecord[] = new Array<OutputRecord>(count);
  let n = 0;
  for (const output of forwarded ?? []) {
    const out = routeOne(view, raw, record, baseHeaders, output.key !== undefined ? output.key : record.key, output.value, output.headers);
    if (!isRecord(out)) return out;
    routed[n++] = out;
  }
  if (returned !== undefined) {
    const out = routeOne(view, raw, record, baseHeaders, record.key, returned, undefined);
    if (!isRecord(out)) return out;
    routed[n] = out;
  }
  return routed;
}

function multicast(
  view: SubtopologyView,
  raw: InputRecord,
  baseHeaders: RecordHeaders,
  forwarded: readonly ProcessorOutput[] | undefined,
  inputKey: unknown,
  returned: unknown,
): OutputRecord[] | RoutingError {
  const outputs: ProcessorOutput[] = forwarded === undefined ? [] : [...forwarded];
  if (returned !== undefined) outputs.push({ key: inputKey, value: returned });
  const routed: OutputRecord[] = [];
  for (const output of outputs) {
    const key = output.key !== undefined ? output.key : inputKey;
    for (const sink of view.sinks) {
      const out = serializeTo(sink, raw, baseHeaders, key, output.value, output.headers);
      if (!isRecord(out)) return out;
      routed.push(out);
    }
  }
  return routed;
}

function isRecord(out: OutputRecord | RoutingError): out is OutputRecord {
  return 'topic' in out;
}

function routeOne(
  view: SubtopologyView,
  raw: InputRecord,
  record: ProcessorRecord,
  baseHeaders: RecordHeaders,
  key: unknown,
  value: unknown,
  extraHeaders: Readonly<Record<string, string>> | undefined,
): OutputRecord | RoutingError {
  let sink: SinkView | undefined;
  if (view.firstSinkTakesAll) sink = view.sinks[0];
  else {
    try {
      const outputView = { key, value, headers: extraHeaders ? { ...record.headers, ...extraHeaders } : record.headers };
      sink = view.sinks.find((s) => s.when === null || s.when(outputView) === true);
    } catch (error) {
      return { error };
    }
  }
  if (sink === undefined) return { error: new NoMatchingBranchError(view.processorName) };
  return serializeTo(sink, raw, baseHeaders, key, value, extraHeaders);
}

function serializeTo(
  sink: SinkView,
  raw: InputRecord,
  baseHeaders: RecordHeaders,
  key: unknown,
  value: unknown,
  extraHeaders: Readonly<Record<string, string>> | undefined,
): OutputRecord | RoutingError {
  let keyBytes: Buffer | null;
  let valueBytes: Buffer | null;
  try {
    keyBytes = sink.keySerde.serialize(key);
  } catch (cause) {
    return { error: new SerializationError(sink.name, sink.keySerde.name, { cause }) };
  }
  try {
    valueBytes = sink.valueSerde.serialize(value);
  } catch (cause) {
    return { error: new SerializationError(sink.name, sink.valueSerde.name, { cause }) };
  }
  const headers: RecordHeaders = extraHeaders ? { ...baseHeaders, ...extraHeaders } : baseHeaders;
  return { topic: sink.topic, key: keyBytes, value: valueBytes, headers, timestamp: raw.timestamp };
}
