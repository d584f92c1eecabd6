import { describe, expect, it } from 'vitest';
import { isParkedChangelogTopic, parkedChangelogTopic } from './topic-names.js';

describe('isParkedChangelogTopic', () => {
  it("recognises the application's changelogs of any processor, and nothing else", () => {
    expect(isParkedChangelogTopic('orders', parkedChangelogTopic('orders', 'price'))).toBe(true);
    expect(isParkedChangelogTopic('orders', 'orders.enrich.v2.parked')).toBe(true);
    // Another application's, one without a processor, and topics that only look similar.
    expect(isParkedChangelogTopic('orders', parkedChangelogTopic('orders-eu', 'price'))).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders.parked')).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders..parked')).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders.price.dlq')).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders.price.parked.old')).toBe(false);
  });
});
