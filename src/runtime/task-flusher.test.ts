import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { InMemoryKafka } from '../testing/in-memory-kafka.js';
import { ManualClock } from '../testing/manual-clock.js';
import { compile } from '../topology/compile.js';
import type { PartitionTaskOptions } from './partition-task-options.js';
import type { TransactionalProducer } from './ports.js';
import { TaskFlusher, type TaskFlusherParts } from './task-flusher.js';

const compiled = compile(
  topology({ applicationId: 'app', processingGuarantee: 'exactly_once', commitIntervalMs: 100 })
    .source('in')
    .process('p', (r) => r.value)
    .branch({ success: sink('out') }),
);

describe('TaskFlusher.commitDue', () => {
  it('is due at the end of the commit interval, or earlier when the shared transaction waits for its tasks (exactly_once_v2)', () => {
    const clock = new ManualClock();
    const kafka = new InMemoryKafka(clock);
    let wanted = false;
    const transactions: TransactionalProducer = { ...kafka.transactionalProducer('app-member'), commitWanted: () => wanted };
    const options = {
      topology: compiled,
      topic: 'in',
      partition: 0,
      startOffset: 0,
      clock,
      output: { guarantee: 'exactly_once', transactions, offsets: kafka.offsetReader() },
    } as PartitionTaskOptions;
    const flusher = new TaskFlusher(options, {} as TaskFlusherParts);
    expect(flusher.commitDue()).toBe(false);
    wanted = true;
    expect(flusher.commitDue()).toBe(true);
    wanted = false;
    clock.advance(100);
    expect(flusher.commitDue()).toBe(true);
  });

  it('never asks an at_least_once task to commit early', () => {
    const clock = new ManualClock();
    const kafka = new InMemoryKafka(clock);
    const options = {
      topology: compiled,
      topic: 'in',
      partition: 0,
      startOffset: 0,
      clock,
      output: { guarantee: 'at_least_once', producer: kafka.producer(), committer: kafka.committer('app') },
    } as unknown as PartitionTaskOptions;
    const flusher = new TaskFlusher(options, {} as TaskFlusherParts);
    expect(flusher.commitDue()).toBe(false);
    clock.advance(99);
    expect(flusher.commitDue()).toBe(false);
    clock.advance(1);
    expect(flusher.commitDue()).toBe(true);
  });
});
