/**
 * What the stream-threads tests (stream-threads-*.test.ts) read back of `weir run --threads n`
 * with the scripted topology: its output records, which name the thread that wrote them, their
 * distinct ids, and a thread's `partitions assigned` log lines.
 */
import type { ReadRecord } from '../../../scripts/lib/topic-io.js';
import type { WorkerLogLine } from '../../../scripts/lib/worker-process.js';
import { scriptOf, type Script } from './scripted-scenario.js';

/** An output record of the scripted topology, with the process and thread that wrote it. */
export type ThreadOutput = Script & {
  readonly attempt: number;
  readonly pid: number;
  readonly threadId: number;
  readonly writtenAtMs: number;
  readonly input: string;
};

/** The output `record` carries. */
export const outputOf = (record: ReadRecord): ThreadOutput => scriptOf(record) as ThreadOutput;

/** How many distinct script ids `records` hold. */
export const distinct = (records: readonly ReadRecord[]): number => new Set(records.map((r) => scriptOf(r).id)).size;

/** Matches the `partitions assigned` log lines of stream thread `thread`. */
export const assigned = (thread: number) => (l: WorkerLogLine) => l.msg === 'partitions assigned' && l['thread'] === thread;
