/**
 * Kafka's topic-name rules and weir's topic naming conventions.
 */

/** A value as a name problem quotes it: JSON where it can be, else its type (a BigInt or a symbol has no JSON). */
function quoted(value: unknown): string {
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

/** Kafka's legal topic characters (`Topic.LEGAL_CHARS`). */
const LEGAL = /^[a-zA-Z0-9._-]+$/;
/** Kafka's `Topic.MAX_NAME_LENGTH`. */
const MAX_LENGTH = 249;

/**
 * Why `name` is not a legal Kafka topic name, or `undefined` when it is.
 */
export function topicNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return `topic name must be a non-empty string (got ${quoted(name)})`;
  if (name === '.' || name === '..') return `topic name cannot be '${name}'`;
  if (name.length > MAX_LENGTH) return `topic name '${name.slice(0, 40)}…' is longer than ${MAX_LENGTH} characters`;
  if (!LEGAL.test(name)) return `topic name '${name}' has characters other than ASCII letters, digits, '.', '_' and '-'`;
  return undefined;
}

/**
 * Why `name` cannot be a node name or `application.id`, or `undefined` when it can. Both go
 * into topic names (retry tiers and DLQs), so they follow the topic-name rules.
 */
export function nodeNameProblem(kind: string, name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return `${kind} must be a non-empty string (got ${quoted(name)})`;
  if (!LEGAL.test(name)) return `${kind} '${name}' may use only ASCII letters, digits, '.', '_' and '-'`;
  return undefined;
}

/** `<application.id>.<processor>.retry.<n>`: the topic of retry tier `n`. */
export function retryTierTopic(applicationId: string, processor: string, tier: number): string {
  return `${applicationId}.${processor}.retry.${tier}`;
}

/** `<application.id>.<processor>.dlq`: the default dead-letter topic of a processor. */
export function defaultDeadLetterTopic(applicationId: string, processor: string): string {
  return `${applicationId}.${processor}.dlq`;
}

/**
 * `<application.id>.<processor>.parked`: the compacted changelog of the records an
 * `order: 'key'` chain holds back, named after the chain's first processor with `order: 'key'`.
 */
export function parkedChangelogTopic(applicationId: string, processor: string): string {
  return `${applicationId}.${processor}.parked`;
}

/**
 * The processor a {@link parkedChangelogTopic} of the application is named after, or undefined
 * when `topic` is not named like one (`orders.price.parked` of `orders` → `price`).
 */
export function processorOfParkedChangelog(applicationId: string, topic: string): string | undefined {
  const [head, tail] = parkedChangelogTopic(applicationId, '\u0000').split('\u0000') as [string, string];
  return topic.length > head.length + tail.length && topic.startsWith(head) && topic.endsWith(tail)
    ? topic.slice(head.length, topic.length - tail.length)
    : undefined;
}
