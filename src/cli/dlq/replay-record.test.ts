import { describe, expect, it } from 'vitest';
import type { InputRecord, RecordHeaders } from '../../record/record-types.js';
import { DEFAULT_MAX_REPLAYS, buildReplayRecord, replayHeaders, replayLimitOf } from './replay-record.js';
import { WEIR_HEADERS, headerString } from '../../record/weir-headers.js';

function dlqRecord(extra: RecordHeaders = {}): InputRecord {
  return {
    topic: 'payments.dlq',
    partition: 0,
    offset: 3,
    timestamp: 1_700_000_001_000,
    key: Buffer.from('order-1'),
    value: Buffer.from('{"amount":10}'),
    headers: {
      trace: 'abc',
      [WEIR_HEADERS.originalTopic]: 'payments',
      [WEIR_HEADERS.originalPartition]: '1',
      [WEIR_HEADERS.originalOffset]: '17',
      [WEIR_HEADERS.originalTimestamp]: '1700000000000',
      [WEIR_HEADERS.applicationId]: 'pay',
      [WEIR_HEADERS.processor]: 'charge',
      [WEIR_HEADERS.attempts]: '4',
      [WEIR_HEADERS.errorClass]: 'GatewayTimeout',
      [WEIR_HEADERS.errorMessage]: 'timed out',
      [WEIR_HEADERS.errorStack]: 'GatewayTimeout: timed out\n    at charge',
      [WEIR_HEADERS.firstFailureMs]: '1700000000100',
      [WEIR_HEADERS.lastFailureMs]: '1700000000900',
      [WEIR_HEADERS.replayMax]: '3',
      ...extra,
    },
  };
}

const original = { kind: 'original' } as const;

describe('buildReplayRecord', () => {
  it('publishes key and value unchanged to the original topic, attempts reset, replay count 1', () => {
    const decision = buildReplayRecord(dlqRecord(), { target: original, dlqTopic: 'payments.dlq' });
    expect(decision.kind).toBe('replay');
    if (decision.kind !== 'replay') return;
    const { output } = decision;
    expect(output.topic).toBe('payments');
    expect(output.key!.toString()).toBe('order-1');
    expect(output.value!.toString()).toBe('{"amount":10}');
    expect(output.partition).toBeUndefined();
    expect(decision.replayCount).toBe(1);
    expect(Object.keys(output.headers).sort()).toEqual(
      [
        'trace',
        'weir.original.offset',
        'weir.original.partition',
        'weir.original.timestamp',
        'weir.original.topic',
        'weir.replay.count',
      ].sort(),
    );
    expect(headerString(output.headers, WEIR_HEADERS.replayCount)).toBe('1');
    expect(headerString(output.headers, WEIR_HEADERS.originalOffset)).toBe('17');
  });

  it('increments an existing replay count and sends to a named topic when asked', () => {
    const decision = buildReplayRecord(dlqRecord({ [WEIR_HEADERS.replayCount]: '2' }), {
      target: { kind: 'topic', topic: 'payments.retry-by-hand' },
      dlqTopic: 'payments.dlq',
    });
    expect(decision).toMatchObject({ kind: 'replay', replayCount: 3, output: { topic: 'payments.retry-by-hand' } });
  });

  it('refuses a record whose replay count reached the limit from its weir.replay.max header', () => {
    const decision = buildReplayRecord(dlqRecord({ [WEIR_HEADERS.replayCount]: '3' }), { target: original, dlqTopic: 'payments.dlq' });
    expect(decision).toEqual({ kind: 'refused', reason: 'max-replays', detail: 'replayed 3 time(s) already; the limit is 3' });
  });

  it('lets --max-replays override the header, and defaults to 3 without either', () => {
    const twice = dlqRecord({ [WEIR_HEADERS.replayCount]: '2', [WEIR_HEADERS.replayMax]: '5' });
    expect(buildReplayRecord(twice, { target: original, dlqTopic: 'd', maxReplays: 2 }).kind).toBe('refused');
    expect(buildReplayRecord(twice, { target: original, dlqTopic: 'd' }).kind).toBe('replay');
    const bare: InputRecord = {
      ...dlqRecord(),
      headers: { [WEIR_HEADERS.originalTopic]: 'payments', [WEIR_HEADERS.replayCount]: String(DEFAULT_MAX_REPLAYS) },
    };
    expect(replayLimitOf(bare)).toBe(DEFAULT_MAX_REPLAYS);
    expect(buildReplayRecord(bare, { target: original, dlqTopic: 'd' }).kind).toBe('refused');
  });

  it('refuses records without an original topic and replays into the DLQ itself', () => {
    const bare: InputRecord = { ...dlqRecord(), headers: { trace: 'x' } };
    expect(buildReplayRecord(bare, { target: original, dlqTopic: 'payments.dlq' })).toMatchObject({
      kind: 'refused',
      reason: 'no-original-topic',
    });
    expect(buildReplayRecord(dlqRecord(), { target: { kind: 'topic', topic: 'payments.dlq' }, dlqTopic: 'payments.dlq' })).toMatchObject({
      kind: 'refused',
      reason: 'target-is-dlq',
    });
  });
});

