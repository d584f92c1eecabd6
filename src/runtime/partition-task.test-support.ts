/**
 * Test support for PartitionTask unit tests: one task (or several) of a one-processor
 * topology, run by hand on the in-memory broker with a manual clock. Not part of the build.
 */
import { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
import type { ProcessOptions } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import { sink } from '../dsl/sink.js';
import { topology, type ProcessingGuarantee } from '../dsl/topology-builder.js';
import type { RecordHeaders } from '../record/record-types.js';
import { transactionalId } from '../record/task-id.js';
import { InMemoryKafka } from '../testing/in-memory-kafka.js';
import { ManualClock } from '../testing/manual-clock.js';
import { compile } from '../topology/compile.js';
import { PartitionTask } from './partition-task.js';
import type { PollResult } from './poll-result.js';
import type { DedupStore } from './ports.js';
import type { PortErrorEvent, RecordEvent, TaskListener } from './task-listener.js';

/** The application id of every harness topology. */
export const APP = 'app';

/** What to build: `in` → processor `p` → `out`, dead letters to `dlq`. */
export interface TaskHarnessOptions {
  readonly fn: ProcessorFn<string | null, any, any>;
  readonly options?: ProcessOptions;
  readonly guarantee?: ProcessingGuarantee;
  /** Partitions of `in`; default 1. */
  readonly partitions?: number;
  /** The tasks' record size limit, bytes. */
  readonly maxRecordBytes?: number;
  /** Another listener of every task (e.g. the worker's metrics), beside the harness' own. */
  readonly listener?: TaskListener;
}

/** One record to produce; an object value is sent as JSON, a string as it is. */
export interface HarnessRecord {
  readonly value: unknown;
  readonly key?: string | null;
  readonly headers?: RecordHeaders;
  readonly partition?: number;
}

/** Builds the topology, its topics, a dedup store and the listeners' logs. */
export function taskHarness({
  fn,
  options = {},
  guarantee = 'at_least_once',
  partitions = 1,
  maxRecordBytes,
  listener,
}: TaskHarnessOptions) {
  const clock = new ManualClock();
  const kafka = new InMemoryKafka(clock);
  const compiled = compile(
    topology({ applicationId: APP, processingGuarantee: guarantee, commitIntervalMs: 100 })
      .source('in', 'json')
      .process('p', fn, options)
      .branch({ success: sink('out'), dlq: sink('dlq') }),
  );
  const tiers = compiled.subtopologies
    .get(0)!
    .retryTiers.map((t) => t.topic)
    .toArray();
  for (const t of ['out', 'dlq', ...tiers]) kafka.createTopic(t);
  kafka.createTopic('in', partitions);
  const store = new MemoryDedupStore(clock);
  const events: RecordEvent[] = [];
  const portErrors: PortErrorEvent[] = [];
  const skipped: number[] = [];
  const warnings: string[] = [];

  const makeTask = (topic = 'in', partition = 0, dedupStore: DedupStore = store): PartitionTask =>
    new PartitionTask({
      topology: compiled,
      topic,
      partition,
      startOffset: kafka.committedOffset(APP, topic, partition) ?? 0,
      clock,
      random: () => 0.5,
      output:
        guarantee === 'at_least_once'
          ? { guarantee, producer: kafka.producer(), committer: kafka.committer(APP) }
          : {
              guarantee,
              transactions: kafka.transactionalProducer(transactionalId(APP, { topic, partition })),
              offsets: kafka.offsetReader(),
            },
      dedupStore,
      ...(maxRecordBytes !== undefined ? { maxRecordBytes } : {}),
      listener: {
        ...listener,
        onWarning: (e) => warnings.push(e.message),
        onRecord: (e) => events.push(e),
        onPortError: (e) => {
          portErrors.push(e);
          listener?.onPortError?.(e);
        },
        onDedupSkipped: (e) => skipped.push(e.records),
      },
    });

  const send = (records: readonly HarnessRecord[], topic = 'in') =>
    kafka.producer().send(
      records.map((r) => ({
        topic,
        key: r.key === undefined || r.key === null ? null : Buffer.from(r.key),
        value:
          r.value === undefined || r.value === null ? null : Buffer.from(typeof r.value === 'string' ? r.value : JSON.stringify(r.value)),
        headers: r.headers ?? {},
        ...(r.partition !== undefined ? { partition: r.partition } : {}),
      })),
    );

  /** Feeds what is readable and polls until idle or closed (or `maxSteps`), moving the clock as asked. */
  const drive = async (task: PartitionTask, maxSteps = 10_000): Promise<PollResult | undefined> => {
    for (let step = 0; step < maxSteps; step++) {
      const { records, nextOffset } = kafka.read(task.topic, task.partition, task.position);
      task.enqueue(records, nextOffset);
      const r = await task.poll();
      if (r.kind === 'closed' || r.kind === 'idle') return r;
      if (r.kind === 'wait' && r.untilMs > clock.now()) clock.set(r.untilMs);
    }
    return undefined;
  };

  /** Runs the source task and every tier task (partition 0) until none has work left. */
  const runAll = async (): Promise<void> => {
    const tasks = ['in', ...tiers].map((topic) => makeTask(topic));
    for (let round = 0; round < 1000; round++) {
      const before = tasks.map((t) => t.position).join();
      for (const task of tasks) await drive(task);
      const after = tasks.map((t) => kafka.endOffset(t.topic, 0)).join();
      if (before === after && tasks.every((t) => t.position === kafka.endOffset(t.topic, 0))) return;
    }
    throw new Error('retry topics did not settle');
  };

  /** A topic's values, parsed as JSON. */
  const values = (topic: string): unknown[] => kafka.readAll(topic).map((r) => (r.value === null ? null : JSON.parse(r.value.toString())));

  return { clock, kafka, compiled, tiers, store, events, portErrors, skipped, warnings, makeTask, send, drive, runAll, values };
}
