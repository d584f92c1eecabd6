import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { InputRecord } from '../record/record-types.js';
import { FetchDispatcher } from './fetch-dispatcher.js';
import { nativeMessages } from './librdkafka.test-support.js';
import { PartitionFetches } from './partition-fetches.js';

const tp = { topic: 't', partition: 0 };

function setup(stashLimit = 10, accept = true, nativeTakes = true) {
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
    (_tp, pause) => {
      native.push(pause);
      return nativeTakes;
    },
    stashLimit,
  );
  return { fetches, dispatcher, handed, skipped, native };
}

describe('FetchDispatcher (librdkafka)', () => {
  it('hands each partition its own records in offset order when one poll interleaves partitions and topics', () => {
    const fetches = new PartitionFetches();
    const tps = [tp, { topic: 't', partition: 1 }, { topic: 'u', partition: 0 }];
    for (const p of tps) fetches.add(p);
    const handed: string[] = [];
    const dispatcher = new FetchDispatcher(
      fetches,
      {
        onBatch: (topic, partition, records: InputRecord[], next) => {
          handed.push(`${topic}-${partition}: ${records.map((r) => `${r.topic}-${r.partition}@${r.offset}`).join(' ')} next ${next}`);
          return true;
        },
        onSkipped: () => undefined,
      },
      () => true,
      10,
    );
    const at = (p: { topic: string; partition: number }, offset: number) => ({ ...nativeMessages(offset, 1)[0]!, ...p });
    const [t0, t1, u0] = tps as [typeof tp, typeof tp, typeof tp];
    dispatcher.dispatch([at(t0, 0), at(t0, 1), at(t1, 0), at(t0, 2), at(u0, 0), at(u0, 1), at(t1, 1), at(t0, 3)], []);
    expect(handed.sort()).toEqual(['t-0: t-0@0 t-0@1 t-0@2 t-0@3 next 4', 't-1: t-1@0 t-1@1 next 2', 'u-0: u-0@0 u-0@1 next 2']);
  });

  it('stashes what a held partition fetches and hands it over first on release, without pausing librdkafka', async () => {
    const { dispatcher, handed, native } = setup();
    dispatcher.dispatch(nativeMessages(0, 3), []);
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(3, 4), []);
    expect(handed).toEqual([{ offsets: [0, 1, 2], next: 3 }]);
    dispatcher.release(tp);
    // Records fetched after the release but before the stash's turn come after it.
    dispatcher.dispatch(nativeMessages(7, 2), []);
    await nextTurn();
    expect(handed.slice(1)).toEqual([{ offsets: [3, 4, 5, 6, 7, 8], next: 9 }]);
    expect(native).toEqual([]);
  });

  it('pauses librdkafka once the stash reaches its limit, and resumes it on release', async () => {
    const { dispatcher, handed, native, fetches } = setup(5);
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(0, 3), []);
    expect(native).toEqual([]);
    dispatcher.dispatch(nativeMessages(3, 3), []);
    expect(native).toEqual([true]);
    dispatcher.release(tp);
    expect(native).toEqual([true, false]);
    await nextTurn();
    expect(handed).toEqual([{ offsets: [0, 1, 2, 3, 4, 5], next: 6 }]);
    expect(fetches.get(tp)?.next).toBe(6);
  });

  it('drops the stash on a seek (stale), and carries an end past transaction markers through a hold', async () => {
    const { dispatcher, handed, skipped, fetches } = setup();
    dispatcher.dispatch(nativeMessages(0, 2), []);
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(2, 2), [{ topic: 't', partition: 0, offset: 6 }]);
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

  it('goes fetching → held → paused → fetching, and a repeated hold or release changes nothing', () => {
    const { dispatcher, fetches, native } = setup(2);
    const fetch = fetches.get(tp)!;
    dispatcher.release(tp);
    expect(fetch.state).toBe('fetching');
    dispatcher.hold(tp);
    dispatcher.hold(tp);
    expect(fetch.state).toBe('held');
    dispatcher.dispatch(nativeMessages(0, 2), []);
    expect(fetch.state).toBe('paused');
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(2, 1), []);
    expect(fetch.state).toBe('paused');
    expect(native).toEqual([true]);
    dispatcher.release(tp);
    dispatcher.release(tp);
    expect(fetch.state).toBe('fetching');
    expect(native).toEqual([true, false]);
  });

  it('stays held when librdkafka refuses its pause (disconnected), and asks again on the next batch', () => {
    const { dispatcher, fetches, native } = setup(2, true, false);
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(0, 2), []);
    dispatcher.dispatch(nativeMessages(2, 1), []);
    expect(fetches.get(tp)!.state).toBe('held');
    expect(native).toEqual([true, true]);
  });

  it("hands nothing over while revoking, and a release still lifts librdkafka's pause", async () => {
    const { dispatcher, fetches, handed, native } = setup(2);
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(0, 2), []);
    fetches.markRevoking(tp);
    const fetch = fetches.get(tp)!;
    expect(fetch.state).toBe('revoking-paused');
    dispatcher.hold(tp);
    dispatcher.dispatch(nativeMessages(2, 2), [{ topic: 't', partition: 0, offset: 9 }]);
    dispatcher.release(tp);
    expect(fetch.state).toBe('revoking');
    expect(native).toEqual([true, false]);
    dispatcher.hold(tp);
    dispatcher.release(tp);
    await nextTurn();
    expect(fetch.state).toBe('revoking');
    expect(native).toEqual([true, false]);
    expect(handed).toEqual([]);
  });

  it('asks to fetch a refused batch again from its first offset', () => {
    const { dispatcher, fetches } = setup(10, false);
    dispatcher.dispatch(nativeMessages(5, 3), []);
    expect(fetches.get(tp)?.seekTo).toBe(5);
  });
});
