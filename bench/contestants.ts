/**
 * The contestants of `npm run bench`: one entry per table row. Each says what it needs (a
 * reason to skip it when this machine or this weir build lacks that) and how to start it on a
 * given input topic, sink topic and consumer group. Adding a row is adding one entry to
 * {@link CONTESTANTS}.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { startChildProcess, weirTaskIds, weirTasksStarted, type ContestantProcess } from './contestant-process.js';
import { startKafkaStreams, type KafkaStreamsBuild } from './kafka-streams.js';
import { missingWeirFeature, unavailableWeir, type WeirFeatures } from './weir-features.js';

/** The delivery guarantee a contestant gives; it decides when a run counts as done. */
export type Guarantee = 'at_least_once' | 'exactly_once';

/** What one run of a contestant is given. */
export interface RunSpec {
  readonly brokers: string;
  /** The shared input topic. */
  readonly source: string;
  /** This run's own sink topic (created beforehand with the input's partitions). */
  readonly sink: string;
  /** This run's own consumer group (= application.id). */
  readonly group: string;
  /** Partitions of the input topic (and of the sink and any topic of the run's own). */
  readonly partitions: number;
  /** A scratch folder of this run (Kafka Streams' state.dir), removed afterwards. */
  readonly scratchDir: string;
}

/** What the machine and the built weir offer, found once per benchmark. */
export interface Prerequisites {
  readonly weir: WeirFeatures;
  /** weir as built at the commit of BENCH_BASELINE (bench/baseline.ts), when it is set. */
  readonly baseline?: WeirFeatures;
  readonly kafkaStreams: KafkaStreamsBuild;
}

/** One row of the benchmark. */
export interface Contestant {
  /** Short id: BENCH_ONLY filters on it; part of group and topic names. */
  readonly id: string;
  /** The row label. */
  readonly name: string;
  readonly guarantee: Guarantee;
  /** Why it cannot run here, or undefined when it can. */
  skipReason(prerequisites: Prerequisites): string | undefined;
  /** Starts it; the caller awaits `started`, times the run, then stops it. */
  start(run: RunSpec, prerequisites: Prerequisites): ContestantProcess;
  /** Topics of its own the run creates beside the sink, with the input's partitions (bench/joined.ts's middle topic). */
  readonly ownTopics?: (run: Pick<RunSpec, 'sink'>) => readonly string[];
  /** weir rows: the same row run by weir as built at the baseline commit `rev` (short id). */
  readonly atBaseline?: (rev: string) => Contestant;
  /** A row made by {@link atBaseline}: the id of the row it is the baseline of. */
  readonly baselineOf?: string;
}

/** Kafka Streams' pass-through (bench/kafka-streams/), at Kafka Streams' defaults but for these settings. */
export function kafkaStreams(options: {
  readonly guarantee: Guarantee;
  readonly commitIntervalMs: number;
  readonly threads: number;
}): Contestant {
  const eos = options.guarantee === 'exactly_once';
  return {
    id: `kstreams-${eos ? 'eos' : 'alos'}-${options.threads}t`,
    name: `Kafka Streams ${eos ? 'exactly_once_v2' : 'at_least_once'}, commit ${options.commitIntervalMs} ms, ${threadsText(options.threads)}`,
    guarantee: options.guarantee,
    skipReason: ({ kafkaStreams: build }) =>
      build.ok
        ? undefined
        : `Kafka Streams unavailable: ${build.reason.split('\n')[0]!.replace(/:$/, '')} (its output is printed above the tables)`,
    start: (run, { kafkaStreams: build }) => {
      if (!build.ok) throw new Error(build.reason);
      return startKafkaStreams({
        classpath: build.classpath,
        brokers: run.brokers,
        applicationId: run.group,
        source: run.source,
        sink: run.sink,
        guarantee: eos ? 'exactly_once_v2' : 'at_least_once',
        commitIntervalMs: options.commitIntervalMs,
        threads: options.threads,
        stateDir: run.scratchDir,
      });
    },
  };
}

/** The hand-written kafkajs loop (bench/kafkajs-baseline.ts): eachBatch → sendBatch (acks=-1) → commit. */
export function kafkajsLoop(): Contestant {
  return {
    id: 'kafkajs-loop',
    name: 'hand-written kafkajs loop (at_least_once)',
    guarantee: 'at_least_once',
    skipReason: () => undefined,
    start: (run) =>
      startChildProcess({
        command: process.execPath,
        args: ['--import', 'tsx', path.join(repoRoot, 'bench', 'kafkajs-baseline.ts')],
        cwd: repoRoot,
        env: { KAFKA_BROKERS: run.brokers, BENCH_SOURCE: run.source, BENCH_SINK: run.sink, BENCH_GROUP: run.group },
        label: 'kafkajs loop',
      }),
  };
}

