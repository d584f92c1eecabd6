import { describe, expect, it, vi } from 'vitest';
import { CommittedOffsetReader } from './committed-offset-reader.js';
import { NativeClients } from './librdkafka-native-clients.js';
import type { LibrdkafkaConfig } from './librdkafka-native.js';

type Answer = { partition: number; offset?: number; metadata?: string } | Error;
const UNSTABLE = 'Broker: There are unstable offsets that need to be cleared';

/** Native clients whose consumers answer `committed()` from `script` (one call each, in turn). */
function fakeClients(script: Array<(asked: number[]) => Answer[]>) {
  const configs: Array<Record<string, unknown>> = [];
  const asked: number[][] = [];
  let disconnected = 0;
  let heard = 0;
  const clients = {
    consumer: (config: Record<string, unknown>) => {
      configs.push(config);
      return {
        committed: (partitions: Array<{ topic: string; partition: number }>, _timeoutMs: number, cb: (err: null, a: Answer[]) => void) => {
          const ps = partitions.map((p) => p.partition);
          asked.push(ps);
          const next = script.shift() ?? ((xs: number[]) => xs.map((partition) => ({ partition })));
          setImmediate(() => cb(null, next(ps)));
        },
        disconnect: (cb: (err: null) => void) => {
          disconnected++;
          cb(null);
        },
      };
    },
    connect: async () => () => undefined,
    // The real helper, over the fake consumer and connect above.
    nonJoiningConsumer(config: Record<string, unknown>) {
      return NativeClients.prototype.nonJoiningConsumer.call(this as unknown as NativeClients, config as LibrdkafkaConfig);
    },
    router: { heard: () => heard++ },
  } as unknown as NativeClients;
  return { clients, configs, asked, disconnected: () => disconnected, heard: () => heard };
}

describe('CommittedOffsetReader', () => {
  it('reads offsets and metadata through one consumer per group and isolation level; a partition without an offset is absent', async () => {
    const fake = fakeClients([
      () => [{ partition: 0, offset: 42, metadata: 'weir:abc:1' }, { partition: 1 }, { partition: 2, offset: 7, metadata: '' }],
      () => [{ partition: 0, offset: 43 }],
      () => [{ partition: 0, offset: 44 }],
    ]);
    const reader = new CommittedOffsetReader(fake.clients, 5_000);
    const first = await reader.read('app', 'in', [0, 1, 2], true);
    expect([...first]).toEqual([
      [0, { offset: 42, metadata: 'weir:abc:1' }],
      [2, { offset: 7, metadata: undefined }],
    ]);
    expect((await reader.read('app', 'in', [0], true)).get(0)).toEqual({ offset: 43, metadata: undefined });
    expect((await reader.read('app', 'in', [0], false)).get(0)?.offset).toBe(44);
    // require_stable comes with read_committed (librdkafka sets it from isolation.level).
    expect(fake.configs).toEqual([
      { 'group.id': 'app', 'enable.auto.commit': false, 'isolation.level': 'read_committed' },
      { 'group.id': 'app', 'enable.auto.commit': false, 'isolation.level': 'read_uncommitted' },
    ]);
    expect(fake.heard()).toBe(3);
    await reader.close();
    expect(fake.disconnected()).toBe(2);
  });

  it('disconnects only once the reads under way answered (a consumer disconnected under committed() crashes the binding), and refuses reads after close', async () => {
    const events: string[] = [];
    let answer: (() => void) | undefined;
    const clients = {
      nonJoiningConsumer: async () => ({
        committed: (partitions: Array<{ partition: number }>, _timeoutMs: number, cb: (err: null, a: Answer[]) => void) => {
          events.push('committed');
          answer = () =>
            cb(
              null,
              partitions.map((p) => ({ partition: p.partition, offset: 3 })),
            );
        },
        disconnect: (cb: (err: null) => void) => {
          events.push('disconnect');
          cb(null);
        },
      }),
      router: { heard: () => undefined },
    } as unknown as NativeClients;
    const reader = new CommittedOffsetReader(clients, 5_000);
    const read = reader.read('app', 'in', [0], true);
    await vi.waitFor(() => expect(events).toEqual(['committed']));
    const closed = reader.close();
    await expect(reader.read('app', 'in', [0], true)).rejects.toThrow('closed');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual(['committed']);
    answer!();
    expect((await read).get(0)?.offset).toBe(3);
    await closed;
    expect(events).toEqual(['committed', 'disconnect']);
  });

  it('asks again for the partitions still unstable (require_stable), and only those', async () => {
    const fake = fakeClients([
      () => [{ partition: 0, offset: 5 }, new Error(UNSTABLE), { partition: 2, offset: 9 }],
      () => [new Error(UNSTABLE)],
      () => [{ partition: 1, offset: 12, metadata: 'weir:x:3' }],
    ]);
    const offsets = await new CommittedOffsetReader(fake.clients, 5_000).read('app', 'in', [0, 1, 2], true);
    expect(fake.asked).toEqual([[0, 1, 2], [1], [1]]);
    expect(offsets.get(1)).toEqual({ offset: 12, metadata: 'weir:x:3' });
    expect(offsets.size).toBe(3);
  });

  it('fails on any other partition error, on an unstable one without require_stable, and on one still unstable at the deadline', async () => {
    await expect(
      new CommittedOffsetReader(
        fakeClients([() => [{ partition: 0, offset: 1 }, new Error('Broker: Not coordinator')]]).clients,
        5_000,
      ).read('app', 'in', [0, 1], true),
    ).rejects.toThrow('Broker: Not coordinator');
    await expect(
      new CommittedOffsetReader(fakeClients([() => [new Error(UNSTABLE)]]).clients, 5_000).read('app', 'in', [0], false),
    ).rejects.toThrow(UNSTABLE);
    const always = fakeClients(Array.from({ length: 1_000 }, () => () => [new Error(UNSTABLE)]));
    await expect(new CommittedOffsetReader(always.clients, 100).read('app', 'in', [0], true)).rejects.toThrow(UNSTABLE);
    expect(always.asked.length).toBeGreaterThan(1);
  });
});
