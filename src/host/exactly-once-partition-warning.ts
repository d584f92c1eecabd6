import type { Logger } from 'pino';
import { librdkafkaProblem } from '../config/kafka-clients.js';
import type { WorkerConfig } from '../config/worker-config.js';
import type { ProcessingGuarantee } from '../dsl/topology-builder.js';
import { CLIENT_FEATURES, whyLacks, type KafkaClientName } from '../kafka/kafka-client.js';

/**
 * The most input partitions (source and retry-tier partitions, as the `--threads` cap counts
 * them) a worker runs exactly_once on a client without KIP-447 (kafkajs) before it warns and
 * names `--client librdkafka`. Without KIP-447 every task has its own transactional producer and
 * its own transaction per commit interval, so the transactions grow with the partitions
 * ({@link PER_TASK_EXACTLY_ONCE_MEASURED}): kafkajs held its 6-partition figure at 24 partitions
 * and fell to 0.80× of it at 96, where librdkafka (one transaction per worker) did 1.98× kafkajs.
 * (Issue 22's run of 2026-12-02 measured a steeper fall, 0.16× at 96, not seen again.) 24 is the
 * largest measured count without a fall, so the warning starts above it. See docs/guarantees.md,
 * "exactly_once on kafkajs at many partitions".
 */
export const EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD = 24;

/** One measurement of {@link PER_TASK_EXACTLY_ONCE_MEASURED}. */
export interface PerTaskExactlyOnceRun {
  /** Input partitions of the run, each a task with its own transactional producer on kafkajs. */
  readonly partitions: number;
  /** weir on kafkajs, median throughput, records/s (100 B records). */
  readonly recordsPerSecond: number;
  /** weir on librdkafka (KIP-447) in the same run, median throughput, records/s. */
  readonly librdkafkaRecordsPerSecond: number;
}

/**
 * weir exactly_once by input partitions, on kafkajs and on librdkafka: `bench/run.ts`'s
 * pass-through of 2026-12-06, 200 000 records of 100 B, one worker, commit interval 100 ms,
 * medians of 3 interleaved repetitions on 2 cores (the tables at the top of bench/README.md).
 * The warning quotes them.
 */
export const PER_TASK_EXACTLY_ONCE_MEASURED: readonly PerTaskExactlyOnceRun[] = Object.freeze([
  Object.freeze({ partitions: 6, recordsPerSecond: 34_796, librdkafkaRecordsPerSecond: 54_765 }),
  Object.freeze({ partitions: 24, recordsPerSecond: 36_220, librdkafkaRecordsPerSecond: 57_850 }),
  Object.freeze({ partitions: 96, recordsPerSecond: 27_874, librdkafkaRecordsPerSecond: 55_078 }),
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
  const runs = PER_TASK_EXACTLY_ONCE_MEASURED;
  const partitions = `${runs
    .slice(0, -1)
    .map((run) => run.partitions)
    .join(', ')} and ${runs.at(-1)!.partitions}`;
  const remedy =
    librdkafka === undefined
      ? 'which loads here'
      : `though it does not load here (${librdkafka}): see README.md, "The librdkafka client", to install it`;
  return (
    `exactly_once on ${facts.client} with ${facts.partitions} input partitions (sources and retry tiers), more than ` +
    `${EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD}: ${whyLacks(facts.client, 'groupMetadataInTransactions')} (no KIP-447), ` +
    `each with its own transaction per commit interval, so its transactions grow with the partitions (measured, 100 B records, ` +
    `records/s at ${partitions} partitions: kafkajs ${runs.map((run) => run.recordsPerSecond).join(', ')}; ` +
    `librdkafka ${runs.map((run) => run.librdkafkaRecordsPerSecond).join(', ')}; bench/README.md). ` +
    `Use --client librdkafka (KIP-447: one transactional producer per worker), ${remedy}`
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
