import { WEIR_HEADERS, headerNumber, headerString } from '../record/weir-headers.js';
import type { Serde } from '../dsl/serdes.js';
import type { InputRecord } from '../record/record-types.js';
import { TestDriverError } from '../errors.js';

/**
 * The header the TopologyTestDriver stamps on every piped input (`<input id>`). It is not a
 * `weir.*` header, so it travels with the record to sink outputs, retry-tier copies and
 * dead letters: that is how invariants tie every output to the input it came from. A processor
 * that overwrites it in `forward({ headers })` breaks that link.
 */
export const TEST_INPUT_HEADER = 'x-weir-test-input';

/**
 * A record to pipe into the driver. Key and value are serialized with the topic's source
 * serdes; a `Buffer` key or value is written as it is (e.g. bad JSON, to test the DLQ path).
 */
export interface TestInput<K = unknown, V = unknown> {
  /** Absent or `null`: a record without a key. */
  readonly key?: K | Buffer | null;
  readonly value: V | Buffer | null;
  readonly headers?: Readonly<Record<string, string>>;
  /** Record timestamp, epoch ms; default the driver's clock. */
  readonly timestamp?: number;
  /** Explicit partition; default murmur2 of the key (as kafkajs and the Java client), else round robin. */
  readonly partition?: number;
}

/** A record the driver piped in, with where it landed. */
export interface PipedInput<K = unknown, V = unknown> {
  /** The driver-wide input number (0, 1, 2, … in pipe order); the {@link TEST_INPUT_HEADER}. */
  readonly id: number;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: K | Buffer | null;
  readonly value: V | Buffer | null;
  readonly rawKey: Buffer | null;
  readonly rawValue: Buffer | null;
  /** The user headers given (the {@link TEST_INPUT_HEADER} not included). */
  readonly headers: Readonly<Record<string, string>>;
}

/** A record read back from a topic. */
export interface TestOutput<K = unknown, V = unknown> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  /** Deserialized with the topic's serde (sink, or the source's for DLQ and retry tiers). */
  readonly key: K;
  /** Deserialized value; `undefined` when the bytes do not deserialize (see `rawValue`). */
  readonly value: V;
  readonly rawKey: Buffer | null;
  readonly rawValue: Buffer | null;
  /** Every header, decoded as UTF-8 (a repeated header keeps its last value). */
  readonly headers: Readonly<Record<string, string>>;
  /** How many values each header has (1 unless a header repeats). */
  readonly headerCounts: Readonly<Record<string, number>>;
  /** The input it came from ({@link TEST_INPUT_HEADER}), when the driver stamped one. */
  readonly input: number | undefined;
}

/** A dead-letter record with its weir headers decoded. */
export interface DeadLetter<K = unknown, V = unknown> extends TestOutput<K, V> {
  /** `weir.processor`. */
  readonly processor: string;
  /** `weir.attempts`: how many times the record was processed (0: it never reached the processor). */
  readonly attempts: number;
  /** `weir.error.class`. */
  readonly errorClass: string;
  /** `weir.error.message`. */
  readonly errorMessage: string;
  /** `weir.original.*`: where the record first came in. */
  readonly original: { readonly topic: string; readonly partition: number; readonly offset: number };
  /** `weir.first.failure.ms` / `weir.last.failure.ms`, epoch ms. */
  readonly firstFailureMs: number | undefined;
  readonly lastFailureMs: number | undefined;
}

/** Key and value serdes of a topic. */
export interface TopicSerdes {
  readonly key: Serde<any>;
  readonly value: Serde<any>;
}

/**
 * Serializes one input.
 *
 * @throws Error naming the topic, the record index and the serde when serialization fails
 */
export function serializeInput(
  topic: string,
  index: number,
  input: TestInput,
  serdes: TopicSerdes,
): { key: Buffer | null; value: Buffer | null } {
  const encode = (part: 'key' | 'value', serde: Serde<any>, value: unknown): Buffer | null => {
    if (value === undefined || value === null) return null;
    if (Buffer.isBuffer(value)) return value;
    try {
      return serde.serialize(value);
    } catch (error) {
      throw new TestDriverError(
        `pipeInput('${topic}') record ${index}: cannot serialize the ${part} with serde '${serde.name}': ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
  return { key: encode('key', serdes.key, input.key), value: encode('value', serdes.value, input.value) };
}

function decode(serde: Serde<any> | undefined, bytes: Buffer | null): unknown {
  if (serde === undefined) return bytes;
  try {
    return serde.deserialize(bytes);
  } catch {
    return undefined;
  }
}

/** A stored record as a {@link TestOutput}, decoded with `serdes` (raw Buffers without). */
export function toTestOutput(record: InputRecord, serdes: TopicSerdes | undefined): TestOutput {
  const headers: Record<string, string> = {};
  const headerCounts: Record<string, number> = {};
  for (const [name, value] of Object.entries(record.headers)) {
    if (value === undefined) continue;
    headers[name] = headerString(record.headers, name)!;
    headerCounts[name] = Array.isArray(value) ? value.length : 1;
  }
  const input = headerNumber(record.headers, TEST_INPUT_HEADER);
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    key: decode(serdes?.key, record.key),
    value: decode(serdes?.value, record.value),
    rawKey: record.key,
    rawValue: record.value,
    headers,
    headerCounts,
    input,
  };
}

/** A stored dead-letter record as a {@link DeadLetter}. */
export function toDeadLetter(record: InputRecord, serdes: TopicSerdes | undefined): DeadLetter {
  const out = toTestOutput(record, serdes);
  const h = record.headers;
  return {
    ...out,
    processor: headerString(h, WEIR_HEADERS.processor) ?? '',
    attempts: headerNumber(h, WEIR_HEADERS.attempts) ?? Number.NaN,
    errorClass: headerString(h, WEIR_HEADERS.errorClass) ?? '',
    errorMessage: headerString(h, WEIR_HEADERS.errorMessage) ?? '',
    original: {
      topic: headerString(h, WEIR_HEADERS.originalTopic) ?? record.topic,
      partition: headerNumber(h, WEIR_HEADERS.originalPartition) ?? record.partition,
      offset: headerNumber(h, WEIR_HEADERS.originalOffset) ?? record.offset,
    },
    firstFailureMs: headerNumber(h, WEIR_HEADERS.firstFailureMs),
    lastFailureMs: headerNumber(h, WEIR_HEADERS.lastFailureMs),
  };
}

/** `topic/partition@offset`: how invariants name a record. */
export function coordinates(r: { readonly topic: string; readonly partition: number; readonly offset: number }): string {
  return `${r.topic}/${r.partition}@${r.offset}`;
}

/** How invariants name an input: `input #3 (orders/0@3, key "c-1")`. */
export function describeInput(input: PipedInput): string {
  const key = input.rawKey === null ? 'no key' : `key ${JSON.stringify(input.rawKey.toString('utf8'))}`;
  return `input #${input.id} (${coordinates(input)}, ${key})`;
}
