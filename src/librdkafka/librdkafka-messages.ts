import type { InputRecord, RecordHeaders } from '../record/record-types.js';
import type { NativeHeader, NativeMessage } from './librdkafka-native.js';

/**
 * The headers of every message without any: one frozen object, not one per record (a record stays
 * in the heap until its transaction commits, and its garbage is collected in V8's old
 * generation; bench/README.md, "A hand-written loop on the same binding"). Nothing in weir writes
 * to an input record's headers: a record with other headers is always a new object.
 */
const NO_HEADERS: RecordHeaders = Object.freeze({});

/** The binding's headers (one object per header, in order) as weir's: a repeated key becomes an array, like kafkajs. */
export function toRecordHeaders(headers: readonly NativeHeader[] | undefined): RecordHeaders {
  if (headers === undefined || headers.length === 0) return NO_HEADERS;
  const out: RecordHeaders = {};
  for (const header of headers) {
    for (const key in header) {
      const value = header[key]!;
      const previous = out[key];
      if (previous === undefined) out[key] = value;
      else if (Array.isArray(previous)) previous.push(value);
      else out[key] = [previous, value];
    }
  }
  return out;
}

/** weir's headers as the binding's: one object per value, a repeated key once per value. */
export function toNativeHeaders(headers: RecordHeaders): NativeHeader[] | undefined {
  let out: NativeHeader[] | undefined;
  for (const key in headers) {
    const value = headers[key];
    if (value === undefined) continue;
    out ??= [];
    if (Array.isArray(value)) for (const v of value) out.push({ [key]: v });
    else out.push({ [key]: value });
  }
  return out;
}

/**
 * A consumed message as a weir input record. `topic`: the partition's topic string, shared by its
 * records (the binding makes a new string per message); default the message's own.
 */
export function toInputRecord(message: NativeMessage, topic: string = message.topic): InputRecord {
  const key = message.key;
  return {
    topic,
    partition: message.partition,
    offset: message.offset,
    timestamp: message.timestamp ?? 0,
    key: key === undefined || key === null ? null : typeof key === 'string' ? Buffer.from(key) : key,
    value: message.value,
    headers: toRecordHeaders(message.headers),
  };
}
