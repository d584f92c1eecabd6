import { Option, type Command } from 'commander';
import {
  parseCount,
  parseGroupId,
  parseList,
  parsePositiveInt,
  parseRate,
  parseTarget,
  parseTopicArgument,
  parseWhen,
} from './dlq-options.js';
import { runInspect, type InspectFlags } from './dlq-inspect-command.js';
import { replayGroupId, runReplay, type ReplayFlags } from './dlq-replay-command.js';

const WHEN = 'a duration back from now (30m, 1h, 2d) or an ISO date (2024-05-01, 2024-05-01T12:00:00Z)';

/**
 * `weir dlq inspect <dlq-topic>` and `weir dlq replay <dlq-topic>`: look inside a
 * dead-letter queue, and send its records back with loop guards. Bad arguments exit 2.
 */
export function addDlqCommands(program: Command): void {
  const dlq = program.command('dlq').description('inspect and replay dead-letter queues');

  dlq
    .command('inspect')
    .description('print the records of a dead-letter topic with their weir headers, and counts by error class and processor')
    .argument('<dlq-topic>', 'the dead-letter topic, e.g. orders-enricher.enrich.dlq', parseTopicArgument)
    .option('--since <when>', `only records that failed since then: ${WHEN}`, parseWhen)
    .option('--until <when>', `only records that failed before then: ${WHEN}`, parseWhen)
    .option('--error-class <names>', 'only these weir.error.class values (comma-separated, repeatable)', parseList)
    .option('--processor <names>', 'only records dead-lettered by these processors (comma-separated, repeatable)', parseList)
    .option('--limit <n>', 'list at most n records, the latest failures (counts cover every match)', parsePositiveInt, 100)
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .option('--brokers <list>', 'Kafka bootstrap servers, host:port,... [env KAFKA_BROKERS, default 127.0.0.1:9092]')
    .option('--client <name>', 'Kafka client: kafkajs | librdkafka [env WEIR_KAFKA_CLIENT, default kafkajs]')
    .option('--verbose', 'print Kafka client warnings and stack traces')
    .action(async (topic: string, flags: InspectFlags) => {
      process.exitCode = await runInspect(topic, flags);
    });

  dlq
    .command('replay')
    .description(
      'send dead-letter records back to their original topic (or --to <topic>) with attempts reset and weir.replay.count + 1; ' +
        'resumable: progress is committed to the consumer group weir-replay.<dlq-topic>',
    )
    .argument('<dlq-topic>', 'the dead-letter topic to replay', parseTopicArgument)
    .addOption(
      new Option('--to <target>', "'original' (each record's weir.original.topic) or a topic name")
        .argParser(parseTarget)
        .default({ kind: 'original' }, 'original'),
    )
    .option('--error-class <names>', 'only these weir.error.class values (comma-separated, repeatable)', parseList)
    .option('--processor <names>', 'only records dead-lettered by these processors (comma-separated, repeatable)', parseList)
    .option('--since <when>', `only records that failed since then: ${WHEN}`, parseWhen)
    .option('--until <when>', `only records that failed before then: ${WHEN}`, parseWhen)
    .option('--dry-run', 'show what would be replayed; publish and commit nothing')
    .option('--rate <records/s>', 'publish at most this many records per second', parseRate)
    .option(
      '--max-replays <n>',
      "refuse records replayed n times already (default: each record's weir.replay.max, i.e. the processor's retry.maxReplays, else 3)",
      parseCount,
    )
    .option('--group <id>', `consumer group that keeps the replay's position (default ${replayGroupId('<dlq-topic>')})`, parseGroupId)
    .option('--brokers <list>', 'Kafka bootstrap servers, host:port,... [env KAFKA_BROKERS, default 127.0.0.1:9092]')
    .option('--client <name>', 'Kafka client: kafkajs | librdkafka [env WEIR_KAFKA_CLIENT, default kafkajs]')
    .option('--verbose', 'print Kafka client warnings and stack traces')
    .action(async (topic: string, flags: ReplayFlags) => {
      process.exitCode = await runReplay(topic, flags);
    });
}
