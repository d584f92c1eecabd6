/**
 * Scaffolding for integration tests that run `weir run` on the scripted topology
 * (fixtures/scripted-topology.ts): unique topics and application id per scenario, a worker
 * launcher (through the file's {@link IntegrationFixture}, which kills the workers at the end),
 * and helpers to send scripts and read outcomes.
 */
import { randomUUID } from 'node:crypto';
import { produce, readTopics, type ReadRecord } from '../../../scripts/lib/topic-io.js';
import type { WorkerProcess } from '../../../scripts/lib/worker-process.js';
import type { Script } from '../fixtures/scripted-topology.js';
import type { IntegrationFixture } from './integration-fixture.js';

export type { Script };

/** The scripted topology, relative to the repo root. */
export const SCRIPTED_TOPOLOGY = 'test/integration/fixtures/scripted-topology.ts';

/** Options of {@link ScriptedScenarios.create}. */
export interface ScenarioOptions {
  /** Source partitions; default 3. */
  readonly partitions?: number;
  /** `WEIR_TEST_*` settings of the fixture (retry policy, mode, guarantee, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** `weir run` flags every worker of the scenario gets (before the per-start ones). */
  readonly args?: readonly string[];
  /** Create these retry tiers (and sink and DLQ) up front, with `config`, instead of letting weir create them. */
  readonly precreate?: { readonly tiers: number; readonly config?: Readonly<Record<string, string>> };
}

/** One scenario's topics, workers and I/O. */
export interface Scenario {
  /** The application id (also the prefix of every topic). */
  readonly id: string;
  readonly topics: { readonly source: string; readonly sink: string; readonly dlq: string; readonly tiers: readonly string[] };
  /** Starts a worker with the scenario's flags plus `args`, and its `WEIR_TEST_*` settings with `env` over them. */
  start(args?: readonly string[], env?: Readonly<Record<string, string>>): WorkerProcess;
  /** Produces scripts to the source, keyed `k<seq % keys>`. */
  send(scripts: readonly Script[], keys?: number): Promise<void>;
  /** Reads sink and DLQ (and `extra` topics) from the beginning until `until` holds. */
  outcomes(
    until: (records: readonly ReadRecord[]) => boolean,
    timeoutMs?: number,
    extra?: readonly string[],
  ): Promise<{ records: ReadRecord[]; complete: boolean }>;
}

/**
 * A test file's scenarios, on its fixture's client; the fixture kills their workers after all
 * tests. Construct it at module level: `new ScriptedScenarios(useIntegrationFixture('weir-it-x'))`.
 */
export class ScriptedScenarios {
  constructor(private readonly fx: Pick<IntegrationFixture, 'kafka' | 'createTopics' | 'startWorker'>) {}

  /** Creates the source topic (and what `precreate` asks for) under a fresh application id. */
  async create(name: string, options: ScenarioOptions = {}): Promise<Scenario> {
    const id = `${name}-${randomUUID().slice(0, 8)}`;
    const topics = {
      source: `${id}.in`,
      sink: `${id}.out`,
      dlq: `${id}.dlq`,
      tiers: Array.from({ length: options.precreate?.tiers ?? 0 }, (_, n) => `${id}.scripted.retry.${n}`),
    };
    const precreated = options.precreate
      ? [topics.sink, topics.dlq, ...topics.tiers].map((topic) => ({
          topic,
          partitions: options.partitions ?? 3,
          ...(options.precreate?.config ? { config: options.precreate.config } : {}),
        }))
      : [];
    await this.fx.createTopics([{ topic: topics.source, partitions: options.partitions ?? 3 }, ...precreated]);
    const env = { WEIR_TEST_SOURCE: topics.source, WEIR_TEST_SINK: topics.sink, WEIR_TEST_DLQ: topics.dlq, ...options.env };
    return {
      id,
      topics,
      start: (args = [], overrides = {}) =>
        this.fx.startWorker(SCRIPTED_TOPOLOGY, {
          args: ['--application-id', id, ...(options.args ?? []), ...args],
          env: { ...env, ...overrides },
        }),
      send: (scripts, keys = 10) =>
        produce(
          this.fx.kafka,
          topics.source,
          scripts.map((s) => ({ key: `k${s.seq % keys}`, value: JSON.stringify(s), headers: { trace: s.id } })),
        ),
      outcomes: (until, timeoutMs = 60_000, extra = []) =>
        readTopics(this.fx.kafka, [topics.sink, topics.dlq, ...extra], { until, timeoutMs }),
    };
  }
}

/** The script a sink or DLQ record carries. */
export function scriptOf(record: ReadRecord): Script & { attempt?: number } {
  return JSON.parse(record.value!.toString()) as Script & { attempt?: number };
}
