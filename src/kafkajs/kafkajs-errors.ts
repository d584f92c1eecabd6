/**
 * kafkajs error types that mean "a newer producer owns this transactional id": the broker
 * answers old clients with INVALID_PRODUCER_EPOCH (47) where newer ones get PRODUCER_FENCED
 * (90), which kafkajs 2.2.4 does not name.
 */
const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED']);
const FENCED_CODES = new Set([47, 90]);

/** True when a kafkajs error (or one it wraps) says the producer was fenced. */
export function isFencedError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const e = error as { type?: unknown; code?: unknown; originalError?: unknown; cause?: unknown };
  if (typeof e.type === 'string' && FENCED_TYPES.has(e.type)) return true;
  if (typeof e.code === 'number' && FENCED_CODES.has(e.code)) return true;
  return isFencedError(e.originalError, depth + 1) || isFencedError(e.cause, depth + 1);
}
