/**
 * Example topology: the orders of topologies/orders.ts as a chain of two processors with a
 * fan-out, exactly once.
 *
 *   orders → validate → price ══> orders.invoices   ┐ every priced order in both,
 *                             ══> orders.shipments  ┘ in one transaction
 *      validate ↘ orders-fulfilment.validate.dlq  (invalid orders and bad JSON, at once)
 *      price    ↘ orders-fulfilment.price.retry.0 (200 ms) ┐ back to price when due,
 *               ↘ orders-fulfilment.price.retry.1 (1 s)    ┘ with validate's output
 *               ↘ orders-fulfilment.price.dlq  (after 3 failed customer lookups)
 *
 * Both steps run in one task (Kafka Streams' `process(a).process(b)`). A customer lookup that
 * fails does not hold up the orders behind it: the validated order waits in a retry topic and
 * resumes at `price`, so `validate` never runs twice for it. A priced order goes to both sinks,
 * and under exactly_once a read_committed reader sees it in both or in neither (Kafka Streams'
 * repeated `to()`). `npm run demo:fulfilment` runs it on real input. Environment:
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
        retry: { mode: 'topics', tiers: ['200ms', '1s'] },
      })
      .branch({ success: { all: [sink('orders.invoices'), sink('orders.shipments')] } })
  );
}

const failureRate = rateFromEnv('ORDERS_FAILURE_RATE', 0.1);

export default fulfilmentTopology(flakyCustomerService(failureRate));
