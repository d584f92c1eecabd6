/**
 * Example topology: the orders of topologies/orders.ts, keyed by customer, as a chain of two
 * processors with a fan-out and per-customer ordered retries, exactly once.
 *
 *   orders → validate → price ══> orders.invoices   ┐ every priced order in both,
 *                             ══> orders.shipments  ┘ in one transaction
 *      validate ↘ orders-fulfilment.validate.dlq  (invalid orders and bad JSON, at once)
 *      price    ↘ parked at its task, 200 ms then 1 s  ┐ back to price when due, with validate's
 *                 (changelog orders-fulfilment.        ┘ output; the customer's later orders wait
 *                  price.parked, compacted)              behind it, other customers flow on
 *               ↘ orders-fulfilment.price.dlq  (after 3 failed customer lookups)
 *
 * Both steps run in one task (Kafka Streams' `process(a).process(b)`). A customer lookup that
 * fails does not hold up other customers' orders, yet a customer's orders are priced in the order
 * they came (`order: 'key'`, as Confluent's Parallel Consumer keeps key order): the validated
 * order waits at its task — durably, in the changelog — and resumes at `price`, so `validate`
 * never runs twice for it. A priced order goes to both sinks, and under exactly_once a
 * read_committed reader sees it in both or in neither (Kafka Streams' repeated `to()`).
 * `npm run demo:fulfilment` runs it on real input and checks each customer's order. Environment:
 * ORDERS_FAILURE_RATE (the customer service's, default 0.1).
 */
import { sink, topology } from 'weir';
import { flakyCustomerService, parseOrder, priceOrder, type CustomerService } from './orders-model.js';
import { rateFromEnv } from './rate-from-env.js';

/** The fulfilment topology over a customer service (tests inject a deterministic one). */
export function fulfilmentTopology(customers: CustomerService) {
  return (
    topology({ applicationId: 'orders-fulfilment', processingGuarantee: 'exactly_once' })
      .source('orders', { key: 'string', value: 'json' })
      // An invalid order cannot be fixed by a retry: parseOrder throws a NonRetriableError.
      .process('validate', (record) => parseOrder(record.value), { retry: { maxAttempts: 1 } })
      .process('price', async (record) => priceOrder(record.value, await customers.tierOf(record.value.customerId)), {
        retry: { mode: 'topics', order: 'key', tiers: ['200ms', '1s'] },
      })
      .branch({ success: { all: [sink('orders.invoices'), sink('orders.shipments')] } })
  );
}

const failureRate = rateFromEnv('ORDERS_FAILURE_RATE', 0.1);

export default fulfilmentTopology(flakyCustomerService(failureRate));
