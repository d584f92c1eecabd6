import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { InputRecord } from '../record/record-types.js';
import { FetchDispatcher } from './fetch-dispatcher.js';
import type { NativeMessage } from './librdkafka-native.js';
import { PartitionFetches, type PartitionFetch } from './partition-fetches.js';

const tp = { topic: 't', partition: 0 };
const messages = (from: number, count: number): NativeMessage[] =>
  Array.from(
    { length: count },
    (_, i) =>
      ({
        topic: 't',
        partition: 0,
        offset: from + i,
        value: Buffer.from('v'),
        key: null,
        timestamp: 0,
        size: 1,
      }) as unknown as NativeMessage,
  );

function setup(stashLimit = 10, accept = true) {
  const fetches = new PartitionFetches();
  fetches.add(tp);
  const handed: Array<{ offsets: number[]; next: number }> = [];
  const skipped: number[] = [];
  const native: boolean[] = [];
  const dispatcher = new FetchDispatcher(
    fetches,
    {
      onBatch: (_topic, _partition, records: InputRecord[], next) => {
        if (accept) handed.push({ offsets: records.map((r) => r.offset), next });
        return accept;
      },
      onSkipped: (_topic, _partition, next) => void skipped.push(next),
    },
    (fetch: PartitionFetch, pause) => {
      native.push(pause);
      fetch.nativelyPaused = pause;
    },
    stashLimit,
  );
  return { fetches, dispatcher, handed, skipped, native };
}

describe('FetchDispatcher (librdkafka)', () => {
  it('stashes what a held partition fetches and hands it over first on release, without pausing librdkafka', async () => {
    const { dispatcher, handed, native } = setup();
    dispatcher.dispatch(messages(0, 3), []);
    dispatcher.hold(tp);
    dispatcher.dispatch(messages(3, 4), []);
    expect(handed).toEqual([{ offsets: [0, 1, 2], next: 3 }]);
    dispatcher.release(tp);
    // Records fetched after the release but before the stash's turn come after it.
    dispatcher.dispatch(messages(7, 2), []);
    await nextTurn();
    expect(handed.slice(1)).toEqual([{ offsets: [3, 4, 5, 6, 7, 8], next: 9 }]);
    expect(native).toEqual([]);
  });

  it('pauses librdkafka once the stash reaches its limit, and resumes it on release', async () => {
    const { dispatcher, handed, native, fetches } = setup(5);
    dispatcher.hold(tp);
    dispatcher.dispatch(messages(0, 3), []);
    expect(native).toEqual([]);
    dispatcher.dispatch(messages(3, 3), []);
    expect(native).toEqual([true]);
    dispatcher.release(tp);
    expect(native).toEqual([true, false]);
    await nextTurn();
    expect(handed).toEqual([{ offsets: [0, 1, 2, 3, 4, 5], next: 6 }]);
    expect(fetches.get(tp)?.next).toBe(6);
  });

  it('drops the stash on a seek (stale), and carries an end past transaction markers through a hold', async () => {
    const { dispatcher, handed, skipped, fetches } = setup();
    dispatcher.dispatch(messages(0, 2), []);
    dispatcher.hold(tp);
    dispatcher.dispatch(messages(2, 2), [{ topic: 't', partition: 0, offset: 6 }]);
    fetches.requestSeek(tp, 2);
    dispatcher.release(tp);
    await nextTurn();
    expect(handed).toEqual([{ offsets: [0, 1], next: 2 }]);
    fetches.get(tp)!.seekTo = undefined;
    dispatcher.hold(tp);
    dispatcher.dispatch([], [{ topic: 't', partition: 0, offset: 4 }]);
    dispatcher.release(tp);
    await nextTurn();
    expect(skipped).toEqual([4]);
  });

  it('asks to fetch a refused batch again from its first offset', () => {
    const { dispatcher, fetches } = setup(10, false);
    dispatcher.dispatch(messages(5, 3), []);
    expect(fetches.get(tp)?.seekTo).toBe(5);
  });
});
