import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { IllegalStateError, MemberFencedError } from '../errors.js';
import type { AssignmentEvent, GroupConsumerHandlers, GroupConsumerOptions, RevocationEvent } from '../kafka/group-consumer.js';
import type { TopicPartition } from '../record/record-types.js';
import { LibrdkafkaGroupConsumer } from './librdkafka-group-consumer.js';
import { ERR } from './librdkafka-errors.js';
import type { LibrdkafkaError, NativeConsumer, NativeMessage } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';
import { nativeMessages } from './librdkafka.test-support.js';

type Consumed = (cb: (err: LibrdkafkaError | null, messages: NativeMessage[]) => void) => void;
type RebalanceCallback = (err: { code: number }, partitions: TopicPartition[]) => void;

/** librdkafka's consumer as the group consumer uses it: scripted `consume` answers, calls recorded. */
class FakeConsumer extends EventEmitter {
  readonly calls: string[] = [];
  readonly consumed: Consumed[] = [];
  connected = false;
  rebalance!: RebalanceCallback;
  /** What `disconnect` does before it completes (librdkafka's close revokes the assignment). */
  onDisconnect: () => void = () => undefined;

  consume(_count: number, cb: (err: LibrdkafkaError | null, messages: NativeMessage[]) => void): void {
    const next = this.consumed.shift();
    setTimeout(() => (next !== undefined ? next(cb) : cb(null, [])), 1);
  }
  setDefaultConsumeTimeout(): void {}
  setDefaultIsTimeoutOnlyForFirstMessage(): void {}
  subscribe(topics: string[]): this {
    this.calls.push(`subscribe ${topics.join(',')}`);
    return this;
  }
  isConnected(): boolean {
    return this.connected;
  }
  disconnect(cb: (err: LibrdkafkaError | null) => void): void {
    this.calls.push('disconnect');
    this.onDisconnect();
    this.connected = false;
    setTimeout(() => cb(null), 1);
  }
  assignmentLost(): boolean {
    return false;
  }
  incrementalAssign(tps: TopicPartition[]): this {
    this.calls.push(`assign ${tps.map((tp) => tp.partition).join(',')}`);
    return this;
  }
  incrementalUnassign(tps: TopicPartition[]): this {
    this.calls.push(`unassign ${tps.map((tp) => tp.partition).join(',')}`);
    return this;
  }
  pause(tps: TopicPartition[]): void {
    this.calls.push(`pause ${tps.map((tp) => tp.partition).join(',')}`);
  }
  resume(tps: TopicPartition[]): void {
    this.calls.push(`resume ${tps.map((tp) => tp.partition).join(',')}`);
  }
}

const OPTIONS: GroupConsumerOptions = {
  groupId: 'app',
  topics: ['t'],
  sessionTimeoutMs: 10_000,
  heartbeatIntervalMs: 3_000,
  readCommitted: true,
  maxBufferedRecords: 2,
};

function setup(options: Partial<GroupConsumerOptions> = {}, connect: (consumer: FakeConsumer) => Promise<void> = async () => undefined) {
  const consumers: FakeConsumer[] = [];
  const seen = { assigned: [] as AssignmentEvent[], revoked: [] as RevocationEvent[], crashes: [] as unknown[], batches: [] as number[][] };
  const probes: string[] = [];
  const clients = {
    options: { brokers: ['b:9092'], clientId: 'c' },
    router: { heard: () => undefined, errorEvent: () => undefined },
    consumer: (config: { rebalance_cb: RebalanceCallback }) => {
      const consumer = new FakeConsumer();
      consumer.rebalance = config.rebalance_cb;
      consumers.push(consumer);
      return consumer as unknown as NativeConsumer;
    },
    connect: async (consumer: FakeConsumer) => {
      await connect(consumer);
      consumer.connected = true;
      probes.push('probe');
      return () => probes.push('unprobe');
    },
  } as unknown as NativeClients;
  const handlers: GroupConsumerHandlers = {
    onBatch: (_topic, _partition, records) => {
      seen.batches.push(records.map((r) => r.offset));
      return true;
    },
    onRevoked: (event) => void seen.revoked.push(event),
    onAssigned: (event) => void seen.assigned.push(event),
    onCrash: (error) => void seen.crashes.push(error),
    onSkipped: () => undefined,
  };
  const consumer = new LibrdkafkaGroupConsumer(clients, { ...OPTIONS, ...options }, handlers, async () => 'member-1');
  return { consumer, consumers, seen, probes };
}

/** A started consumer with partition 0 of `t` assigned and its first record (offset 0) handed over. */
async function runningWithOneRecord(options: Partial<GroupConsumerOptions> = {}) {
  const { consumer, consumers, seen } = setup(options);
  await consumer.start();
  const native = consumers[0]!;
  native.rebalance({ code: ERR.ASSIGN_PARTITIONS }, [{ topic: 't', partition: 0 }]);
  await vi.waitFor(() => expect(seen.assigned).toHaveLength(1));
  native.consumed.push((cb) => cb(null, nativeMessages(0, 1)));
  await vi.waitFor(() => expect(seen.batches).toEqual([[0]]));
  return { consumer, native, seen };
}

