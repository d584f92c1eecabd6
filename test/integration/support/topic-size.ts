/** How many records a test's topic holds. */
import type { Admin } from 'kafkajs';
import { endOffsets } from '../../../scripts/lib/topic-io.js';

/** The records `topic` holds: its partitions' end offsets, summed (the tests' topics are neither compacted nor trimmed). */
export async function topicSize(admin: Admin, topic: string): Promise<number> {
  let n = 0;
  for (const partitions of (await endOffsets(admin, [topic])).values()) for (const end of partitions.values()) n += end;
  return n;
}
