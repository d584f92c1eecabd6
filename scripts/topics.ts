/**
 * `npm run topics -- <command>`: the few topic chores a first run needs, without Kafka's own
 * shell tools (this project ships only the broker jars):
 *
 *   npm run topics -- create orders --partitions 6
 *   npm run topics -- produce orders --key id < orders.jsonl     # one JSON value per line
 *   npm run topics -- read orders.enriched --limit 20             # JSON lines, from the beginning
 *
 * KAFKA_BROKERS (default 127.0.0.1:9092) picks the broker.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Admin } from 'kafkajs';
import { topicNameProblem } from '../src/topology/topic-names.js';
import { DEFAULT_BROKERS } from './lib/broker-instance.js';
import { createTopics, endOffsets, produce, quietKafka, readTopics } from './lib/topic-io.js';

const brokers = process.env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS;
const kafka = quietKafka(brokers, 'weir-topics');

/**
 * `action`, with what failed named in its error: `read orders: topic 'orders' does not exist`, and
 * for a broker that cannot be reached, which one and how to pick another.
 */
function naming<F extends { partitions?: number; key?: string; limit?: number; timeoutMs?: number }>(
  command: string,
  action: (topic: string, flags: F) => Promise<void>,
): (topic: string, flags: F) => Promise<void> {
  return async (topic, flags) => {
    // The broker says only "invalid topic"; weir's own rule says what is wrong with the name. A
    // bad argument, so exit 2 as a usage error.
    const problem = topicNameProblem(topic);
    if (problem !== undefined) throw new CommanderError(2, 'topics.badTopic', `topics: ${command} ${topic}: ${problem}`);
    try {
      await action(topic, flags);
    } catch (error) {
      // kafkajs' "Topic creation errors" keeps the broker's reasons in `errors`.
      const reasons = (error as { errors?: unknown }).errors;
      const details = Array.isArray(reasons) ? `: ${reasons.map((r) => (r instanceof Error ? r.message : String(r))).join('; ')}` : '';
      const message = `${error instanceof Error ? error.message : String(error)}${details}`;
      // kafkajs' own words for a broker it cannot reach (not the topic's name, which may hold any of them).
      const unreachable = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|Connection error|Connection timeout|Failed to connect/.test(message)
        ? ` (broker ${brokers}: set KAFKA_BROKERS, or start the local one with npm run kafka:start)`
        : '';
      throw new Error(`${command} ${topic}: ${message}${unreachable}`, { cause: error });
    }
  };
}

const positive = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return n;
};

/** `use` with a connected admin client, disconnected afterwards whether `use` succeeds or not. */
async function withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

async function create(topic: string, flags: { partitions: number }): Promise<void> {
  await withAdmin(async (admin) => {
    if ((await admin.listTopics()).includes(topic)) {
      const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
      const has = metadata?.partitions.length ?? 0;
      const asked = has === flags.partitions ? '' : ` (not ${flags.partitions}: left as it is)`;
      console.log(`${topic} exists already, with ${has} partition(s)${asked}`);
      return;
    }
    await createTopics(admin, [{ topic, partitions: flags.partitions }]);
    console.log(`created ${topic} with ${flags.partitions} partition(s)`);
  });
}

async function produceLines(topic: string, flags: { key?: string }): Promise<void> {
  const exists = await withAdmin(async (admin) => (await admin.listTopics()).includes(topic));
  if (!exists) throw new Error(`topic '${topic}' does not exist (npm run topics -- create ${topic})`);
  const lines = readFileSync(0, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const messages = lines.map((line, i) => {
    let key: string | null = null;
    if (flags.key !== undefined) {
      try {
        const field = (JSON.parse(line) as Record<string, unknown>)[flags.key];
        key = field === undefined || field === null ? null : typeof field === 'object' ? JSON.stringify(field) : String(field);
      } catch {
        console.error(`line ${i + 1} is not JSON; sent as it is, without a key`);
      }
    }
    return { key, value: line };
  });
  await produce(kafka, topic, messages);
  console.log(`produced ${messages.length} record(s) to ${topic}`);
}

async function read(topic: string, flags: { limit?: number; timeoutMs: number }): Promise<void> {
  const ends = await withAdmin(async (admin) => (await endOffsets(admin, [topic])).get(topic));
  if (ends === undefined) throw new Error(`topic '${topic}' does not exist`);
  const total = [...ends.values()].reduce((a, b) => a + b, 0);
  const { records } = await readTopics(kafka, [topic], {
    timeoutMs: flags.timeoutMs,
    isolation: 'read_uncommitted',
    until: (rs) =>
      rs.length >= (flags.limit ?? total) ||
      [...ends].every(([p, end]) => end === 0 || rs.some((r) => r.partition === p && r.offset >= end - 1)),
  });
  for (const r of records.slice(0, flags.limit ?? records.length)) {
    console.log(
      JSON.stringify({
        partition: r.partition,
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key,
        value: r.value?.toString('utf8') ?? null,
        headers: r.headers,
      }),
    );
  }
}

// Usage errors exit 2, as weir's own: commander has printed them.
const program = new Command('topics').description('create, fill and read topics for trying weir').exitOverride();
program.command('create').argument('<topic>').option('--partitions <n>', 'partitions', positive, 1).action(naming('create', create));
program
  .command('produce')
  .description('send JSON lines from stdin, one record each')
  .argument('<topic>')
  .option('--key <field>', 'take the record key from this field of each JSON value')
  .action(naming('produce', produceLines));
program
  .command('read')
  .description('print the records of a topic as JSON lines, from the beginning to its current end')
  .argument('<topic>')
  .option('--limit <n>', 'at most n records', positive)
  .option('--timeout-ms <ms>', 'give up waiting after this long', positive, 15_000)
  .action(naming('read', read));

program.parseAsync().then(
  // Exit once stdout has drained: into a pipe it is asynchronous, and an early exit cuts it short.
  () => process.stdout.write('', () => process.exit(0)),
  (error: unknown) => {
    if (error instanceof CommanderError) {
      // Commander printed its own; a bad topic name is printed here.
      if (error.code === 'topics.badTopic') console.error(error.message);
      process.exit(error.exitCode === 0 ? 0 : 2);
    }
    console.error(`topics: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
