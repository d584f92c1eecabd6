import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

/**
 * Two projects, one command (`npm test`):
 * - `unit`: unit and property tests beside the code (no servers).
 * - `integration`: tests against the real Kafka broker and Redis; the global setup starts
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
        // Inline projects inherit the root config (the aliases above) only with `extends`.
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'topologies/**/*.test.ts', 'docs/**/*.test.ts', 'scripts/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
