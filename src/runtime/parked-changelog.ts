import { z } from 'zod';
import { ParkedStateError } from '../errors.js';
import type { InputRecord, OutputRecord, RecordHeaders } from '../record/record-types.js';
import { headerString } from '../record/weir-headers.js';
import type { ParkedRecord } from './parked-records.js';

/**
 * The changelog of an `order: 'key'` chain's parked records: a compacted topic,
 * `<application.id>.<first ordered processor>.parked` with the source's partition count, that
 * the task writes in the unit of work that parks, reschedules or resolves a record — so under
 * exactly_once in the same transaction as the outputs and the input offset — and reads from its
 * start when it takes the partition on, as Kafka Streams restores a state store from its
 * changelog topic.
 *
 * One record per parked record, keyed by its input offset (decimal, UTF-8), so compaction keeps
 * the latest state of each: its value is the parked record's value, its headers the record's
 * own plus `weir.parked`, a JSON object with the rest (key, step, origin, history, due time). A
 * resolved record's entry is a tombstone (null value). A parked record whose own value is null
 * is written with an empty value and `"nullValue": true`, so compaction never takes it for a
 * tombstone.
 */
export const PARKED_HEADER = 'weir.parked';

const parkedMeta = z.strictObject({
  v: z.literal(1),
  keyId: z.string().min(1),
  key: z.string().nullable(),
  nullValue: z.boolean().optional(),
  step: z.int().nonnegative(),
  topic: z.string().min(1),
  partition: z.int().nonnegative(),
  timestamp: z.number(),
  attempts: z.int().nonnegative(),
  hops: z.int().nonnegative(),
  replayCount: z.int().nonnegative(),
  firstFailureMs: z.number().optional(),
  lastDelayMs: z.number().nonnegative().optional(),
  dueAt: z.number().optional(),
});
type ParkedMeta = z.infer<typeof parkedMeta>;

/** The changelog record that holds `parked` as it is now (an upsert of its entry). */
export function parkedChangelogRecord(
  changelog: { readonly topic: string; readonly partition: number },
  parked: ParkedRecord,
): OutputRecord {
  const { record, history } = parked;
  const meta: ParkedMeta = {
    v: 1,
    keyId: parked.keyId,
    key: record.key === null ? null : record.key.toString('base64'),
    ...(record.value === null ? { nullValue: true } : {}),
    step: parked.step,
    topic: record.topic,
    partition: record.partition,
    timestamp: record.timestamp,
    attempts: history.attempts,
    hops: history.hops,
    replayCount: history.replayCount,
    ...(history.firstFailureMs !== undefined ? { firstFailureMs: history.firstFailureMs } : {}),
    ...(history.lastDelayMs !== undefined ? { lastDelayMs: history.lastDelayMs } : {}),
    ...(parked.dueAt !== undefined ? { dueAt: parked.dueAt } : {}),
  };
  return {
    topic: changelog.topic,
    partition: changelog.partition,
    key: Buffer.from(String(parked.offset)),
    value: record.value ?? Buffer.alloc(0),
    headers: { ...record.headers, [PARKED_HEADER]: JSON.stringify(meta) },
  };
}

/** The changelog record that removes the entry of the parked record at `offset` (a tombstone). */
export function parkedTombstone(changelog: { readonly topic: string; readonly partition: number }, offset: number): OutputRecord {
  return { topic: changelog.topic, partition: changelog.partition, key: Buffer.from(String(offset)), value: null, headers: {} };
}

/**
 * The parked records a changelog partition holds: its records applied in offset order (the
 * latest entry per key wins, a tombstone removes it).
 *
 * @param records the partition's records from its start, in offset order
 * @throws ParkedStateError naming the topic, partition and offset of a record that is not a
 *   parked record nor a tombstone
 */
export function readParkedChangelog(records: Iterable<InputRecord>): ParkedRecord[] {
  const live = new Map<number, ParkedRecord>();
  for (const entry of records) {
    const where = `changelog record ${entry.topic}-${entry.partition}@${entry.offset}`;
    const offset = entry.key === null ? Number.NaN : Number(entry.key.toString('utf8'));
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new ParkedStateError(
        `${where}: its key is not an input offset (${entry.key === null ? 'null' : JSON.stringify(entry.key.toString('utf8'))})`,
      );
    if (entry.value === null) {
      live.delete(offset);
      continue;
    }
    live.set(offset, decode(entry, offset, where));
  }
  return [...live.values()];
}

function decode(entry: InputRecord, offset: number, where: string): ParkedRecord {
  const text = headerString(entry.headers, PARKED_HEADER);
  if (text === undefined) throw new ParkedStateError(`${where}: it has no ${PARKED_HEADER} header`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new ParkedStateError(`${where}: its ${PARKED_HEADER} header is not JSON`, { cause });
  }
  const parsed = parkedMeta.safeParse(json);
  if (!parsed.success) throw new ParkedStateError(`${where}: its ${PARKED_HEADER} header is invalid: ${z.prettifyError(parsed.error)}`);
  const meta = parsed.data;
  const headers: RecordHeaders = { ...entry.headers };
  delete headers[PARKED_HEADER];
  return {
    offset,
    keyId: meta.keyId,
    step: meta.step,
    record: {
      topic: meta.topic,
      partition: meta.partition,
      offset,
      timestamp: meta.timestamp,
      key: meta.key === null ? null : Buffer.from(meta.key, 'base64'),
      value: meta.nullValue === true ? null : entry.value,
      headers,
    },
    history: {
      attempts: meta.attempts,
      hops: meta.hops,
      replayCount: meta.replayCount,
      firstFailureMs: meta.firstFailureMs,
      ...(meta.lastDelayMs !== undefined ? { lastDelayMs: meta.lastDelayMs } : {}),
    },
    dueAt: meta.dueAt,
  };
}
