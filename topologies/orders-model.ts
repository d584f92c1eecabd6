import { NonRetriableError } from 'weir';
import { z } from 'zod';

/** An order as it arrives on the `orders` topic (JSON). */
export const Order = z.object({
  id: z.string().min(1),
  customerId: z.string().min(1),
  items: z
    .array(
      z.object({
        sku: z.string().min(1),
        quantity: z.number().int().positive(),
        unitPriceCents: z.number().int().nonnegative(),
      }),
    )
    .min(1),
  createdAt: z.string(),
});
export type Order = z.infer<typeof Order>;

/**
 * Reads an order from a record's JSON value.
 *
 * @throws NonRetriableError naming the first schema problem (`invalid order: items: …`): a
 *   retry cannot fix it, so the record goes to the DLQ at once
 */
export function parseOrder(value: unknown): Order {
  const parsed = Order.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new NonRetriableError(`invalid order: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
}

/** A priced order: what orders.ts writes to `orders.enriched`, and fulfilment.ts to `orders.invoices` and `orders.shipments`. */
export interface EnrichedOrder extends Order {
  readonly customerTier: 'gold' | 'silver' | 'bronze';
  readonly totalCents: number;
  readonly discountCents: number;
}

/** Discount by customer tier, as a share of the order's total. */
const DISCOUNT = { gold: 0.1, silver: 0.05, bronze: 0 } as const;

/** `order` priced for a customer of `customerTier`: its total and its discount, in cents. */
export function priceOrder(order: Order, customerTier: EnrichedOrder['customerTier']): EnrichedOrder {
  const totalCents = order.items.reduce((sum, item) => sum + item.quantity * item.unitPriceCents, 0);
  return { ...order, customerTier, totalCents, discountCents: Math.round(totalCents * DISCOUNT[customerTier]) };
}

/** A customer lookup that fails transiently, like a real remote service. */
export interface CustomerService {
  tierOf(customerId: string): Promise<EnrichedOrder['customerTier']>;
}

/** The dependency is down for this call; retrying later helps. */
export class CustomerServiceUnavailable extends Error {
  override readonly name = 'CustomerServiceUnavailable';
}

/**
 * A simulated customer service that fails a call with probability `failureRate`.
 *
 * @param random uniform [0, 1) source (inject a seeded one for deterministic tests)
 */
export function flakyCustomerService(failureRate: number, random: () => number = Math.random): CustomerService {
  return {
    async tierOf(customerId) {
      if (random() < failureRate) throw new CustomerServiceUnavailable(`customer service timed out looking up ${customerId}`);
      const n = [...customerId].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
      return (['gold', 'silver', 'bronze'] as const)[n % 3]!;
    },
  };
}
