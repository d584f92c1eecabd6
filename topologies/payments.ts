/**
 * Example topology: charge payments through a flaky gateway, with non-blocking retry topics.
 *
 *   payments → charge → payments.charged
 *                     ↘ payments-charger.charge.retry.0  (1 s)  ┐ back to charge
 *                     ↘ payments-charger.charge.retry.1  (10 s) │ when due
 *                     ↘ payments-charger.charge.retry.2  (1 min)┘
 *                     ↘ payments-charger.charge.dlq (invalid payments and unsupported
 *                       currencies at once; gateway timeouts after 4 attempts)
 *
 * A gateway timeout does not hold up the payments behind it: the failed payment waits in a
 * retry topic while the `payments` partition moves on (so payments of one account may be
 * charged out of order — see docs/retry-and-dlq.md). Environment: PAYMENTS_CURRENCIES
 * (default EUR,USD,GBP), PAYMENTS_FAILURE_RATE (default 0.2), and PAYMENTS_TOPIC /
 * PAYMENTS_CHARGED_TOPIC to rename the topics (default payments / payments.charged).
 */
import { NonRetriableError, sink, topology, type ProcessorFn } from 'weir';
import { Payment, simulatedGateway, type ChargedPayment, type PaymentGateway } from './payments-model.js';
import { rateFromEnv } from './rate-from-env.js';

/** The charge processor, over any gateway (tests inject a deterministic one). */
export function chargePayment(gateway: PaymentGateway): ProcessorFn<string | null, unknown, ChargedPayment> {
  return async (record, ctx) => {
    const parsed = Payment.safeParse(record.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new NonRetriableError(`invalid payment: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    const chargeId = await gateway.charge(parsed.data);
    return { ...parsed.data, chargeId, attempt: ctx.attempt };
  };
}

const env = process.env;
const currencies = (env['PAYMENTS_CURRENCIES'] ?? 'EUR,USD,GBP').split(',').map((c) => c.trim());
const failureRate = rateFromEnv('PAYMENTS_FAILURE_RATE', 0.2);

export default topology({ applicationId: 'payments-charger' })
  .source(env['PAYMENTS_TOPIC'] ?? 'payments', { key: 'string', value: 'json' })
  .process('charge', chargePayment(simulatedGateway(currencies, failureRate)), {
    // Three tiers, one retry each: 4 attempts in all, then the DLQ. A payment replayed from
    // the DLQ twice that fails again stays there (weir dlq replay refuses it).
    retry: { mode: 'topics', tiers: ['1s', '10s', '1m'], maxReplays: 2 },
  })
  // No dlq route: the DLQ is payments-charger.charge.dlq (<application.id>.<processor>.dlq).
  .branch({ success: sink(env['PAYMENTS_CHARGED_TOPIC'] ?? 'payments.charged') });
