/**
 * The quick start's first command, `npm run demo`, on a small input: it runs the example
 * topology on real orders against the shared broker, reconciles every order, and says how to
 * stop the broker it leaves running. `npm run demo:fulfilment` runs the chain-and-fan-out
 * example (topologies/fulfilment.ts) under exactly_once the same way.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BROKERS } from '../../scripts/lib/broker-instance.js';
import { onClient } from './support/client-under-test.js';

const run = promisify(execFile);
const ORDERS = 300;

/** Runs `scripts/demo.ts [name]` on {@link ORDERS} orders; returns its stdout and a reader of its reconciliation rows. */
async function demo(...args: string[]) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', ...args], {
    env: { ...process.env, DEMO_ORDERS: String(ORDERS), DEMO_TIMEOUT_MS: '90000', KAFKA_BROKERS: DEFAULT_BROKERS },
    timeout: 110_000,
  });
  const row = (label: string): number => Number(new RegExp(`^\\s+${label}\\s+(\\d+)$`, 'm').exec(stdout)?.[1]);
  return { stdout, row };
}

describe(onClient('npm run demo'), () => {
  it('reconciles every order (nothing lost), and tells to stop only what it started', async () => {
    const { stdout, row } = await demo();
    expect(row('input')).toBe(ORDERS);
    expect(row('lost')).toBe(0);
    expect(row('succeeded') + row('dead-lettered')).toBe(ORDERS);
    // The generator makes about 2 % of the orders malformed: some go to the DLQ, most succeed.
    expect(row('dead-lettered')).toBeGreaterThan(0);
    expect(row('succeeded')).toBeGreaterThan(ORDERS / 2);
    expect(stdout).toMatch(/demo: ok: every order has an outcome in orders\.enriched or orders\.dlq/);
    // The suite's global setup started the broker before the demo: the demo says it found Kafka
    // running, and tells to stop only what it started itself.
    expect(stdout).toContain('demo: Kafka is running');
    expect(stdout).not.toContain('the Kafka broker it started');
  }, 120_000);

  it('fulfilment: every order once in both sinks or once in a DLQ, exactly once, each customer in order, through a chain with ordered retries', async () => {
    const { stdout, row } = await demo('fulfilment');
    expect(row('input')).toBe(ORDERS);
    expect(row('lost')).toBe(0);
    expect(row('in some sinks only')).toBe(0);
    expect(row('out of customer order')).toBe(0);
    expect(row('duplicates')).toBe(0);
    expect(row('succeeded') + row('dead-lettered')).toBe(ORDERS);
    expect(row('in orders.invoices')).toBe(row('succeeded'));
    expect(row('in orders.shipments')).toBe(row('succeeded'));
    // Malformed orders are dead-lettered at `validate`; the customer service fails 10 % of its
    // calls, which the `price` step retries at its task; each customer's orders keep their order.
    expect((row('NonRetriableError') || 0) + (row('DeserializationError') || 0)).toBeGreaterThan(0);
    expect(row('retries')).toBeGreaterThan(0);
    expect(stdout).toMatch(
      /demo: ok: every order has an outcome in orders\.invoices and orders\.shipments or in a DLQ .*, exactly once, each customer's orders in order/,
    );
  }, 120_000);

  it('refuses an unknown demo, naming the known ones (exit 2)', async () => {
    const failed = await demo('nope').then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain("demo: unknown demo 'nope': use one of orders, fulfilment");
  });
});
