import { WEIR_HEADERS, headerNumber, userHeaderStrings } from '../record/weir-headers.js';
import type { ProcessorRecord } from '../dsl/processor.js';
import { DeserializationError } from '../errors.js';
import type { InputRecord } from '../record/record-types.js';
import type { DedupPolicy } from '../topology/compiled-topology.js';
import type { SourceSerdes } from './subtopology-view.js';

/**
 * A raw record made ready for its processor:
 * - `ready`: deserialized, with its dedup key (`null` when dedup is off or the record has none);
 * - `unreadable`: deserialization (or the dedup key) failed; it goes to the DLQ as it is.
 */
export type PreparedRecord =
  | { readonly kind: 'ready'; readonly raw: InputRecord; readonly record: ProcessorRecord; readonly dedupKey: string | null }
  | { readonly kind: 'unreadable'; readonly raw: InputRecord; readonly error: unknown; readonly dedupKey: null };

function deserialize(raw: InputRecord, source: SourceSerdes): ProcessorRecord | DeserializationError {
  let key: unknown;
  try {
    key = source.keySerde.deserialize(raw.key);
  } catch (cause) {
    return new DeserializationError('key', source.keySerde.name, { cause });
  }
  let value: unknown;
  try {
    value = source.valueSerde.deserialize(raw.value);
  } catch (cause) {
    return new DeserializationError('value', source.valueSerde.name, { cause });
  }
  return {
    key,
    value,
    headers: userHeaderStrings(raw.headers),
    topic: raw.topic,
    partition: raw.partition,
    offset: raw.offset,
    timestamp: raw.timestamp,
  };
}

/**
 * Deserializes a raw record with the source's serdes and computes its dedup key (with
 * `#replay-<n>` appended for a record replayed from the DLQ, `weir.replay.count` = n).
 * Never throws: a failing serde or dedup-key function becomes `error`.
 */
export function prepareRecord(raw: InputRecord, source: SourceSerdes, dedup: DedupPolicy | null): PreparedRecord {
  const record = deserialize(raw, source);
  if (record instanceof DeserializationError) return { kind: 'unreadable', raw, error: record, dedupKey: null };
  if (dedup === null) return { kind: 'ready', raw, record, dedupKey: null };
  try {
    const key = dedup.key(record);
    if (key === undefined || key === null) return { kind: 'ready', raw, record, dedupKey: null };
    // A replay from the DLQ is a new delivery of a record whose key is confirmed: it is
    // deduplicated per replay, so it is not dropped as a duplicate of its original.
    const replays = headerNumber(raw.headers, WEIR_HEADERS.replayCount) ?? 0;
    return { kind: 'ready', raw, record, dedupKey: replays > 0 ? `${String(key)}#replay-${replays}` : String(key) };
  } catch (error) {
    return { kind: 'unreadable', raw, error, dedupKey: null };
  }
}