describe('LibrdkafkaGroupConsumer states', () => {
  it('goes created → connecting → running → stopping → closing → stopped, and its last revocation skips the handlers', async () => {
    const { consumer, consumers, seen, probes } = setup();
    expect(consumer.state).toBe('created');
    const started = consumer.start();
    expect(consumer.state).toBe('connecting');
    await started;
    expect(consumer.state).toBe('running');
    const native = consumers[0]!;
    expect(consumer.native()).toBe(native);
    expect(native.calls).toEqual(['subscribe t']);
    native.rebalance({ code: ERR.ASSIGN_PARTITIONS }, [{ topic: 't', partition: 0 }]);
    await vi.waitFor(() => expect(seen.assigned).toHaveLength(1));
    expect(seen.assigned[0]).toMatchObject({ added: [{ topic: 't', partition: 0 }], memberId: 'member-1' });

    const states: string[] = [];
    native.onDisconnect = () => {
      states.push(consumer.state);
      native.rebalance({ code: ERR.REVOKE_PARTITIONS }, [{ topic: 't', partition: 0 }]);
    };
    const stopped = consumer.stop();
    expect(consumer.state).toBe('stopping');
    expect(() => consumer.native()).toThrow(IllegalStateError);
    await stopped;
    expect(states).toEqual(['closing']);
    expect(consumer.state).toBe('stopped');
    expect(seen.revoked).toEqual([]);
    expect(native.calls).toEqual(['subscribe t', 'assign 0', 'disconnect', 'unassign 0']);
    expect(probes).toEqual(['probe', 'unprobe']);
    // A second stop waits for the first; a start after a stop is a bug.
    await expect(consumer.stop()).resolves.toBeUndefined();
    expect(native.calls.filter((c) => c === 'disconnect')).toHaveLength(1);
    await expect(consumer.start()).rejects.toThrow(
      "librdkafka group consumer of group 'app': illegal state transition stopped → connecting",
    );
  });

  it('stops at once while connecting, and the start then closes the consumer it connected', async () => {
    let connected!: () => void;
    const { consumer, consumers, probes } = setup({}, () => new Promise<void>((resolve) => (connected = resolve)));
    const started = consumer.start();
    await consumer.stop();
    expect(consumer.state).toBe('stopped');
    connected();
    await started;
    expect(consumer.state).toBe('stopped');
    expect(consumers[0]!.calls).toEqual(['disconnect']);
    expect(probes).toEqual(['probe', 'unprobe']);
  });

  it('goes back to created when the connection fails, and may start again', async () => {
    let fail = true;
    const { consumer, consumers } = setup({}, async () => {
      if (fail) throw new Error('no broker');
    });
    await expect(consumer.start()).rejects.toThrow('no broker');
    expect(consumer.state).toBe('created');
    fail = false;
    await consumer.start();
    expect(consumer.state).toBe('running');
    expect(consumers).toHaveLength(2);
    await consumer.stop();
  });

  it('crashes on a fatal error (a fenced static member: MemberFencedError), runs no more, and stops from there', async () => {
    const { consumer, consumers, seen } = setup({ groupInstanceId: 'app-host-1' });
    await consumer.start();
    const native = consumers[0]!;
    native.emit('event.log', {
      severity: 0,
      fac: 'FATAL',
      message: 'Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id',
    });
    native.consumed.push((cb) => cb(Object.assign(new Error('Local: Fatal error'), { code: ERR.FATAL }) as unknown as LibrdkafkaError, []));
    await vi.waitFor(() => expect(seen.crashes).toHaveLength(1));
    expect(consumer.state).toBe('crashed');
    expect(seen.crashes[0]).toBeInstanceOf(MemberFencedError);
    expect(consumer.assignmentLost()).toBe(false);
    expect(() => consumer.native()).toThrow('the librdkafka group consumer is not running');
    await expect(consumer.commit([{ topic: 't', partition: 0, offset: 1 }])).rejects.toThrow('stopped fetching');
    await consumer.stop();
    expect(consumer.state).toBe('stopped');
    expect(native.calls).toEqual(['subscribe t', 'disconnect']);
  });

  it('crashes on a fatal error that no consume call reports (the binding drops it after records): the FATAL log line tells', async () => {
    const { consumer, native, seen } = await runningWithOneRecord({ groupInstanceId: 'worker-x' });
    // Records keep coming; the fatal error itself never does (every consume call succeeds).
    native.emit('event.log', {
      severity: 0,
      fac: 'FATAL',
      message: 'Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id',
    });
    native.consumed.push((cb) => cb(null, nativeMessages(1, 1)));
    await vi.waitFor(() => expect(seen.crashes).toHaveLength(1));
    expect(seen.crashes[0]).toBeInstanceOf(MemberFencedError);
    expect(consumer.state).toBe('crashed');
    // Nothing fetched after the fatal error reaches a task: it could not be committed.
    expect(seen.batches).toEqual([[0]]);
    await consumer.stop();
  });

  it('pauses librdkafka for a held partition once its stash is full, and resumes it on release', async () => {
    const { consumer, native, seen } = await runningWithOneRecord();
    consumer.pause({ topic: 't', partition: 0 });
    native.consumed.push((cb) => cb(null, nativeMessages(1, 2)));
    await vi.waitFor(() => expect(native.calls).toContain('pause 0'));
    consumer.resume({ topic: 't', partition: 0 });
    expect(native.calls.slice(-2)).toEqual(['pause 0', 'resume 0']);
    await vi.waitFor(() => expect(seen.batches).toEqual([[0], [1, 2]]));
    await consumer.stop();
  });
});
