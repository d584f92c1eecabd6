import type { InputRecord } from './record-types.js';
import { WEIR_HEADERS, headerNumber, headerString } from './weir-headers.js';

/** Where a record first came in: its source topic, partition, offset and timestamp (ms). */
export interface RecordOrigin {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
}

/**
 * The origin of a record: from its `weir.original.*` headers when it is a retry-tier or
 * replayed record, else the record's own coordinates.
 */
export function recordOrigin(record: InputRecord): RecordOrigin {
  const topic = headerString(record.headers, WEIR_HEADERS.originalTopic);
  const partition = headerNumber(record.headers, WEIR_HEADERS.originalPartition);
  const offset = headerNumber(record.headers, WEIR_HEADERS.originalOffset);
  if (topic === undefined || partition === undefined || offset === undefined) {
    return { topic: record.topic, partition: record.partition, offset: record.offset, timestamp: record.timestamp };
  }
  const timestamp = headerNumber(record.headers, WEIR_HEADERS.originalTimestamp) ?? record.timestamp;
  return { topic, partition, offset, timestamp };
}
