/**
 * The quick start's first command, `npm run demo`, on a small input: it runs the example
 * topology on real orders against the shared broker, reconciles every order, and says how to
 * stop the broker it leaves running.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BROKERS } from '../../scripts/lib/broker-instance.js';
import { onClient } from './support/client-under-test.js';

const run = promisify(execFile);

describe(onClient('npm run demo'), () => {
  it('reconciles every order (nothing lost), and tells to stop only what it started', async () => {
    const orders = 300;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      env: { ...process.env, DEMO_ORDERS: String(orders), DEMO_TIMEOUT_MS: '90000', KAFKA_BROKERS: DEFAULT_BROKERS },
      timeout: 110_000,
    });
    const row = (label: string): number => Number(new RegExp(`^  ${label}\\s+(\\d+)`, 'm').exec(stdout)?.[1]);
    expect(row('input')).toBe(orders);
    expect(row('lost')).toBe(0);
    expect(row('succeeded') + row('dead-lettered') - row('duplicates')).toBe(orders);
    expect(stdout).toMatch(/demo: ok: every order has an outcome/);
    // The suite's global setup started the broker before the demo: the demo says it found Kafka
    // running, and tells to stop only what it started itself.
    expect(stdout).toContain('demo: Kafka is running');
    expect(stdout).not.toContain('the Kafka broker it started');
  }, 120_000);
});
