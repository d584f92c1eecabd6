/**
 * fast-check inputs for the property tests of the example topologies (orders.ts and
 * fulfilment.ts): orders keyed by customer, some invalid (schema violations) and some not JSON
 * at all. Test support, not an example topology.
 */
import fc from 'fast-check';
import { arbitraries, type TestInput } from 'weir/testing';

/** The customers, and so the record keys. */
export const CUSTOMERS = ['C00001', 'C00002', 'C00003'];

const item = fc.record({
  sku: fc.stringMatching(/^SKU-[0-9]{4}$/),
  quantity: fc.integer({ min: 1, max: 5 }),
  unitPriceCents: fc.integer({ min: 0, max: 50_000 }),
});

const validOrder = fc.record({
  id: fc.uuid(),
  customerId: fc.constant('set from the key below'),
  items: fc.array(item, { minLength: 1, maxLength: 4 }),
  createdAt: fc.constant('2026-03-01T12:00:00Z'),
});

const orderValue = fc.oneof(
  { weight: 8, arbitrary: validOrder },
  { weight: 1, arbitrary: validOrder.map((order) => ({ ...order, items: [] })) }, // invalid: no items
  { weight: 1, arbitrary: fc.constant(Buffer.from('{"id": "cut short')) }, // not JSON
);

/** Up to 15 orders over {@link CUSTOMERS}: 80 % valid, 10 % without items, 10 % not JSON. */
export const orderInputs: fc.Arbitrary<TestInput<string, unknown>[]> = arbitraries
  .testInputs({ keys: CUSTOMERS, value: orderValue, maxLength: 15 })
  .map((inputs) =>
    inputs.map((input) => (Buffer.isBuffer(input.value) ? input : { ...input, value: { ...input.value, customerId: input.key } })),
  );
