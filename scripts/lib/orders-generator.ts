/**
 * Deterministic order input for the demo and tests: fast-check samples with a fixed seed,
 * about 2 % malformed (half bad JSON, half orders that break the schema).
 */
import fc from 'fast-check';

/** One generated input record: its key, its raw value, and whether it is malformed. */
export interface GeneratedOrder {
  readonly key: string;
  readonly value: string;
  readonly malformed: 'bad-json' | 'invalid-order' | null;
}

const item = fc.record({
  sku: fc.stringMatching(/^SKU-[0-9]{4}$/),
  quantity: fc.integer({ min: 1, max: 5 }),
  unitPriceCents: fc.integer({ min: 100, max: 50_000 }),
});

const order = fc.record({
  customerId: fc.stringMatching(/^C[0-9]{5}$/),
  items: fc.array(item, { minLength: 1, maxLength: 4 }),
  createdAt: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 10, 30) }).map((ms) => new Date(ms).toISOString()),
});

type Kind = 'valid' | 'bad-json' | 'invalid-order';
const kind = fc.oneof(
  { weight: 98, arbitrary: fc.constant<Kind>('valid') },
  { weight: 1, arbitrary: fc.constant<Kind>('bad-json') },
  { weight: 1, arbitrary: fc.constant<Kind>('invalid-order') },
);

/**
 * `count` orders with keys `<prefix>-<n>`; the same seed gives the same orders.
 *
 * @param prefix keys start with it (the demo uses a run id, to tell its records apart)
 */
export function generateOrders(count: number, prefix: string, seed = 42): GeneratedOrder[] {
  const samples = fc.sample(fc.tuple(kind, order), { seed, numRuns: count });
  return samples.map(([k, o], i) => {
    const key = `${prefix}-${i}`;
    const full = { id: key, ...o };
    if (k === 'bad-json') return { key, value: JSON.stringify(full).slice(0, 25), malformed: 'bad-json' };
    if (k === 'invalid-order')
      return {
        key,
        value: JSON.stringify({ ...full, items: [{ sku: 'SKU-0000', quantity: 0, unitPriceCents: 100 }] }),
        malformed: 'invalid-order',
      };
    return { key, value: JSON.stringify(full), malformed: null };
  });
}
