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
export type { TopologyOptions, ProcessingGuarantee, SourceSerdes, BranchSpec, SuccessRoute, OutputView } from './dsl/topology-builder.js';
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
  ClassifyFn,
  Classification,
  DedupOptions,
} from './dsl/process-options.js';
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
  LoopGuardError,
  ProducerFencedError,
  DedupStoreError,
  ClassifyHookError,
  MissingSourceTopicError,
  RecordTooLargeError,
  IllegalStateError,
  TopicRangeStalledError,
  BrokerUnreachableError,
  TestDriverError,
} from './errors.js';
export type { WeirErrorCode } from './errors.js';
