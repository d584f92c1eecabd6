import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD as THRESHOLD,
  exactlyOncePartitionWarning,
  PER_TASK_EXACTLY_ONCE_MEASURED,
  warnExactlyOncePartitions,
} from './exactly-once-partition-warning.js';

const kafkajsEos = (partitions: number) => ({ guarantee: 'exactly_once', client: 'kafkajs', partitions }) as const;

describe('exactlyOncePartitionWarning', () => {
  it('warns on kafkajs exactly_once above the threshold only', () => {
    expect(THRESHOLD).toBe(24);
    expect(exactlyOncePartitionWarning(kafkajsEos(THRESHOLD), undefined)).toBeUndefined();
    expect(exactlyOncePartitionWarning(kafkajsEos(1), undefined)).toBeUndefined();
    expect(exactlyOncePartitionWarning(kafkajsEos(THRESHOLD + 1), undefined)).toMatch(/^exactly_once on kafkajs with 25 input partitions/);
    expect(exactlyOncePartitionWarning(kafkajsEos(96), undefined)).toMatch(
      /with 96 input partitions \(sources and retry tiers\), more than 24:/,
    );
  });

  it('never warns under at_least_once, nor on librdkafka (KIP-447: one producer per worker)', () => {
    for (const partitions of [THRESHOLD + 1, 96, 10_000]) {
      expect(exactlyOncePartitionWarning({ guarantee: 'at_least_once', client: 'kafkajs', partitions }, undefined)).toBeUndefined();
      expect(exactlyOncePartitionWarning({ guarantee: 'exactly_once', client: 'librdkafka', partitions }, undefined)).toBeUndefined();
    }
  });

  it('names --client librdkafka, the measured numbers and where they come from, and that librdkafka loads here', () => {
    const text = exactlyOncePartitionWarning(kafkajsEos(96), undefined)!;
    expect(text).toContain('Use --client librdkafka');
    expect(text).toContain('no KIP-447');
    expect(text).toContain('records/s at 6, 24 and 96 partitions: kafkajs 34796, 36220, 27874; librdkafka 54765, 57850, 55078;');
    expect(text).toContain('bench/README.md');
    expect(text).toMatch(/, which loads here$/);
    expect(text).not.toContain('does not load');
    expect(PER_TASK_EXACTLY_ONCE_MEASURED.map((r) => r.partitions)).toEqual([6, 24, 96]);
  });

  it('says when librdkafka does not load here, why, and where the README says how to install it', () => {
    const text = exactlyOncePartitionWarning(kafkajsEos(96), '@confluentinc/kafka-javascript is not installed')!;
    expect(text).toContain('Use --client librdkafka');
    expect(text).toMatch(
      /, though it does not load here \(@confluentinc\/kafka-javascript is not installed\): see README\.md, "The librdkafka client", to install it$/,
    );
    expect(text).not.toContain('which loads here');
  });
});

describe('warnExactlyOncePartitions', () => {
  /** A logger that keeps its lines, and a partition count that counts how often it was asked. */
  function setup(partitions: number | undefined) {
    const lines: Array<{ level: number; msg: string; partitions?: number; threshold?: number; librdkafka?: string }> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let asked = 0;
    const partitionsOf = async () => {
      asked += 1;
      return partitions;
    };
    return { lines, logger, partitionsOf, asked: () => asked };
  }

  it('logs one warn line with the partitions, the threshold and whether librdkafka loads', async () => {
    const { lines, logger, partitionsOf } = setup(96);
    await warnExactlyOncePartitions('exactly_once', { client: 'kafkajs' }, partitionsOf, logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, partitions: 96, threshold: 24 });
    expect(lines[0]!.msg).toContain('--client librdkafka');
    expect(typeof lines[0]!.librdkafka).toBe('string');
    expect(lines[0]!.msg.endsWith('which loads here')).toBe(lines[0]!.librdkafka === 'loads');
  });

  it('logs nothing at the threshold, nor when the partitions cannot be counted', async () => {
    for (const partitions of [THRESHOLD, undefined]) {
      const { lines, logger, partitionsOf, asked } = setup(partitions);
      await warnExactlyOncePartitions('exactly_once', { client: 'kafkajs' }, partitionsOf, logger);
      expect(asked()).toBe(1);
      expect(lines).toEqual([]);
    }
  });

  it('does not count the partitions under at_least_once or on librdkafka', async () => {
    for (const [guarantee, client] of [
      ['at_least_once', 'kafkajs'],
      ['exactly_once', 'librdkafka'],
    ] as const) {
      const { lines, logger, partitionsOf, asked } = setup(96);
      await warnExactlyOncePartitions(guarantee, { client }, partitionsOf, logger);
      expect(asked()).toBe(0);
      expect(lines).toEqual([]);
    }
  });
});

describe('the docs say what the code does', () => {
  /** A file of the repository, its whitespace runs made one space. */
  const read = (path: string): string =>
    readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8').replace(/\s+/g, ' ');

  it('docs/guarantees.md quotes the warning at 96 partitions word for word; README.md and bench/README.md name the threshold and the numbers', () => {
    expect(read('docs/guarantees.md')).toContain(`\`\`\` ${exactlyOncePartitionWarning(kafkajsEos(96), undefined)} \`\`\``);
    const numbers = PER_TASK_EXACTLY_ONCE_MEASURED.flatMap((r) => [r.recordsPerSecond, r.librdkafkaRecordsPerSecond]).map((n) =>
      n.toLocaleString('en-US').replace(',', ' '),
    );
    for (const file of ['README.md', 'bench/README.md', 'docs/guarantees.md']) {
      const text = read(file);
      expect(text, file).toContain(`more than ${THRESHOLD}`);
      for (const n of numbers) expect(text, file).toContain(n);
    }
  });
});
