import { recordBytes } from '../record/record-size.js';
import type { OutputRecord } from '../record/record-types.js';

export { recordBytes };

/**
 * Most bytes (estimated) one produce request carries. Kafka rejects a record batch larger
 * than the broker's `message.max.bytes` (1 MiB by default) per partition; kafkajs does not
 * split batches, so weir keeps whole requests under half of that.
 */
export const MAX_REQUEST_BYTES = 512 * 1024;

/** How large one produce request may get: estimated bytes, and records. */
export interface RequestLimits {
  readonly maxBytes: number;
  readonly maxRecords: number;
}

/** {@link MAX_REQUEST_BYTES}, and no limit on the record count. */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = Object.freeze({ maxBytes: MAX_REQUEST_BYTES, maxRecords: Number.POSITIVE_INFINITY });

/**
 * Splits records, in order, into chunks within `limits` (a record larger than `maxBytes`
 * gets a chunk of its own).
 */
export function chunkRecords(records: readonly OutputRecord[], limits: RequestLimits = DEFAULT_REQUEST_LIMITS): OutputRecord[][] {
  const { maxBytes, maxRecords } = limits;
  const chunks: OutputRecord[][] = [];
  let current: OutputRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = recordBytes(record);
    if (current.length > 0 && (bytes + size > maxBytes || current.length >= maxRecords)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

interface Waiter {
  readonly records: readonly OutputRecord[];
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Coalesces concurrent sends into few produce requests, like the Java producer's record
 * accumulator: sends made while a request is in flight (or in the same tick) go out together
 * in the next one, within `limits` per request. Each caller's records stay in order and
 * together; a caller's promise settles when all of its records are acknowledged, or rejects
 * with the error of the request that carried them.
 */
export class ProduceBatcher {
  private readonly queue: Waiter[] = [];
  private running = false;

  constructor(
    private readonly sendRequest: (records: readonly OutputRecord[]) => Promise<void>,
    private readonly limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
  ) {}

  send(records: readonly OutputRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ records, bytes: records.reduce((n, r) => n + recordBytes(r), 0), resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.pump());
      }
    });
  }

  private async pump(): Promise<void> {
    while (this.queue.length > 0) {
      const batch: Waiter[] = [this.queue.shift()!];
      let bytes = batch[0]!.bytes;
      let count = batch[0]!.records.length;
      const { maxBytes, maxRecords } = this.limits;
      while (this.queue.length > 0 && bytes + this.queue[0]!.bytes <= maxBytes && count + this.queue[0]!.records.length <= maxRecords) {
        bytes += this.queue[0]!.bytes;
        count += this.queue[0]!.records.length;
        batch.push(this.queue.shift()!);
      }
      try {
        const records = batch.length === 1 ? batch[0]!.records : batch.flatMap((w) => w.records);
        // Only a single caller's send can be over the limits (several are taken only within them).
        if (bytes <= maxBytes && count <= maxRecords) await this.sendRequest(records);
        else for (const chunk of chunkRecords(records, this.limits)) await this.sendRequest(chunk);
        for (const w of batch) w.resolve();
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.running = false;
  }
}
