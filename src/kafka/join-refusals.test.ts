import { describe, expect, it } from 'vitest';
import { ClientMismatchError } from '../errors.js';
import { INCONSISTENT_GROUP_PROTOCOL, isInconsistentGroupProtocol, JoinRefusals } from './join-refusals.js';

describe('JoinRefusals', () => {
  it('calls refusals retriable until they lasted the grace period, then final, naming the group and --client', () => {
    const refusals = new JoinRefusals('orders', 'librdkafka', 6_000);
    const cause = Object.assign(new Error('Broker: Inconsistent group protocol'), { code: 23 });
    expect(refusals.open).toBe(false);
    const first = refusals.refused(1_000, cause);
    expect(first).toBeInstanceOf(ClientMismatchError);
    expect(first).toMatchObject({ retriable: true, groupId: 'orders', client: 'librdkafka', code: 'WEIR_CLIENT_MISMATCH' });
    expect(first.message).toMatch(/joining again/);
    expect(first.cause).toBe(cause);
    expect(refusals.open).toBe(true);
    expect(refusals.refused(6_999).retriable).toBe(true);
    const final = refusals.refused(7_000, cause);
    expect(final.retriable).toBe(false);
    expect(final.message).toBe(
      "the consumer group 'orders' has members of another Kafka client: the broker refused the joins of this --client librdkafka member for 6 s " +
        "(INCONSISTENT_GROUP_PROTOCOL: their partition assignors differ); start every worker of application.id 'orders' with the same --client (or WEIR_KAFKA_CLIENT)",
    );
  });

  it('starts a new run after a join: refusals around a join are not counted together', () => {
    const refusals = new JoinRefusals('orders', 'kafkajs', 6_000);
    expect(refusals.refused(0).retriable).toBe(true);
    refusals.joined();
    expect(refusals.open).toBe(false);
    // 10 s after the first refusal, but the first of a new run.
    expect(refusals.refused(10_000).retriable).toBe(true);
    expect(refusals.refused(15_999).retriable).toBe(true);
    expect(refusals.refused(16_000).retriable).toBe(false);
  });
});

describe('isInconsistentGroupProtocol', () => {
  it("knows the broker's error code 23 as kafkajs and librdkafka report it, also wrapped", () => {
    const kafkajs = Object.assign(new Error("The group member's supported protocols are incompatible"), {
      name: 'KafkaJSProtocolError',
      type: 'INCONSISTENT_GROUP_PROTOCOL',
      code: INCONSISTENT_GROUP_PROTOCOL,
      retriable: false,
    });
    expect(isInconsistentGroupProtocol(kafkajs)).toBe(true);
    expect(isInconsistentGroupProtocol({ type: 'INCONSISTENT_GROUP_PROTOCOL' })).toBe(true);
    expect(isInconsistentGroupProtocol(Object.assign(new Error('retries'), { originalError: kafkajs }))).toBe(true);
    expect(isInconsistentGroupProtocol(new Error('wrapped', { cause: { code: 23, isFatal: false } }))).toBe(true);
  });

  it('is false for other errors', () => {
    expect(isInconsistentGroupProtocol({ code: 22, type: 'ILLEGAL_GENERATION' })).toBe(false);
    expect(isInconsistentGroupProtocol(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isInconsistentGroupProtocol({ code: '23' })).toBe(false);
    expect(isInconsistentGroupProtocol(undefined)).toBe(false);
    expect(isInconsistentGroupProtocol('INCONSISTENT_GROUP_PROTOCOL')).toBe(false);
  });
});
