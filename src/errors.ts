/**
 * weir's one error hierarchy. Every error weir throws is a {@link WeirError} with a stable
 * `code`; user code can match on `code` instead of on messages. The exceptions are on purpose:
 * the errors of a Kafka client or ioredis pass through as they are (named in each method's
 * `@throws`), and `weir/testing`'s `PlannedFailure` and `InjectedBrokerError` stand in for a
 * processor's own errors and for broker errors, so they are plain `Error`s. Argument checks — a
 * value of the wrong type or out of range passed to a weir function or constructor (a serde's
 * input, `ctx.forward()`, `ManualClock.advance()`, a replay rate, ...) — throw the built-in
 * `TypeError` or `RangeError`, as JavaScript's own APIs do.
 *
 * Record outcomes (success, retry, dead-letter) are values, not exceptions: the errors below
 * are for topology, config and control failures, plus the few error classes that weir records
 * in `weir.error.class` on dead-letter records.
 *
 * The classes live in `errors/`, one file per kind of failure; weir's code imports them from here.
 */

export type { WeirErrorCode } from './errors/weir-error.js';
export { WeirError } from './errors/weir-error.js';
export { TopologyError, TopologyLoadError, ConfigError, type TopologyProblem } from './errors/topology-error.js';
export {
  NonRetriableError,
  DeserializationError,
  SerializationError,
  NoMatchingBranchError,
  ChainStepOutputError,
  UnknownChainStepError,
  LoopGuardError,
  ClassifyHookError,
  RecordTooLargeError,
} from './errors/non-retriable-error.js';
export { AttemptTimeoutError } from './errors/attempt-timeout-error.js';
export { ProducerFencedError, MemberFencedError, GroupInstanceConflictError, ReplayFencedError } from './errors/producer-fenced-error.js';
export { ClientMismatchError, type ClientMismatchErrorOptions } from './errors/client-mismatch-error.js';
export { TransactionAbortedError } from './errors/transaction-aborted-error.js';
export {
  BrokerUnreachableError,
  MissingSourceTopicError,
  TopicRangeStalledError,
  RebalanceStalledError,
  DedupStoreError,
  MetricsPortError,
} from './errors/broker-unreachable-error.js';
export { IllegalStateError, TestDriverError, ParkedStateError } from './errors/illegal-state-error.js';
export { ShutdownTimeoutError } from './errors/shutdown-timeout-error.js';
