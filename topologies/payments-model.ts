import { z } from 'zod';

/** A payment request as it arrives on the `payments` topic (JSON). */
export const Payment = z.object({
  id: z.string().min(1),
  accountId: z.string().min(1),
  amountCents: z.number().int().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR'),
});
export type Payment = z.infer<typeof Payment>;

/** What the charger writes to `payments.charged`. */
export interface ChargedPayment extends Payment {
  readonly chargeId: string;
  /** 1-based attempt that succeeded (2 and more went through the retry topics). */
  readonly attempt: number;
}

/** The payment gateway did not answer: a later attempt may succeed (retriable). */
export class GatewayUnavailable extends Error {
  override readonly name = 'GatewayUnavailable';
}

/**
 * The gateway does not take this currency. Retrying cannot help until the gateway is
 * configured for it (non-retriable: the payment goes to the DLQ at once; once the currency
 * is enabled, `weir dlq replay` sends it back).
 */
export class UnsupportedCurrency extends Error {
  override readonly name = 'UnsupportedCurrency';
  readonly retriable = false;
}

/** A payment gateway: charges or throws. */
export interface PaymentGateway {
  charge(payment: Payment): Promise<string>;
}

/**
 * A simulated gateway that takes `currencies` and fails a call with probability
 * `failureRate` (a timeout), like a real remote service.
 *
 * @param random uniform [0, 1) source (inject a seeded one for deterministic tests)
 */
export function simulatedGateway(currencies: readonly string[], failureRate: number, random: () => number = Math.random): PaymentGateway {
  return {
    async charge(payment) {
      if (!currencies.includes(payment.currency))
        throw new UnsupportedCurrency(`the gateway does not take ${payment.currency} (takes ${currencies.join(', ')})`);
      if (random() < failureRate) throw new GatewayUnavailable(`gateway timed out charging ${payment.id}`);
      return `ch_${payment.id}`;
    },
  };
}
