import type { DeadLetterFilter } from './dead-letter-filter.js';
import { InvalidArgumentError } from 'commander';
import ms from 'ms';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import type { ReplayTarget } from './replay-record.js';
import { topicNameProblem } from '../../topology/topic-names.js';
import type { KafkaClientName } from '../../kafka/kafka-client.js';
import { loadWorkerConfig } from '../../config/worker-config.js';

/**
 * Option parsers shared by `weir dlq inspect` and `weir dlq replay`. Each is a commander
 * `argParser`: a bad value throws commander's InvalidArgumentError, which the CLI reports
 * with the option's name and exits 2.
 */

/** A point in time given on the command line, resolved against "now" when the command runs. */
export type When =
  | { readonly kind: 'ago'; readonly ms: number; readonly text: string }
  | { readonly kind: 'at'; readonly epochMs: number; readonly text: string };

const isoDateTime = z.union([z.iso.datetime({ offset: true, local: true }), z.iso.date()]);
/** A duration with a unit, as the `ms` package reads it: 30s, 15m, 1h, 2d, 1.5h. */
const durationText =
  /^\d+(\.\d+)?\s*(ms|msecs?|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|y|yrs?|years?)$/i;

/**
 * `--since` / `--until`: a duration counted back from now (`30m`, `1h`, `2d`, via the `ms`
 * package) or an ISO 8601 date or date-time (`2024-05-01`, `2024-05-01T12:00:00Z`; without an
 * offset it is local time).
 */
export function parseWhen(value: string): When {
  const text = value.trim();
  if (durationText.test(text)) {
    const duration = ms(text as ms.StringValue);
    if (typeof duration === 'number' && Number.isFinite(duration)) return { kind: 'ago', ms: duration, text };
  }
  if (isoDateTime.safeParse(text).success) {
    const epochMs = Date.parse(text);
    if (Number.isFinite(epochMs)) return { kind: 'at', epochMs, text };
  }
  throw new InvalidArgumentError(
    'expected a duration back from now such as 30m, 1h or 2d, or an ISO date such as 2024-05-01 or 2024-05-01T12:00:00Z.',
  );
}

/** The epoch ms of a {@link When} at `nowMs`. */
export function resolveWhen(when: When | undefined, nowMs: number): number | undefined {
  if (when === undefined) return undefined;
  return when.kind === 'ago' ? nowMs - when.ms : when.epochMs;
}

/** `--limit`: an integer ≥ 1. */
export function parsePositiveInt(value: string): number {
  const parsed = z.coerce
    .number()
    .int()
    .min(1)
    .safeParse(value.trim() === '' ? 'x' : value);
  if (!parsed.success) throw new InvalidArgumentError('expected a whole number ≥ 1.');
  return parsed.data;
}

/** `--max-replays`: an integer ≥ 0. */
export function parseCount(value: string): number {
  const parsed = z.coerce
    .number()
    .int()
    .min(0)
    .safeParse(value.trim() === '' ? 'x' : value);
  if (!parsed.success) throw new InvalidArgumentError('expected a whole number ≥ 0.');
  return parsed.data;
}

/** `--rate`: records per second, a number > 0 (fractions allowed: 0.5 is one record every 2 s). */
export function parseRate(value: string): number {
  const parsed = z.coerce
    .number()
    .positive()
    .finite()
    .safeParse(value.trim() === '' ? 'x' : value);
  if (!parsed.success) throw new InvalidArgumentError('expected records per second, a number > 0 such as 50 or 0.5.');
  return parsed.data;
}

/** `--error-class A,B` / `--processor p,q`: a comma-separated list, repeatable. */
export function parseList(value: string, previous: readonly string[] | undefined): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new InvalidArgumentError('expected one or more names, comma-separated.');
  return [...(previous ?? []), ...items];
}

/** `--to original|<topic>`. */
export function parseTarget(value: string): ReplayTarget {
  if (value === 'original') return { kind: 'original' };
  const problem = topicNameProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(`expected 'original' or a topic name: ${problem}.`);
  return { kind: 'topic', topic: value };
}

/** `<dlq-topic>`: a legal topic name. */
export function parseTopicArgument(value: string): string {
  const problem = topicNameProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(`${problem}.`);
  return value;
}

/** `--group <id>`: a non-empty consumer group id without control characters. */
export function parseGroupId(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this rejects
  if (value.trim() === '' || /[\u0000-\u001f]/.test(value))
    throw new InvalidArgumentError(`a consumer group id must be a non-empty name (got ${JSON.stringify(value)}).`);
  return value;
}

/**
 * The Kafka bootstrap servers, exactly as `weir run` reads them: `--brokers`, else
 * `KAFKA_BROKERS`, else 127.0.0.1:9092.
 *
 * @throws ConfigError naming `--brokers` or `KAFKA_BROKERS` when a value is not host:port,...
 */
export function resolveBrokers(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): readonly string[] {
  const only = env['KAFKA_BROKERS'] === undefined ? {} : { KAFKA_BROKERS: env['KAFKA_BROKERS'] };
  return loadWorkerConfig(flag === undefined ? {} : { brokers: flag }, only).brokers;
}

/**
 * The Kafka client binding, exactly as `weir run` reads it: `--client`, else
 * `WEIR_KAFKA_CLIENT`, else kafkajs.
 *
 * @throws ConfigError naming `--client` or `WEIR_KAFKA_CLIENT` when the name is not a client weir has
 */
export function resolveClient(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): KafkaClientName {
  const only = env['WEIR_KAFKA_CLIENT'] === undefined ? {} : { WEIR_KAFKA_CLIENT: env['WEIR_KAFKA_CLIENT'] };
  return loadWorkerConfig(flag === undefined ? {} : { client: flag }, only).client;
}

/** The logger of the DLQ tools: silent, or the Kafka client's warnings on stderr with `--verbose`. */
export function toolLogger(verbose: boolean): Logger {
  return pino({ level: verbose ? 'warn' : 'silent' }, pino.destination({ dest: 2, sync: true }));
}

/** Prints a usage problem the way the CLI reports errors (`weir: <message>`), without a stack hint. */
export function usageError(message: string, write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): void {
  write(`weir: ${message}`);
}

/** The record filters both `weir dlq` commands take. */
export interface DeadLetterFilterFlags {
  readonly since?: When;
  readonly until?: When;
  readonly errorClass?: readonly string[];
  readonly processor?: readonly string[];
}

/**
 * The dead-letter filter of `--since`, `--until`, `--error-class` and `--processor`.
 *
 * @returns the filter, or the usage problem (e.g. `--since` not before `--until`)
 */
export function deadLetterFilterOf(flags: DeadLetterFilterFlags, nowMs: number): DeadLetterFilter | { readonly problem: string } {
  const filter: DeadLetterFilter = {
    ...(flags.since ? { sinceMs: resolveWhen(flags.since, nowMs)! } : {}),
    ...(flags.until ? { untilMs: resolveWhen(flags.until, nowMs)! } : {}),
    ...(flags.errorClass ? { errorClasses: flags.errorClass } : {}),
    ...(flags.processor ? { processors: flags.processor } : {}),
  };
  if (filter.sinceMs !== undefined && filter.untilMs !== undefined && filter.sinceMs >= filter.untilMs) {
    return { problem: `--since (${flags.since!.text}) must be before --until (${flags.until!.text})` };
  }
  return filter;
}
