/**
 * Example topology: enrich JSON orders.
 *
 *   orders → enrich → orders.enriched
 *                  ↘ orders.dlq   (invalid orders at once; others after 5 failed attempts)
 *
 * Invalid orders (schema violations) are non-retriable and go to the DLQ at once, as does
 * bad JSON. Valid orders are enriched through a customer service that fails transiently at
 * the rate in ORDERS_FAILURE_RATE (default 0.1); those failures are retried in place with
 * jittered exponential backoff.
 */
import { sink, topology, type ProcessorFn } from 'weir';
import { flakyCustomerService, parseOrder, priceOrder, type CustomerService, type EnrichedOrder } from './orders-model.js';
import { rateFromEnv } from './rate-from-env.js';

/** The enrich processor, over any customer service (tests inject a deterministic one). */
export function enrichOrder(customers: CustomerService): ProcessorFn<string | null, unknown, EnrichedOrder> {
  return async (record) => {
    const order = parseOrder(record.value);
    return priceOrder(order, await customers.tierOf(order.customerId));
  };
}

/**
 * The orders topology over a customer service. The default export runs it over the flaky
 * simulated service; property tests build it over a seeded one (topologies/orders.property.test.ts).
 */
export function ordersTopology(customers: CustomerService) {
  return topology({ applicationId: 'orders-enricher' })
    .source('orders', { key: 'string', value: 'json' })
    .process('enrich', enrichOrder(customers), {
      retry: { maxAttempts: 5, backoff: { initialMs: 50, multiplier: 2, maxMs: 2_000, jitter: 'equal' } },
    })
    .branch({ success: sink('orders.enriched'), dlq: sink('orders.dlq') });
}

const failureRate = rateFromEnv('ORDERS_FAILURE_RATE', 0.1);

export default ordersTopology(flakyCustomerService(failureRate));
