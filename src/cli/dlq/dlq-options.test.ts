import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors.js';
import {
  parseCount,
  parseList,
  parsePositiveInt,
  parseRate,
  parseTarget,
  parseWhen,
  resolveBrokers,
  resolveClient,
  resolveWhen,
} from './dlq-options.js';

describe('parseWhen / resolveWhen', () => {
  const now = Date.UTC(2024, 4, 1, 12);
  it('reads durations back from now with the ms package', () => {
    expect(resolveWhen(parseWhen('1h'), now)).toBe(now - 3_600_000);
    expect(resolveWhen(parseWhen('30m'), now)).toBe(now - 1_800_000);
    expect(resolveWhen(parseWhen('2d'), now)).toBe(now - 2 * 86_400_000);
    expect(resolveWhen(parseWhen('1.5h'), now)).toBe(now - 5_400_000);
  });
  it('reads ISO dates and date-times', () => {
    expect(resolveWhen(parseWhen('2024-05-01T10:00:00Z'), now)).toBe(Date.UTC(2024, 4, 1, 10));
    expect(resolveWhen(parseWhen('2024-05-01T10:00:00+02:00'), now)).toBe(Date.UTC(2024, 4, 1, 8));
    expect(parseWhen('2024-05-01')).toMatchObject({ kind: 'at' });
    expect(resolveWhen(undefined, now)).toBeUndefined();
  });
  it('rejects anything else with commander InvalidArgumentError', () => {
    for (const bad of ['yesterday', '5', '', '1 parsec', '2024-13-01', '-1h', 'now']) {
      expect(() => parseWhen(bad), bad).toThrow(InvalidArgumentError);
    }
  });
});

describe('number and list options', () => {
  it('parses --limit, --max-replays and --rate', () => {
    expect(parsePositiveInt('25')).toBe(25);
    expect(parseCount('0')).toBe(0);
    expect(parseRate('0.5')).toBe(0.5);
    for (const bad of ['0', '-3', '1.5', 'x', '']) expect(() => parsePositiveInt(bad), bad).toThrow(/whole number ≥ 1/);
    for (const bad of ['-1', '2.5', 'many', '']) expect(() => parseCount(bad), bad).toThrow(/whole number ≥ 0/);
    for (const bad of ['0', '-5', 'fast', 'Infinity', '']) expect(() => parseRate(bad), bad).toThrow(/records per second/);
  });
  it('collects comma-separated, repeated lists', () => {
    expect(parseList('A, B', undefined)).toEqual(['A', 'B']);
    expect(parseList('C', ['A'])).toEqual(['A', 'C']);
    expect(() => parseList(' , ', undefined)).toThrow(InvalidArgumentError);
  });
  it("parses --to as 'original' or a legal topic name", () => {
    expect(parseTarget('original')).toEqual({ kind: 'original' });
    expect(parseTarget('payments.retry')).toEqual({ kind: 'topic', topic: 'payments.retry' });
    expect(() => parseTarget('no spaces')).toThrow(/expected 'original' or a topic name/);
  });
});

describe('resolveBrokers', () => {
  it('takes --brokers, else KAFKA_BROKERS, else the local broker, and names the bad source', () => {
    expect(resolveBrokers('a:1,b:2', { KAFKA_BROKERS: 'c:3' })).toEqual(['a:1', 'b:2']);
    expect(resolveBrokers(undefined, { KAFKA_BROKERS: 'c:3' })).toEqual(['c:3']);
    expect(resolveBrokers(undefined, {})).toEqual(['127.0.0.1:9092']);
    expect(() => resolveBrokers('nohost', {})).toThrow(ConfigError);
    expect(() => resolveBrokers(undefined, { KAFKA_BROKERS: 'x' })).toThrow(/KAFKA_BROKERS/);
  });
  it('ignores unrelated worker settings in the environment', () => {
    expect(resolveBrokers(undefined, { WEIR_SESSION_TIMEOUT_MS: 'bad' })).toEqual(['127.0.0.1:9092']);
  });
});

describe('resolveClient', () => {
  it('reads --client, else WEIR_KAFKA_CLIENT, else kafkajs, and names the one at fault', () => {
    expect(resolveClient('librdkafka', { WEIR_KAFKA_CLIENT: 'kafkajs' })).toBe('librdkafka');
    expect(resolveClient(undefined, { WEIR_KAFKA_CLIENT: 'librdkafka' })).toBe('librdkafka');
    expect(resolveClient(undefined, {})).toBe('kafkajs');
    expect(() => resolveClient('rdkafka', {})).toThrow(/invalid config '--client': must be one of kafkajs, librdkafka/);
    expect(() => resolveClient(undefined, { WEIR_KAFKA_CLIENT: 'x' })).toThrow(/'WEIR_KAFKA_CLIENT'/);
  });
});
