/**
 * weir: Kafka Streams-style stream processing for TypeScript.
 *
 * @example
 * import { topology, sink, NonRetriableError } from 'weir';
 * export default topology({ applicationId: 'orders-enricher' })
 *   .source('orders', 'json')
 *   .process('enrich', async (record) => enrich(record.value), { retry: { maxAttempts: 5 } })
 *   .branch({ success: sink('orders.enriched'), dlq: sink('orders.dlq') });
 */
export { topology, TopologyBuilder, SourceBuilder, ProcessorBuilder } from './dsl/topology-builder.js';
export type {
  TopologyOptions,
  ProcessingGuarantee,
  SourceSerdes,
  BranchSpec,
  SuccessRoute,
  MulticastSpec,
  OutputView,
} from './dsl/topology-builder.js';
export { sink } from './dsl/sink.js';
export type { SinkSpec, SinkOptions } from './dsl/sink.js';
export { serdes } from './dsl/serdes.js';
export type { Serde, SerdeSpec, BuiltInSerdeName } from './dsl/serdes.js';
export type { ProcessorFn, ProcessorRecord, ProcessorContext, ProcessorOutput } from './dsl/processor.js';
export type {
  ProcessOptions,
  RetryOptions,
  BackoffOptions,
  Jitter,
  RetryMode,
  RetryOrder,
  ClassifyFn,
  Classification,
  DedupOptions,
  CircuitBreakerOptions,
  RetryBudgetOptions,
} from './dsl/process-options.js';
export { CircuitBreaker, CIRCUIT_TRANSITIONS, CIRCUIT_STATE_VALUE } from './failure/circuit-breaker.js';
export type { CircuitState, CircuitTransition, CircuitPermit, CallResult } from './failure/circuit-breaker.js';
export { CIRCUIT_BREAKER_DEFAULTS } from './failure/circuit-breaker-policy.js';
export type { CircuitBreakerPolicy } from './failure/circuit-breaker-policy.js';
export { RetryBudget } from './failure/retry-budget.js';
export { RETRY_BUDGET_DEFAULTS, RETRY_BUDGET_WINDOW_MS } from './failure/retry-budget-policy.js';
export type { RetryBudgetPolicy } from './failure/retry-budget-policy.js';
export { retryArithmetic } from './failure/retry-arithmetic.js';
export type { RetryArithmetic } from './failure/retry-arithmetic.js';
export { compile, DEFAULT_COMMIT_INTERVAL_MS } from './topology/compile.js';
export type { CompileOverrides } from './topology/compile.js';
export type { CompiledTopology } from './topology/compiled-topology.js';
export { describeTopology, topologyDescription } from './topology/describe-topology.js';
export type { DescribeFormat, TopologyDescription } from './topology/describe-topology.js';
export { computeBackoffDelay, backoffDelayBounds } from './failure/backoff.js';
export { defaultClassify } from './failure/classify-error.js';
export { WEIR_HEADERS } from './record/weir-headers.js';
export {
  WeirError,
  TopologyError,
  TopologyLoadError,
  ConfigError,
  NonRetriableError,
  DeserializationError,
  SerializationError,
  NoMatchingBranchError,
  ChainStepOutputError,
  UnknownChainStepError,
  LoopGuardError,
  ProducerFencedError,
  DedupStoreError,
  ClassifyHookError,
  MissingSourceTopicError,
  RecordTooLargeError,
  IllegalStateError,
  TopicRangeStalledError,
  RebalanceStalledError,
  BrokerUnreachableError,
  TestDriverError,
  AttemptTimeoutError,
  MetricsPortError,
} from './errors.js';
export type { WeirErrorCode } from './errors.js';