describe('buildReplayRecord: replay headers that are not counts', () => {
  it.each([
    [WEIR_HEADERS.replayCount, '-5'],
    [WEIR_HEADERS.replayCount, '1.5'],
    [WEIR_HEADERS.replayCount, 'two'],
    [WEIR_HEADERS.replayMax, '-1'],
  ])('refuses a record whose %s is %j (it would buy extra replays or hide the limit)', (name, value) => {
    const record: InputRecord = { ...dlqRecord(), headers: { [WEIR_HEADERS.originalTopic]: 'payments', [name]: value } };
    expect(buildReplayRecord(record, { target: original, dlqTopic: 'd' })).toEqual({
      kind: 'refused',
      reason: 'bad-replay-header',
      detail: `${name} '${value}' is not a whole number ≥ 0`,
    });
  });

  it('replays a record whose counts are whole numbers', () => {
    const record: InputRecord = {
      ...dlqRecord(),
      headers: { [WEIR_HEADERS.originalTopic]: 'payments', [WEIR_HEADERS.replayCount]: '1', [WEIR_HEADERS.replayMax]: '3' },
    };
    expect(buildReplayRecord(record, { target: original, dlqTopic: 'd' })).toMatchObject({ kind: 'replay', replayCount: 2 });
  });
});

describe('buildReplayRecord: dead letters that left parts out', () => {
  const headers = { [WEIR_HEADERS.originalTopic]: 'payments', [WEIR_HEADERS.omitted]: 'value', [WEIR_HEADERS.omittedBytes]: '2097300' };

  it('refuses one that left out its value (replayed, the processor would get null), and says where the record is', () => {
    const record: InputRecord = { ...dlqRecord(), value: null, headers };
    expect(buildReplayRecord(record, { target: original, dlqTopic: 'd' })).toEqual({
      kind: 'refused',
      reason: 'omitted-parts',
      detail:
        'too large for the DLQ (2097300 bytes), it left out its value; the record is still in its source topic at weir.original.*: produce it again from there',
    });
  });

  it("refuses a chain step's, whose input is in no topic", () => {
    const record: InputRecord = { ...dlqRecord(), value: null, headers: { ...headers, [WEIR_HEADERS.step]: 'enrich' } };
    expect(buildReplayRecord(record, { target: original, dlqTopic: 'd' })).toMatchObject({
      reason: 'omitted-parts',
      detail: expect.stringMatching(/the input of chain step 'enrich' is in no topic/),
    });
  });
});

describe('replayHeaders', () => {
  it('drops weir state but keeps weir.original.* and user headers, repeated ones included', () => {
    const headers = replayHeaders({ a: ['1', '2'], 'weir.retry.due.ms': '5', 'weir.original.topic': 't', 'weir.replay.count': '1' }, 2);
    expect(headers).toEqual({ a: ['1', '2'], 'weir.original.topic': 't', 'weir.replay.count': '2' });
  });

  it('keeps weir.step: a dead letter of a later chain step resumes at that step when replayed', () => {
    const headers = replayHeaders({ 'weir.step': 'enrich', 'weir.processor': 'enrich', 'weir.attempts': '3' }, 1);
    expect(headers).toEqual({ 'weir.step': 'enrich', 'weir.replay.count': '1' });
  });
});
