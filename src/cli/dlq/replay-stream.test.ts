import { describe, expect, it } from 'vitest';
import { ReplayFencedError } from '../../errors.js';
import type { RangeBatchContext, TopicRangeReadOptions } from '../../kafka/topic-range.js';
import type { InputRecord, OutputRecord } from '../../record/record-types.js';
import { WEIR_HEADERS } from '../../record/weir-headers.js';
import type { DlqTool } from './dlq-tool.js';
import type { ReplayPlan } from './replay-plan.js';
import type { ReplayCounts, ReplayProgress } from './replay-progress.js';
import { streamReplay } from './replay-stream.js';
import type { ReplayTransactions } from './replay-transactions.js';

const DLQ = 'pay.dlq';

/** A dead letter at `offset` of an original record `origin` of `pay`, failed with `errorClass`. */
function deadLetter(offset: number, origin: number, errorClass = 'GatewayTimeout', replayCount = 0): InputRecord {
  return {
    topic: DLQ,
    partition: 0,
    offset,
    timestamp: 1_700_000_000_000,
    key: Buffer.from(`k${origin}`),
    value: Buffer.from(`{"n":${origin}}`),
    headers: {
      [WEIR_HEADERS.originalTopic]: 'pay',
      [WEIR_HEADERS.originalPartition]: '0',
      [WEIR_HEADERS.originalOffset]: String(origin),
      [WEIR_HEADERS.processor]: 'charge',
      [WEIR_HEADERS.errorClass]: errorClass,
      [WEIR_HEADERS.lastFailureMs]: '1700000000000',
      [WEIR_HEADERS.replayMax]: '2',
      [WEIR_HEADERS.replayCount]: String(replayCount),
    },
  };
}

/**
 * Partition 0 of a DLQ written in transactions, offsets 0–7: records at 0, 1, 3, 4 and 6, a
 * commit marker at 2, 5 and 7. The reader hands over two batches, each ending past its record
 * (`end`), and passes the trailing marker at 7 without a batch, as kafkajs and librdkafka do.
 */
const batches: { records: InputRecord[]; end: number }[] = [
  { records: [deadLetter(0, 10), deadLetter(1, 11, 'Other'), deadLetter(3, 12)], end: 3 + 1 },
  { records: [deadLetter(4, 10), deadLetter(6, 13, 'GatewayTimeout', 2)], end: 6 + 1 },
];

function plan(dryRun: boolean): ReplayPlan {
  const ranges = new Map([[0, { from: 0, to: 8 }]]);
  return {
    dlqTopic: DLQ,
    target: { kind: 'original' },
    group: 'weir-replay.pay.dlq',
    dryRun,
    rate: undefined,
    maxReplays: undefined,
    whole: ranges,
    ranges,
    existingTopics: new Set(['pay', DLQ]),
    title: `Replay of ${DLQ} → original topics`,
  };
}

function fakeTool(): DlqTool {
  const readTopicRange = async (options: TopicRangeReadOptions): Promise<void> => {
    for (const { records, end } of batches) {
      const ctx: RangeBatchContext = { progress: async () => {}, heartbeat: async () => {}, end };
      await options.onRecords(records, ctx);
    }
  };
  return { client: { readTopicRange }, throwawayGroup: (purpose: string) => `weir-dlq-${purpose}` } as unknown as DlqTool;
}

function recordingProgress() {
  const updates: { counts: ReplayCounts; offsets: number }[] = [];
  const stops: { counts: ReplayCounts; offsets: number }[] = [];
  const progress: ReplayProgress = {
    update: (counts, offsets) => updates.push({ counts, offsets }),
    stop: (counts, offsets) => stops.push({ counts, offsets }),
  };
  return { progress, updates, stops };
}

describe('streamReplay', () => {
  it('replays what passes the filter once per original, commits each batch end, and counts the rest', async () => {
    const writes: { records: readonly OutputRecord[]; offset: number }[] = [];
    const txns = {
      write: async (records: readonly OutputRecord[], position: { offset: number }) =>
        void writes.push({ records, offset: position.offset }),
    } as unknown as ReplayTransactions;
    const { progress } = recordingProgress();
    const { tally, interrupted, fenced } = await streamReplay(
      plan(false),
      fakeTool(),
      { errorClasses: ['GatewayTimeout'] },
      txns,
      progress,
    );

    expect({ interrupted, fenced }).toEqual({ interrupted: false, fenced: undefined });
    expect(tally.counts()).toEqual({ scanned: 5, replayed: 2, refused: 1, skipped: 1 });
    expect(tally.duplicates).toBe(1);
    expect(Object.fromEntries(tally.refusedBy)).toEqual({ 'max-replays': 1 });
    expect(Object.fromEntries(tally.replayedTo)).toEqual({ pay: 2 });
    // Each batch's records and its end (past its markers) in one transaction.
    expect(writes.map((w) => ({ offset: w.offset, values: w.records.map((r) => r.value?.toString()) }))).toEqual([
      { offset: 4, values: ['{"n":10}', '{"n":12}'] },
      { offset: 7, values: [] },
    ]);
  });

  it('ends the progress at the total offsets, transaction markers included; a fenced run where it stopped', async () => {
    const { progress, updates, stops } = recordingProgress();
    await streamReplay(plan(true), fakeTool(), {}, undefined, progress);
    // After each batch: its end (4, then 7); the marker at 7 is passed only by the read's end.
    expect(updates.map((u) => u.offsets)).toEqual([4, 7]);
    expect(stops).toEqual([{ counts: { scanned: 5, replayed: 3, refused: 1, skipped: 0 }, offsets: 8 }]);

    // A fenced run ends where its last transaction put it.
    const fenced = recordingProgress();
    let chunks = 0;
    const txns = {
      write: async () => {
        if (++chunks === 2) throw new ReplayFencedError(DLQ, 'weir-replay.pay.dlq.producer');
      },
    } as unknown as ReplayTransactions;
    const result = await streamReplay(plan(false), fakeTool(), {}, txns, fenced.progress);
    expect(result.fenced).toBeInstanceOf(ReplayFencedError);
    expect(fenced.stops.map((s) => s.offsets)).toEqual([4]);
  });
});
