/**
 * Produces sample payments for topologies/payments.ts (the walkthrough in
 * docs/retry-and-dlq.md): creates the topic if missing (3 partitions) and sends N payments
 * keyed by account, in EUR, USD and GBP (every fifth in GBP), plus one invalid payment.
 *
 * Usage: npx tsx scripts/produce-payments.ts [count=50]
 * Env: KAFKA_BROKERS (default 127.0.0.1:9092), PAYMENTS_TOPIC (default payments).
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_BROKERS } from './lib/broker-instance.js';
import { createTopics, produce, quietKafka } from './lib/topic-io.js';

const count = Number(process.argv[2] ?? '50');
if (!Number.isInteger(count) || count < 1) {
  console.error(`produce-payments: count must be a positive integer (got ${JSON.stringify(process.argv[2])})`);
  process.exit(2);
}
const topic = process.env['PAYMENTS_TOPIC'] ?? 'payments';
const kafka = quietKafka(process.env['KAFKA_BROKERS'] ?? DEFAULT_BROKERS, 'weir-produce-payments');
const admin = kafka.admin();
await admin.connect();
await createTopics(admin, [{ topic, partitions: 3 }]);
await admin.disconnect();

const run = randomUUID().slice(0, 4);
const currencies = ['EUR', 'USD', 'EUR', 'USD', 'GBP'];
const payments = Array.from({ length: count }, (_, i) => ({
  id: `pay-${run}-${i}`,
  accountId: `acct-${i % 7}`,
  amountCents: 500 + ((i * 137) % 10_000),
  currency: currencies[i % currencies.length]!,
}));
payments.push({ id: `pay-${run}-invalid`, accountId: 'acct-0', amountCents: 0, currency: 'EUR' });
await produce(
  kafka,
  topic,
  payments.map((p) => ({ key: p.accountId, value: JSON.stringify(p) })),
);
console.log(`produced ${payments.length} payments to ${topic} (${payments.filter((p) => p.currency === 'GBP').length} in GBP, 1 invalid)`);
