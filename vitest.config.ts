import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

/**
 * Integration files that run in the kafkajs project only: about kafkajs itself (its behaviour
 * against the broker; a stuck kafkajs transactional producer, with faults injected through its
 * socket factory), about no Kafka client at all (the Redis dedup store), or about what only
 * kafkajs can do (stream threads).
 */
const KAFKAJS_ONLY = [
  'test/integration/kafkajs-compat.test.ts',
  'test/integration/exactly-once-transactions.test.ts',
  'test/integration/dedup-redis-store.test.ts',
  // The topics script is written on kafkajs (scripts/lib/topic-io.ts), whatever the worker runs on.
  'test/integration/topics-script.test.ts',
  // Stream threads share a process, and @confluentinc/kafka-javascript's native module loads in
  // one thread of a process only (its issue #258): `--threads n` with librdkafka exits 2.
  'test/integration/stream-threads-group.test.ts',
  'test/integration/stream-threads-crash.test.ts',
  // librdkafka's consumer never stops on a broker outage (it reconnects by itself): no restart to interrupt.
  'test/integration/shutdown-during-rejoin.test.ts',
  // A kafkajs consumer held in its join (kafkajs' internals): librdkafka rebalances cooperatively.
  'test/integration/rebalance-watchdog.test.ts',
];

/**
 * Integration files of the librdkafka project only: the binding's own contracts, and what only
 * librdkafka can do (cooperative rebalancing, static membership, exactly_once_v2).
 */
const LIBRDKAFKA_ONLY = ['test/integration/librdkafka-adapter.test.ts', 'test/integration/**/*.librdkafka.test.ts'];

/**
 * Whether the optional librdkafka client (`@confluentinc/kafka-javascript`) loads here: when
 * it does not, the librdkafka project runs one file that says so (skipped outside CI, failed
 * under CI=true) instead of the suite.
 */
function librdkafkaProblem(): string | undefined {
  const probe = spawnSync(process.execPath, ['-e', "require('@confluentinc/kafka-javascript')"], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    encoding: 'utf8',
  });
  if (probe.status === 0) return undefined;
  return (probe.stderr ?? '').split('\n').find((l) => /Error/.test(l)) ?? `exit ${probe.status}`;
}
const librdkafkaMissing = librdkafkaProblem();
if (librdkafkaMissing !== undefined)
  console.warn(
    `integration-librdkafka: the librdkafka integration suite DID NOT RUN: @confluentinc/kafka-javascript does not load (${librdkafkaMissing}); see README.md, "The librdkafka client"`,
  );

/** The integration project of one Kafka client binding: the same files, every `weir` process it spawns on that client. */
const integration = (client: 'kafkajs' | 'librdkafka', groupOrder: number, include: string[], exclude: string[] = []) => ({
  // Inline projects inherit the root config (the aliases above) only with `extends`.
  extends: true as const,
  test: {
    name: `integration-${client}`,
    include,
    exclude,
    environment: 'node',
    globalSetup: ['test/integration/global-setup.ts'],
    // Read by the tests and passed on to every `weir run|dlq|status` they spawn (--client).
    env: {
      WEIR_KAFKA_CLIENT: client,
      ...(client === 'librdkafka' && librdkafkaMissing ? { WEIR_LIBRDKAFKA_MISSING: librdkafkaMissing } : {}),
    },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // The two clients' suites share the broker and the machine: one after the other.
    sequence: { groupOrder },
  },
});

/**
 * The randomized fault campaign (test/faults/), a project of its own that `npm test` leaves out:
 * `npm run test:faults` (which sets WEIR_FAULTS=1) runs it, in the profile WEIR_FAULTS_PROFILE
 * names (`ci`, the default, or `long`). It starts its own broker and Redis servers.
 */
const faults = {
  extends: true as const,
  test: {
    name: 'faults',
    include: ['test/faults/**/*.test.ts'],
    environment: 'node',
    testTimeout: 1_800_000,
    hookTimeout: 180_000,
  },
};

/**
 * Three projects, one command (`npm test`):
 * - `unit`: unit and property tests beside the code (no servers).
 * - `integration-kafkajs` and then `integration-librdkafka`: the tests against the real Kafka
 *   broker and Redis, once per Kafka client (the conformance suite); the global setup starts
 *   what is not already running and stops only what it started.
 */
export default defineConfig({
  // Tests import weir by its package name from the sources (the CLI and workers they spawn
  // run the built dist/).
  resolve: {
    alias: [
      { find: /^weir$/, replacement: src('index.ts') },
      { find: /^weir\/testing$/, replacement: src('testing/index.ts') },
    ],
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'topologies/**/*.test.ts', 'docs/**/*.test.ts', 'scripts/**/*.test.ts', 'bench/**/*.test.ts'],
          environment: 'node',
          sequence: { groupOrder: 0 },
        },
      },
      integration('kafkajs', 0, ['test/integration/**/*.test.ts'], LIBRDKAFKA_ONLY),
      librdkafkaMissing === undefined
        ? integration('librdkafka', 1, ['test/integration/**/*.test.ts'], KAFKAJS_ONLY)
        : integration('librdkafka', 1, ['test/librdkafka-missing/*.test.ts']),
      ...(process.env['WEIR_FAULTS'] === '1' ? [faults] : []),
    ],
  },
});