/**
 * The hand-written exactly_once loop on @confluentinc/kafka-javascript (bench/librdkafka-eos-baseline.ts):
 * consume → produce → every 100 ms sendOffsetsToTransaction and commitTransaction. Skipped when
 * the binding does not load here.
 */
export function librdkafkaEosLoop(): Contestant {
  return {
    id: 'librdkafka-eos-loop',
    name: 'hand-written librdkafka loop (exactly_once, commit 100 ms)',
    guarantee: 'exactly_once',
    skipReason: () => librdkafkaMissing(),
    start: (run) =>
      startChildProcess({
        command: process.execPath,
        args: [
          `--max-old-space-size=${WEIR_HEAP_LIMIT_MIB}`,
          '--import',
          'tsx',
          path.join(repoRoot, 'bench', 'librdkafka-eos-baseline.ts'),
        ],
        cwd: repoRoot,
        env: { KAFKA_BROKERS: run.brokers, BENCH_SOURCE: run.source, BENCH_SINK: run.sink, BENCH_GROUP: run.group },
        label: 'librdkafka loop',
      }),
  };
}

/** Why @confluentinc/kafka-javascript does not load here, or undefined when it does. */
function librdkafkaMissing(): string | undefined {
  try {
    createRequire(import.meta.url)('@confluentinc/kafka-javascript');
    return undefined;
  } catch (error) {
    return `@confluentinc/kafka-javascript does not load: ${(error as Error).message.split('\n')[0]}`;
  }
}

/**
 * The heap limit of every weir contestant, MiB (node's `--max-old-space-size`): the same 1 GiB as
 * Kafka Streams' `-Xmx1g` (`KAFKA_STREAMS_HEAP` in bench/kafka-streams.ts). Without one, V8's
 * limit on this kind of machine is 4 GiB, and under a limit of 2 GiB or more it lets garbage grow
 * to 4× the live heap before collecting it (bench/README.md, "where the memory goes");
 * docs/operations.md tells operators the same.
 */
export const WEIR_HEAP_LIMIT_MIB = 1_024;

/**
 * `weir run bench/passthrough.ts` (buffer serdes), with a heap limit of
 * {@link WEIR_HEAP_LIMIT_MIB}. `threads` needs `--threads`, `client` needs
 * `--client` with that choice; one thread on the default client needs neither. With `baseline`
 * (a short commit id), weir as built at that commit runs it: {@link Prerequisites.baseline}'s
 * `bin/weir.js` on that checkout's own `bench/passthrough.ts`.
 */
export function weir(options: {
  readonly guarantee: Guarantee;
  readonly threads: number;
  readonly client?: 'librdkafka';
  readonly baseline?: string;
  /** The topology: {@link PIPELINES}; default `passthrough`. */
  readonly pipeline?: Pipeline;
}): Contestant {
  const pipeline = options.pipeline ?? 'passthrough';
  const eos = options.guarantee === 'exactly_once';
  const needs = [...(options.threads > 1 ? ['--threads'] : []), ...(options.client ? ['--client'] : [])];
  const build = (prerequisites: Prerequisites): WeirFeatures =>
    options.baseline === undefined
      ? prerequisites.weir
      : (prerequisites.baseline ?? unavailableWeir(repoRoot, `no build of ${options.baseline} (BENCH_BASELINE)`));
  const name = `weir${options.baseline ? `@${options.baseline}` : ''} ${options.guarantee}, commit ${eos ? 100 : 1000} ms, ${threadsText(options.threads)}${options.client ? ` on ${options.client}` : ''}${pipeline === 'passthrough' ? '' : `, ${PIPELINES[pipeline].label}`}`;
  const id = `weir-${eos ? 'eos' : 'alos'}-${options.threads}t${options.client ? `-${options.client}` : ''}${pipeline === 'passthrough' ? '' : `-${pipeline}`}`;
  return {
    id: options.baseline === undefined ? id : `${id}-${options.baseline}`,
    name,
    guarantee: options.guarantee,
    skipReason: (prerequisites) => missingWeirFeature(build(prerequisites), needs, options.client),
    start: (run, prerequisites) => {
      const features = build(prerequisites);
      const threads = features.flags.has('--threads') ? ['--threads', String(options.threads)] : [];
      const client = options.client ? ['--client', options.client] : [];
      return startChildProcess({
        command: process.execPath,
        args: [
          `--max-old-space-size=${WEIR_HEAP_LIMIT_MIB}`,
          ...[path.join(features.root, 'bin', 'weir.js'), 'run', PIPELINES[pipeline].file],
          ...['--application-id', run.group, '--brokers', run.brokers, '--log-level', 'info'],
          ...['--guarantee', options.guarantee, '--commit-interval-ms', eos ? '100' : '1000'],
          ...threads,
          ...client,
        ],
        cwd: features.root,
        env: { BENCH_SOURCE: run.source, BENCH_SINK: run.sink, BENCH_MID: middleTopic(run) },
        label: name,
        // Ready once every task runs, as Kafka Streams is once RUNNING: one task per input
        // partition, and one per partition of the middle topic of two joined steps.
        startedWhen: weirTasksStarted([
          ...weirTaskIds(run.source, run.partitions),
          ...(pipeline === 'joined' ? weirTaskIds(middleTopic(run), run.partitions) : []),
        ]),
      });
    },
    ...(pipeline === 'joined' ? { ownTopics: (run: Pick<RunSpec, 'sink'>) => [middleTopic(run)] } : {}),
    // A baseline checkout may predate chains: only the pass-through gets a twin.
    ...(options.baseline !== undefined
      ? { baselineOf: id }
      : pipeline === 'passthrough'
        ? { atBaseline: (rev: string) => weir({ ...options, baseline: rev }) }
        : {}),
  };
}

