/**
 * Property tests of topologies/fulfilment.ts (a chain of two processors with retry topics at the
 * second and a fan-out to two sinks) in weir's TopologyTestDriver, over a seeded customer
 * service: every order ends once in both sinks or once in a DLQ, priced right, retried at the
 * step that failed, each customer's orders in input order (`order: 'key'`; `invariants.all`
 * checks it) — and under exactly_once, whatever crashes, aborts and rebalances, nothing lost or
 * written twice.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopologyTestDriver, arbitraries, invariants, propertyRuns, seededRandom, type FaultSchedule, type TestInput } from 'weir/testing';
import { fulfilmentTopology } from './fulfilment.js';
import { orderInputs } from './order-inputs.js';
import { flakyCustomerService, priceOrder, type EnrichedOrder, type Order } from './orders-model.js';

async function runFulfilment(inputs: TestInput<string, unknown>[], failureRate: number, seed: number, faults: FaultSchedule = []) {
  const driver = new TopologyTestDriver(fulfilmentTopology(flakyCustomerService(failureRate, seededRandom(seed))), {
    partitions: 3,
    seed,
    faults,
  });
  await driver.pipeInput('orders', inputs);
  await driver.drain(); // time passes every retry tier's delay: each order is decided
  return driver;
}

/** Both sinks hold the same priced orders, one copy each; every dead letter failed at the step that could fail that way. */
function checkFulfilment(driver: TopologyTestDriver): void {
  const invoices = driver.readOutput<string, EnrichedOrder>('orders.invoices');
  const shipments = driver.readOutput<string, EnrichedOrder>('orders.shipments');
  expect(shipments.map((s) => [s.key, s.value])).toEqual(invoices.map((i) => [i.key, i.value]));
  for (const out of invoices) {
    const { customerTier, totalCents, discountCents, ...order } = out.value;
    expect(priceOrder(order as Order, customerTier)).toEqual(out.value);
    expect([totalCents, discountCents].every(Number.isInteger)).toBe(true);
    expect(out.key).toBe(out.value.customerId);
  }
  for (const dead of driver.deadLetters()) {
    expect([
      ['price', 'CustomerServiceUnavailable', 3, 'orders-fulfilment.price.dlq'], // parked twice at its task
      ['validate', 'NonRetriableError', 1, 'orders-fulfilment.validate.dlq'], // at once
      ['validate', 'DeserializationError', 0, 'orders-fulfilment.validate.dlq'],
    ]).toContainEqual([dead.processor, dead.errorClass, dead.attempts, dead.topic]);
    // A lookup that failed waited at its task to resume at `price`: its dead letter names that
    // step (its value is price's input, validate's output) and holds an order of its key.
    if (dead.processor === 'price') expect([dead.headers['weir.step'], (dead.value as Order).customerId]).toEqual(['price', dead.key]);
  }
}

const RUNS = propertyRuns(); // 200, or WEIR_PROPERTY_RUNS
const TIMEOUT_MS = Math.max(30_000, RUNS * 40);

describe('topologies/fulfilment.ts properties', () => {
  it(
    'every order ends once in both sinks or once in a DLQ, priced, retried at the step that failed',
    async () => {
      await fc.assert(
        fc.asyncProperty(orderInputs, fc.double({ min: 0, max: 0.9, noNaN: true }), fc.integer(), async (inputs, failureRate, seed) => {
          const driver = await runFulfilment(inputs, failureRate, seed);
          invariants.all(driver);
          checkFulfilment(driver);
          expect(driver.readOutput('orders.invoices').length + driver.deadLetters().length).toBe(inputs.length);
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'exactly_once: no order lost or written twice to either sink, whatever crashes, aborts or rebalances',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          orderInputs,
          fc.double({ min: 0, max: 0.5, noNaN: true }),
          fc.integer(),
          arbitraries.faultSchedule({ guarantee: 'exactly_once' }),
          async (inputs, failureRate, seed, faults) => {
            const driver = await runFulfilment(inputs, failureRate, seed, faults);
            invariants.exactlyOnce(driver);
            invariants.all(driver);
            checkFulfilment(driver);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
