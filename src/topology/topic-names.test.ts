import { describe, expect, it } from 'vitest';
import { processorOfParkedChangelog, parkedChangelogTopic } from './topic-names.js';

/** Whether `topic` is named like a changelog of the application. */
const isParkedChangelogTopic = (applicationId: string, topic: string) => processorOfParkedChangelog(applicationId, topic) !== undefined;

describe('processorOfParkedChangelog', () => {
  it("recognises the application's changelogs of any processor, names the processor, and nothing else", () => {
    expect(processorOfParkedChangelog('orders', parkedChangelogTopic('orders', 'price'))).toBe('price');
    expect(processorOfParkedChangelog('orders', 'orders.enrich.v2.parked')).toBe('enrich.v2');
    // Another application's, one without a processor, and topics that only look similar.
    expect(isParkedChangelogTopic('orders', parkedChangelogTopic('orders-eu', 'price'))).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders.parked')).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders..parked')).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders.price.dlq')).toBe(false);
    expect(isParkedChangelogTopic('orders', 'orders.price.parked.old')).toBe(false);
  });
});
