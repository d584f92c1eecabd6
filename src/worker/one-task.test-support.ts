/**
 * Test support for the worker's task unit tests: the task of `in`-0 (processor `p` → `out`,
 * at_least_once) on in-memory Kafka with the wall clock, and a runner around it. Not part of
 * the build.
 */
import type { Logger } from 'pino';
import type { ProcessOptions } from '../dsl/process-options.js';
import type { ProcessorFn } from '../dsl/processor.js';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { PartitionTask } from '../runtime/partition-task.js';
import type { DedupStore, OffsetCommitter } from '../runtime/ports.js';
import { InMemoryKafka } from '../testing/in-memory-kafka.js';
import { compile } from '../topology/compile.js';
import { TaskRunner } from './task-runner.js';

/** What to build; `fn` forwards the value by default. */
export interface OneTaskOptions {
  readonly fn?: ProcessorFn<string | null, any, any>;
  readonly options?: ProcessOptions;
  readonly dedupStore?: DedupStore;
}

/** The in-memory broker with `in`, `out` and `app.p.dlq`, and a factory of `in`-0's task. */
export function oneTask({ fn = (r) => r.value, options = {}, dedupStore }: OneTaskOptions = {}) {
  const clock = { now: () => Date.now() };
  const kafka = new InMemoryKafka(clock);
  for (const t of ['in', 'out', 'app.p.dlq']) kafka.createTopic(t);
  const compiled = compile(
    topology('app')
      .source('in', 'json')
      .process('p', fn, options)
      .branch({ success: sink('out') }),
  );
  /** The task of `in`-0 from offset 0, committing through `committer` (the broker's group `app` by default). */
  const newTask = (committer: OffsetCommitter = kafka.committer('app')): PartitionTask =>
    new PartitionTask({
      topology: compiled,
      topic: 'in',
      partition: 0,
      startOffset: 0,
      clock,
      output: { guarantee: 'at_least_once', producer: kafka.producer(), committer },
      ...(dedupStore ? { dedupStore } : {}),
    });
  /** A runner of `task` (100 records buffered at most, paused after 1 s). */
  const newRunner = (
    task: PartitionTask,
    hooks: {
      readonly logger: Logger;
      readonly setPaused?: (paused: boolean) => void;
      readonly onClosed: (state: 'closed' | 'fenced') => void;
    },
  ): TaskRunner =>
    new TaskRunner(task, {
      maxBufferedRecords: 100,
      pauseAfterMs: 1_000,
      setPaused: hooks.setPaused ?? (() => undefined),
      logger: hooks.logger,
      onClosed: hooks.onClosed,
    });
  /** Produces `{"a":1}` to `in` and returns every record of `in`-0. */
  const produceOne = async () => {
    await kafka.producer().send([{ topic: 'in', key: null, value: Buffer.from('{"a":1}'), headers: {} }]);
    return kafka.read('in', 0, 0).records;
  };
  return { kafka, newTask, newRunner, produceOne };
}
