/**
 * The one fixture for the `beforeAll`/`afterAll` scaffolding of the integration test files:
 * a quiet kafkajs client on the broker the global setup provides (or one the file starts), a
 * connected admin, and everything a test leaves behind — `weir run` workers, dedup keys in the
 * shared Redis, temporary folders and whatever else the file registers — cleaned up after all
 * its tests, even when one fails.
 *
 * @example
 * const fx = useIntegrationFixture('weir-it-dlq-replay');
 *
 * it('replays', async () => {
 *   await fx.createTopics([{ topic: 'in', partitions: 2 }]);
 *   const worker = fx.startWorker('topologies/payments.ts', { args: ['--application-id', app] });
 *   fx.trackDedupKeys(app);
 *   await produce(fx.kafka, 'in', messages);
 * });
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Admin, Kafka } from 'kafkajs';
import { afterAll, beforeAll, inject } from 'vitest';
import { deleteDedupKeys } from '../../../scripts/lib/dedup-keys.js';
import { repoRoot } from '../../../scripts/lib/repo-paths.js';
import { createTopics, quietKafka } from '../../../scripts/lib/topic-io.js';
import { startWorker, type StartWorkerOptions, type WorkerProcess } from '../../../scripts/lib/worker-process.js';

/** Options of {@link useIntegrationFixture}. */
export interface IntegrationFixtureOptions {
  /**
   * The bootstrap servers to use instead of the shared broker (`inject('kafkaBrokers')`), e.g.
   * a broker instance the file starts here; called in `beforeAll`. Stop such a broker with
   * {@link IntegrationFixture.onTeardown}.
   */
  readonly brokers?: () => Promise<string>;
  /** Timeout of the fixture's `beforeAll` and `afterAll`, in ms (default: the project's `hookTimeout`). */
  readonly hookTimeoutMs?: number;
}

/** What a test file gets from {@link useIntegrationFixture}. */
export interface IntegrationFixture {
  /** Bootstrap servers, comma-separated `host:port`. @throws Error before `beforeAll` ran */
  readonly brokers: string;
  /** A kafkajs client with logging off. @throws Error before `beforeAll` ran */
  readonly kafka: Kafka;
  /** An admin of {@link kafka}, connected in `beforeAll`, disconnected in `afterAll`. @throws Error before `beforeAll` ran */
  readonly admin: Admin;
  /** Creates the topics that do not exist yet with {@link admin} and waits for their leaders. */
  createTopics(topics: Parameters<typeof createTopics>[1]): Promise<void>;
  /** Starts `weir run <topologyFile>` (see worker-process.ts); a worker still running at the end is SIGKILLed. */
  startWorker(topologyFile: string, options?: StartWorkerOptions): WorkerProcess;
  /** Deletes the dedup keys of `applicationId` from the shared Redis (`inject('redisUrl')`) after all tests. */
  trackDedupKeys(applicationId: string): void;
  /**
   * A fresh folder under `test/integration/.tmp/` (inside the repository, so topology files
   * written there resolve `import 'weir'`), removed after all tests. Usable at module level.
   */
  tempDir(): string;
  /** Runs `fn` after all tests (last registered, first run), after the workers are killed and the admin disconnected. */
  onTeardown(fn: () => unknown): void;
}

/**
 * Registers the file's `beforeAll` (client, connected admin) and `afterAll` (in this order:
 * SIGKILL the workers still running, disconnect the admin, run the {@link IntegrationFixture.onTeardown}
 * callbacks, delete tracked dedup keys, remove temporary folders). Every teardown step runs even
 * when an earlier one fails; the first failure is rethrown at the end. Call it once, at the top
 * level of a test file.
 *
 * @param clientId - the kafkajs client id, e.g. `weir-it-dedup`.
 */
export function useIntegrationFixture(clientId: string, options: IntegrationFixtureOptions = {}): IntegrationFixture {
  let ready: { brokers: string; kafka: Kafka; admin: Admin } | undefined;
  let admin: Admin | undefined;
  const workers: WorkerProcess[] = [];
  const applicationIds: string[] = [];
  const tempDirs: string[] = [];
  const teardowns: Array<() => unknown> = [];
  const get = (): NonNullable<typeof ready> => {
    if (ready === undefined) throw new Error('the integration fixture is ready only inside tests and hooks (after its beforeAll)');
    return ready;
  };

  beforeAll(async () => {
    const brokers = options.brokers ? await options.brokers() : inject('kafkaBrokers');
    const kafka = quietKafka(brokers, clientId);
    admin = kafka.admin();
    await admin.connect();
    ready = { brokers, kafka, admin };
  }, options.hookTimeoutMs);

  afterAll(async () => {
    const failures: unknown[] = [];
    const step = async (fn: () => unknown): Promise<void> => {
      try {
        await fn();
      } catch (error) {
        failures.push(error);
      }
    };
    await step(async () => {
      // SIGCONT first: a test may have frozen a worker with SIGSTOP.
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGCONT');
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    });
    if (admin !== undefined) await step(() => admin!.disconnect());
    for (const fn of teardowns.reverse()) await step(fn);
    for (const id of applicationIds) await step(() => deleteDedupKeys(inject('redisUrl'), id));
    for (const dir of tempDirs) await step(() => rm(dir, { recursive: true, force: true }));
    if (failures.length > 0) throw failures[0];
  }, options.hookTimeoutMs);

  return {
    get brokers() {
      return get().brokers;
    },
    get kafka() {
      return get().kafka;
    },
    get admin() {
      return get().admin;
    },
    createTopics: (topics) => createTopics(get().admin, topics),
    startWorker: (topologyFile, workerOptions) => {
      const worker = startWorker(topologyFile, workerOptions);
      workers.push(worker);
      return worker;
    },
    trackDedupKeys: (applicationId) => {
      applicationIds.push(applicationId);
    },
    tempDir: () => {
      const dir = path.join(repoRoot, 'test', 'integration', '.tmp', randomUUID().slice(0, 8));
      mkdirSync(dir, { recursive: true });
      tempDirs.push(dir);
      return dir;
    },
    onTeardown: (fn) => {
      teardowns.push(fn);
    },
  };
}