/** The topologies a weir row can run (bench/<name>.ts), and how a row's name says which. */
export const PIPELINES = {
  passthrough: { file: 'bench/passthrough.ts', label: 'one step' },
  chain: { file: 'bench/chain.ts', label: 'two steps chained in one task' },
  joined: { file: 'bench/joined.ts', label: 'two steps joined by a topic' },
} as const;
export type Pipeline = keyof typeof PIPELINES;

/** bench/joined.ts's middle topic: under the run's name (`<name>.mid`), so the run removes it. */
function middleTopic(run: Pick<RunSpec, 'sink'>): string {
  return run.sink.replace(/\.out$/, '.mid');
}

function threadsText(threads: number): string {
  return threads === 1 ? '1 thread' : `${threads} threads`;
}

/** Every row of the pass-through tables, in table order. */
export const CONTESTANTS: readonly Contestant[] = [
  kafkaStreams({ guarantee: 'at_least_once', commitIntervalMs: 1_000, threads: 1 }),
  kafkaStreams({ guarantee: 'at_least_once', commitIntervalMs: 1_000, threads: 2 }),
  kafkaStreams({ guarantee: 'exactly_once', commitIntervalMs: 100, threads: 1 }),
  kafkajsLoop(),
  librdkafkaEosLoop(),
  weir({ guarantee: 'at_least_once', threads: 1 }),
  weir({ guarantee: 'at_least_once', threads: 2 }),
  weir({ guarantee: 'exactly_once', threads: 1 }),
  weir({ guarantee: 'exactly_once', threads: 2 }),
  weir({ guarantee: 'at_least_once', threads: 1, client: 'librdkafka' }),
  weir({ guarantee: 'exactly_once', threads: 1, client: 'librdkafka' }),
];

/**
 * The rows of a chain table, on one client: one step; two steps chained in one task; the same
 * two steps as two sub-topologies joined by a topic (the table's baseline). at_least_once: the
 * sink's high watermarks tell when a run is done, whichever topology wrote it.
 */
export function chainContestants(client?: 'librdkafka'): readonly Contestant[] {
  const on = client === undefined ? {} : { client };
  return [
    weir({ guarantee: 'at_least_once', threads: 1, ...on }),
    weir({ guarantee: 'at_least_once', threads: 1, ...on, pipeline: 'chain' }),
    weir({ guarantee: 'at_least_once', threads: 1, ...on, pipeline: 'joined' }),
  ];
}

/** The rows of the exactly_once scaling tables (many input partitions). */
export const EOS_SCALING_CONTESTANTS: readonly Contestant[] = [
  kafkaStreams({ guarantee: 'exactly_once', commitIntervalMs: 100, threads: 1 }),
  librdkafkaEosLoop(),
  weir({ guarantee: 'exactly_once', threads: 1 }),
  weir({ guarantee: 'exactly_once', threads: 1, client: 'librdkafka' }),
];
