import type { Logger } from 'pino';
import { librdkafkaProblem } from '../config/kafka-clients.js';
import type { WorkerConfig } from '../config/worker-config.js';
import type { ProcessingGuarantee } from '../dsl/topology-builder.js';
import { CLIENT_FEATURES, whyLacks, type KafkaClientName } from '../kafka/kafka-client.js';

/**
 * The most input partitions (source and retry-tier partitions, as the `--threads` cap counts
 * them) a worker runs exactly_once on a client without KIP-447 (kafkajs) before it warns and
 * names `--client librdkafka`. Without KIP-447 every task has its own transactional producer and
 * its own transaction per commit interval, and throughput falls with partitions
 * ({@link PER_TASK_EXACTLY_ONCE_MEASURED}): 0.88× of the 6-partition figure at 24 partitions,
 * 0.16× at 96. 24 is the largest measured count that keeps 0.8× (issue 22's bar), so the warning
 * starts above it; it is the edge, not safely inside (an earlier run measured 0.73× at 24). See
 * docs/guarantees.md, "exactly_once on kafkajs at many partitions".
 */
export const EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD = 24;

/** One measurement of {@link PER_TASK_EXACTLY_ONCE_MEASURED}. */
export interface PerTaskExactlyOnceRun {
  /** Input partitions of the run, each a task with its own transactional producer. */
  readonly partitions: number;
  /** Median throughput, records/s (100 B records). */
  readonly recordsPerSecond: number;
}

/**
 * weir exactly_once on kafkajs by input partitions: `npm run bench`'s pass-through, 200 000
 * records of 100 B, one worker, commit interval 100 ms, medians of 3 interleaved repetitions
 * on 2 cores (issue 22's run, recorded in bench/README.md, "exactly_once on kafkajs by input
 * partitions"). The warning quotes them.
 */
export const PER_TASK_EXACTLY_ONCE_MEASURED: readonly PerTaskExactlyOnceRun[] = Object.freeze([
  Object.freeze({ partitions: 6, recordsPerSecond: 41_500 }),
  Object.freeze({ partitions: 24, recordsPerSecond: 36_382 }),
  Object.freeze({ partitions: 96, recordsPerSecond: 6_510 }),
]);

/** What {@link exactlyOncePartitionWarning} decides on. */
export interface ExactlyOncePartitionFacts {
  /** The topology's `processing.guarantee`, after `--guarantee`. */
  readonly guarantee: ProcessingGuarantee;
  /** The Kafka client (`--client`). */
  readonly client: KafkaClientName;
  /** Input partitions the process can be assigned: source and retry-tier partitions (`maxTasks`). */
  readonly partitions: number;
}

/**
 * Whether `facts` run exactly_once with one transaction per task (a client without KIP-447:
 * {@link CLIENT_FEATURES}' `groupMetadataInTransactions`) on more input partitions than
 * {@link EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD}.
 */
export function outgrowsPerTaskTransactions(facts: ExactlyOncePartitionFacts): boolean {
  return (
    facts.guarantee === 'exactly_once' &&
    !CLIENT_FEATURES[facts.client].groupMetadataInTransactions &&
    facts.partitions > EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD
  );
}

/**
 * The warning a worker logs at start when exactly_once runs one transaction per task on more
 * input partitions than {@link EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD}: it names `--client
 * librdkafka`, quotes {@link PER_TASK_EXACTLY_ONCE_MEASURED}, and says whether librdkafka
 * loads here.
 *
 * @param librdkafka - undefined when the librdkafka client loads here, else why not (`librdkafkaProblem()`)
 * @returns the warning, or undefined when there is nothing to warn about
 * @example exactlyOncePartitionWarning({ guarantee: 'exactly_once', client: 'kafkajs', partitions: 96 }, undefined)
 * // 'exactly_once on kafkajs with 96 input partitions … Use --client librdkafka (…), which loads here'
 */
export function exactlyOncePartitionWarning(facts: ExactlyOncePartitionFacts, librdkafka: string | undefined): string | undefined {
  if (!outgrowsPerTaskTransactions(facts)) return undefined;
  const measured = PER_TASK_EXACTLY_ONCE_MEASURED.map(
    (run, i) => `${run.recordsPerSecond} ${i === 0 ? 'records/s ' : ''}at ${run.partitions}${i === 0 ? ' partitions' : ''}`,
  ).join(', ');
  const remedy =
    librdkafka === undefined
      ? 'which loads here'
      : `though it does not load here (${librdkafka}): see README.md, "The librdkafka client", to install it`;
  return (
    `exactly_once on ${facts.client} with ${facts.partitions} input partitions (sources and retry tiers), more than ` +
    `${EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD}: ${whyLacks(facts.client, 'groupMetadataInTransactions')} (no KIP-447), ` +
    `each with its own transaction per commit interval, so throughput falls with partitions (measured, 100 B records: ` +
    `${measured}; bench/README.md). Use --client librdkafka (KIP-447: one transactional producer per worker), ${remedy}`
  );
}

/**
 * Logs {@link exactlyOncePartitionWarning} once, at `warn`, when it applies to the process
 * (with `partitions`, `threshold` and `librdkafka`, `'loads'` or why not, as fields). The
 * application's partitions are counted only for exactly_once on a client without KIP-447, and
 * librdkafka's native module is loaded (into this process) only to word a warning.
 *
 * @param partitionsOf - the application's partitions (`countMaxTasks`); undefined when the
 *   broker cannot be asked, and then nothing is logged
 */
export async function warnExactlyOncePartitions(
  guarantee: ProcessingGuarantee,
  config: Pick<WorkerConfig, 'client'>,
  partitionsOf: () => Promise<number | undefined>,
  logger: Logger,
): Promise<void> {
  if (guarantee !== 'exactly_once' || CLIENT_FEATURES[config.client].groupMetadataInTransactions) return;
  const partitions = await partitionsOf();
  if (partitions === undefined) return;
  const facts: ExactlyOncePartitionFacts = { guarantee, client: config.client, partitions };
  if (!outgrowsPerTaskTransactions(facts)) return;
  const librdkafka = await librdkafkaProblem();
  logger.warn(
    { partitions, threshold: EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD, librdkafka: librdkafka ?? 'loads' },
    exactlyOncePartitionWarning(facts, librdkafka),
  );
}
