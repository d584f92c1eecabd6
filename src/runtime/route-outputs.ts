import { withoutWeirHeaders } from '../record/weir-headers.js';
import type { ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { NoMatchingBranchError, SerializationError } from '../errors.js';
import type { InputRecord, OutputRecord, RecordHeaders } from '../record/record-types.js';
import type { SinkNode, Subtopology } from '../topology/compiled-topology.js';

/**
 * Routes a successful attempt's outputs to the success sinks and serializes them. The first
 * sink whose `when` holds takes an output (Kafka Streams' `split()` semantics); outputs keep
 * the input's timestamp and headers (weir's own headers removed), plus their own headers.
 *
 * @returns the records to write, or the error that sends the whole input record to the DLQ
 *   (`NoMatchingBranchError`, `SerializationError`, or what a `when` predicate threw) — a
 *   record's outputs are written all or none.
 */
export function routeOutputs(
  sub: Subtopology,
  raw: InputRecord,
  record: ProcessorRecord,
  outputs: readonly ProcessorOutput[],
): OutputRecord[] | { readonly error: unknown } {
  if (outputs.length === 0) return [];
  const baseHeaders = withoutWeirHeaders(raw.headers);
  const routed: OutputRecord[] = [];
  for (const output of outputs) {
    const key = output.key !== undefined ? output.key : record.key;
    const headers: RecordHeaders = output.headers ? { ...baseHeaders, ...output.headers } : baseHeaders;
    let sink: SinkNode | undefined;
    try {
      const view = { key, value: output.value, headers: output.headers ? { ...record.headers, ...output.headers } : record.headers };
      sink = sub.sinks.find((s) => s.when === null || s.when(view) === true);
    } catch (error) {
      return { error };
    }
    if (sink === undefined) return { error: new NoMatchingBranchError(sub.processor.name) };
    let keyBytes: Buffer | null;
    let valueBytes: Buffer | null;
    try {
      keyBytes = sink.keySerde.serialize(key);
    } catch (cause) {
      return { error: new SerializationError(sink.name, sink.keySerde.name, { cause }) };
    }
    try {
      valueBytes = sink.valueSerde.serialize(output.value);
    } catch (cause) {
      return { error: new SerializationError(sink.name, sink.valueSerde.name, { cause }) };
    }
    routed.push({ topic: sink.topic, key: keyBytes, value: valueBytes, headers, timestamp: raw.timestamp });
  }
  return routed;
}
