import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import type { GroupConsumer } from '../kafka/group-consumer.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import { compile } from '../topology/compile.js';
import { MemberConsumer } from './member-consumer.js';
import { memberIdentity } from './member-identity.js';
import { loadWorkerConfig } from '../config/worker-config.js';

/** A group consumer that stopped under the worker (kafkajs after a crash): flow control throws. */
function stoppedConsumer(calls: string[]): GroupConsumer {
  const refuse = (call: string) => () => {
    calls.push(call);
    throw new Error('Consumer group was not initialized, consumer#run must be called first');
  };
  return {
    protocol: 'eager',
    start: async () => undefined,
    stop: async () => undefined,
    commit: async () => undefined,
    pause: refuse('pause'),
    resume: refuse('resume'),
    seek: refuse('seek'),
  };
}

describe('MemberConsumer', () => {
  it('a consumer that stopped refusing pause, resume or seek does not throw into the task that asked (the worker replaces the consumer and its tasks)', async () => {
    const compiled = compile(
      topology('app')
        .source('in')
        .process('p', (r) => r.value)
        .branch({ success: sink('out') }),
    );
    const calls: string[] = [];
    const client = {
      features: { groupMetadataInTransactions: false },
      groupConsumer: () => stoppedConsumer(calls),
    } as unknown as KafkaClient;
    const config = loadWorkerConfig({}, {});
    const member = new MemberConsumer({
      client,
      topology: compiled,
      config,
      identity: memberIdentity('app', config),
      logger: pino({ level: 'silent' }),
      clock: { now: () => 0 },
      handlers: {
        onBatch: () => false,
        onRevoked: async () => undefined,
        onAssigned: () => undefined,
        onCrash: () => undefined,
        onSkipped: () => undefined,
      },
      onFenced: () => undefined,
    });
    await member.start();
    const tp = { topic: 'in', partition: 0 };
    expect(() => member.pause(tp)).not.toThrow();
    expect(() => member.resume(tp)).not.toThrow();
    expect(() => member.seek(tp, 5)).not.toThrow();
    expect(calls).toEqual(['pause', 'resume', 'seek']);
  });
});
