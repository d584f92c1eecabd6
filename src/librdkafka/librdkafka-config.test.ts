import { describe, expect, it } from 'vitest';
import {
  commonConfig,
  fetchQueueConfig,
  groupConsumerConfig,
  producerConfig,
  rangeReaderConfig,
  transactionalProducerConfig,
} from './librdkafka-config.js';

const group = { groupId: 'app', topics: ['in'], sessionTimeoutMs: 30_000, heartbeatIntervalMs: 3_000, readCommitted: true };

describe('librdkafka configuration', () => {
  it('names the brokers and the client id, and fails fast for CLI tools', () => {
    expect(commonConfig({ brokers: ['a:1', 'b:2'], clientId: 'weir-app-h-1' })).toMatchObject({
      'bootstrap.servers': 'a:1,b:2',
      'client.id': 'weir-app-h-1',
      'socket.connection.setup.timeout.ms': 10_000,
    });
    expect(commonConfig({ brokers: ['a:1'], clientId: 'c', failFast: true })['socket.connection.setup.timeout.ms']).toBe(3_000);
  });

  it('gives the group consumer cooperative-sticky, no auto commit, read_committed and a partition EOF event', () => {
    expect(groupConsumerConfig(group)).toMatchObject({
      'group.id': 'app',
      'partition.assignment.strategy': 'cooperative-sticky',
      'enable.auto.commit': false,
      'enable.auto.offset.store': false,
      'isolation.level': 'read_committed',
      'enable.partition.eof': true,
      'session.timeout.ms': 30_000,
      'heartbeat.interval.ms': 3_000,
      'max.poll.interval.ms': 60_000,
    });
    expect(groupConsumerConfig({ ...group, readCommitted: false })['isolation.level']).toBe('read_uncommitted');
    expect(groupConsumerConfig(group)).not.toHaveProperty('group.instance.id');
    expect(groupConsumerConfig({ ...group, groupInstanceId: 'pod-7' })['group.instance.id']).toBe('pod-7');
  });

  it("bounds librdkafka's fetch queues by --max-buffered-records", () => {
    expect(fetchQueueConfig(2_000)).toEqual({
      'queued.min.messages': 2_000,
      'queued.max.messages.kbytes': 8_000,
      'fetch.message.max.bytes': 1_024_000,
      'fetch.max.bytes': 8_192_000,
      'fetch.queue.backoff.ms': 20,
    });
    // Small buffers: at least 64 KiB per partition fetch and 1 MiB of queue.
    expect(fetchQueueConfig(10)).toEqual({
      'queued.min.messages': 10,
      'queued.max.messages.kbytes': 1_024,
      'fetch.message.max.bytes': 65_536,
      'fetch.max.bytes': 1_048_576,
      'fetch.queue.backoff.ms': 20,
    });
    // Large ones: librdkafka's defaults are the ceiling.
    expect(fetchQueueConfig(1_000_000)).toMatchObject({
      'queued.max.messages.kbytes': 65_536,
      'fetch.message.max.bytes': 1_048_576,
      'fetch.max.bytes': 52_428_800,
    });
    expect(fetchQueueConfig(2_000, 262_144)['fetch.message.max.bytes']).toBe(262_144);
    expect(groupConsumerConfig({ ...group, maxBufferedRecords: 500 })['queued.min.messages']).toBe(500);
  });

  it('makes the producers idempotent with acks=all and the Java partitioner, transactional ones with their id', () => {
    expect(producerConfig()).toMatchObject({ 'enable.idempotence': true, acks: -1, partitioner: 'murmur2_random', dr_cb: true });
    expect(transactionalProducerConfig('app-in-0', 60_000)).toMatchObject({
      'enable.idempotence': true,
      'transactional.id': 'app-in-0',
      'transaction.timeout.ms': 60_000,
    });
  });

  it('reads topic ranges read_committed without auto commit', () => {
    expect(rangeReaderConfig('weir-replay.d')).toMatchObject({
      'group.id': 'weir-replay.d',
      'enable.auto.commit': false,
      'isolation.level': 'read_committed',
    });
  });
});
