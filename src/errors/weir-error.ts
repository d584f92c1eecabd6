/** Stable error codes. */
export type WeirErrorCode =
  | 'WEIR_TOPOLOGY_INVALID'
  | 'WEIR_TOPOLOGY_LOAD'
  | 'WEIR_CONFIG_INVALID'
  | 'WEIR_NON_RETRIABLE'
  | 'WEIR_DESERIALIZATION'
  | 'WEIR_SERIALIZATION'
  | 'WEIR_NO_MATCHING_BRANCH'
  | 'WEIR_CHAIN_STEP_OUTPUT'
  | 'WEIR_UNKNOWN_CHAIN_STEP'
  | 'WEIR_PRODUCER_FENCED'
  | 'WEIR_REPLAY_FENCED'
  | 'WEIR_DEDUP_STORE'
  | 'WEIR_CLASSIFY_HOOK'
  | 'WEIR_ILLEGAL_STATE'
  | 'WEIR_TOPIC_STALLED'
  | 'WEIR_REBALANCE_STALLED'
  | 'WEIR_BROKER_UNREACHABLE'
  | 'WEIR_INVARIANT_VIOLATION'
  | 'WEIR_TEST_DRIVER'
  | 'WEIR_LOOP_GUARD'
  | 'WEIR_MISSING_SOURCE_TOPIC'
  | 'WEIR_RECORD_TOO_LARGE'
  | 'WEIR_ATTEMPT_TIMEOUT'
  | 'WEIR_METRICS_PORT'
  | 'WEIR_TRANSACTION_ABORTED'
  | 'WEIR_MEMBER_FENCED'
  | 'WEIR_GROUP_INSTANCE_CONFLICT'
  | 'WEIR_SHUTDOWN_TIMEOUT'
  | 'WEIR_CLIENT_MISMATCH'
  | 'WEIR_PARKED_STATE';

/** Base class of every error weir throws. */
export class WeirError extends Error {
  /** Stable machine-readable code. */
  readonly code: WeirErrorCode;

  constructor(code: WeirErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}
