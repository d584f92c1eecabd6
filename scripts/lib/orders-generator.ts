/**
 * Deterministic order input for the demo and tests: fast-check samples with a fixed seed,
 * about 2 % malformed (half bad JSON, half orders that break the schema).
 */
import fc from 'fast-check';

/** One generated input record: its order id, its key, its raw value, and whether it is malformed. */
export interface GeneratedOrder {
  /** `<prefix>-<n>`: the n-th order of the run. */
  readonly id: string;
  /** The order id, or with `customers` the customer's id. */
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
 * `count` orders with ids `<prefix>-<n>`, keyed by their id or, with `customers`, by their
 * customer's id (drawn from that many customers, `C00000`…, so each has many orders in a row);
 * the same seed gives the same orders.
 *
 * @param prefix ids start with it (the demo uses a run id, to tell its records apart)
 */
export function generateOrders(count: number, prefix: string, seed = 42, options: { readonly customers?: number } = {}): GeneratedOrder[] {
  const samples = fc.sample(fc.tuple(kind, order), { seed, numRuns: count });
  const { customers } = options;
  const picks = customers === undefined ? [] : fc.sample(fc.nat({ max: customers - 1 }), { seed: seed + 1, numRuns: count });
  return samples.map(([k, sampled], i) => {
    const id = `${prefix}-${i}`;
    const o = customers === undefined ? sampled : { ...sampled, customerId: `C${String(picks[i]).padStart(5, '0')}` };
    const key = customers === undefined ? id : o.customerId;
    const full = { id, ...o };
    if (k === 'bad-json') return { id, key, value: JSON.stringify(full).slice(0, 25), malformed: 'bad-json' };
    if (k === 'invalid-order')
      return {
        id,
        key,
        value: JSON.stringify({ ...full, items: [{ sku: 'SKU-0000', quantity: 0, unitPriceCents: 100 }] }),
        malformed: 'invalid-order',
      };
    return { id, key, value: JSON.stringify(full), malformed: null };
  });
}
