import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { AwaitedCommits } from './awaited-commits.js';
import type { NativeConsumer, NativeTopicPartitionOffset } from './librdkafka-native.js';

/** A consumer whose `commit` only records what was enqueued, as librdkafka's `commitAsync`. */
function fakeConsumer(): {
  consumer: NativeConsumer;
  enqueued: NativeTopicPartitionOffset[][];
  answer: (err: unknown, offsets?: NativeTopicPartitionOffset[]) => void;
} {
  const emitter = new EventEmitter();
  const enqueued: NativeTopicPartitionOffset[][] = [];
  const consumer = Object.assign(emitter, {
    commit: (offsets: NativeTopicPartitionOffset[]) => {
      enqueued.push(offsets);
      return consumer;
    },
  }) as unknown as NativeConsumer;
  return { consumer, enqueued, answer: (err, offsets) => emitter.emit('offset.commit', err, offsets) };
}

const settled = async (promise: Promise<unknown>): Promise<string> =>
  Promise.race([
    promise.then(
      () => 'resolved',
      () => 'rejected',
    ),
    new Promise<string>((r) => setImmediate(() => r('pending'))),
  ]);

describe('AwaitedCommits', () => {
  it('settles a commit only when the coordinator answered it, matched by partitions and offsets', async () => {
    const { consumer, enqueued, answer } = fakeConsumer();
    const commits = new AwaitedCommits(consumer);
    const first = commits.commit([{ topic: 't', partition: 0, offset: 5 }]);
    const second = commits.commit([{ topic: 't', partition: 1, offset: 9 }]);
    expect(enqueued).toHaveLength(2);
    expect(await settled(first)).toBe('pending');
    answer(undefined, [{ topic: 't', partition: 1, offset: 9 }]);
    expect(await settled(second)).toBe('resolved');
    expect(await settled(first)).toBe('pending');
    answer(Object.assign(new Error('Broker: Specified group generation id is not valid'), { code: 22 }), [
      { topic: 't', partition: 0, offset: 5 },
    ]);
    await expect(first).rejects.toThrow(/generation/);
  });

  it('takes an answer without offsets for the oldest commit, and gives up after 60 s without one', async () => {
    vi.useFakeTimers();
    try {
      const { consumer, answer } = fakeConsumer();
      const commits = new AwaitedCommits(consumer);
      const first = commits.commit([{ topic: 't', partition: 0, offset: 1 }]);
      const second = commits.commit([{ topic: 't', partition: 0, offset: 2 }]);
      answer(new Error('Local: No offset stored'));
      await expect(first).rejects.toThrow(/No offset/);
      const late = expect(second).rejects.toThrow(/no answer to the offset commit within 60000 ms/);
      await vi.advanceTimersByTimeAsync(60_000);
      await late;
      // An answer that comes after the timeout settles nothing.
      answer(undefined, [{ topic: 't', partition: 0, offset: 2 }]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails waiting and later commits at once when the consumer stops polling (no answer would come)', async () => {
    const { consumer, enqueued } = fakeConsumer();
    const commits = new AwaitedCommits(consumer);
    const waiting = commits.commit([{ topic: 't', partition: 0, offset: 1 }]);
    commits.abandon(new Error('stopped fetching'));
    await expect(waiting).rejects.toThrow(/stopped fetching/);
    await expect(commits.commit([{ topic: 't', partition: 0, offset: 2 }])).rejects.toThrow(/stopped fetching/);
    expect(enqueued).toHaveLength(1);
  });
});
