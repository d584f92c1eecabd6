/**
 * kafkajs, loaded with weir's read_committed fix: import kafkajs' values (`Kafka`, `logLevel`,
 * `Partitioners`, `CompressionTypes`) from here, never from `'kafkajs'` (ESLint enforces it;
 * type imports are free). Before kafkajs' modules load, its aborted-transaction filter
 * (`kafkajs/src/consumer/filterAbortedMessages.js`, which kafkajs' fetch batches call) is
 * replaced in Node's module cache by {@link filterAbortedRecords}: kafkajs 2.2.4 delivers to a
 * read_committed consumer the records of a transaction that was aborted after a later-begun one
 * (see `aborted-transactions.ts`), and kafkajs is no longer maintained.
 */
import { createRequire } from 'node:module';
import type * as Kafkajs from 'kafkajs';
import { IllegalStateError } from '../errors.js';
import { filterAbortedRecords, type AbortedTransaction, type FetchedRecord } from './aborted-transactions.js';

const require = createRequire(import.meta.url);

/**
 * kafkajs' own filter, as its fetch batches call it:
 * `filterAbortedMessages({ messages, abortedTransactions })`.
 */
type KafkajsAbortFilter = (batch: { messages: FetchedRecord[]; abortedTransactions?: AbortedTransaction[] }) => FetchedRecord[];

/** Marks weir's filter, so a second copy of this module (another loader, another copy of weir) finds it installed. */
const WEIR_FILTER = Symbol.for('weir.kafkajs.abortedTransactionFilter');

const fixedFilter: KafkajsAbortFilter & { [WEIR_FILTER]?: true } = ({ messages, abortedTransactions }) =>
  filterAbortedRecords(messages, abortedTransactions);
fixedFilter[WEIR_FILTER] = true;

const isWeirFilter = (value: unknown): boolean => typeof value === 'function' && (value as { [WEIR_FILTER]?: true })[WEIR_FILTER] === true;

/**
 * Puts {@link fixedFilter} in the module cache entry of kafkajs' filter, before kafkajs' batch
 * module binds it.
 *
 * @throws IllegalStateError when kafkajs' fetch batches were loaded already (something imported
 *   kafkajs' values directly), so the fix could not reach them
 */
function installAbortFilter(): void {
  const filterPath = require.resolve('kafkajs/src/consumer/filterAbortedMessages.js');
  const batchPath = require.resolve('kafkajs/src/consumer/batch.js');
  const loaded = require.cache[filterPath];
  if (isWeirFilter(loaded?.exports)) return;
  if (require.cache[batchPath] !== undefined)
    throw new IllegalStateError(
      "kafkajs was loaded before weir's read_committed fix: import kafkajs' values from src/kafkajs/kafkajs-library.ts, not from 'kafkajs'",
    );
  require(filterPath);
  require.cache[filterPath]!.exports = fixedFilter;
}

installAbortFilter();
const kafkajs = require('kafkajs') as typeof Kafkajs;

/** Whether kafkajs' fetch batches use weir's aborted-transaction filter (for tests). */
export function abortFilterInstalled(): boolean {
  return isWeirFilter(require('kafkajs/src/consumer/filterAbortedMessages.js'));
}

/** kafkajs' values, each with its type of the same name, as kafkajs exports them. */
export const Kafka: typeof Kafkajs.Kafka = kafkajs.Kafka;
export type Kafka = Kafkajs.Kafka;
export const logLevel: typeof Kafkajs.logLevel = kafkajs.logLevel;
export type logLevel = Kafkajs.logLevel;
export const Partitioners: typeof Kafkajs.Partitioners = kafkajs.Partitioners;
export const CompressionTypes: typeof Kafkajs.CompressionTypes = kafkajs.CompressionTypes;
export type CompressionTypes = Kafkajs.CompressionTypes;
export const KafkaJSProtocolError: typeof Kafkajs.KafkaJSProtocolError = kafkajs.KafkaJSProtocolError;
export const KafkaJSConnectionError: typeof Kafkajs.KafkaJSConnectionError = kafkajs.KafkaJSConnectionError;
export const KafkaJSNonRetriableError: typeof Kafkajs.KafkaJSNonRetriableError = kafkajs.KafkaJSNonRetriableError;
export const KafkaJSNumberOfRetriesExceeded: typeof Kafkajs.KafkaJSNumberOfRetriesExceeded = kafkajs.KafkaJSNumberOfRetriesExceeded;

/**
 * The part of kafkajs' internal `Cluster` (`kafkajs/src/cluster`) weir uses: connections to
 * the brokers and the group coordinator, whose internal `Broker` sends any request kafkajs
 * knows, including ones its public clients do not offer.
 */
export interface KafkajsCluster {
  /** @throws the kafkajs error when no broker answers */
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** The coordinator of `groupId` (retried as kafkajs retries). @throws the kafkajs error */
  findGroupCoordinator(request: { readonly groupId: string }): Promise<KafkajsCoordinator>;
}

/** kafkajs' internal `Broker`, as weir uses it: the group coordinator's requests. */
export interface KafkajsCoordinator {
  /**
   * `LeaveGroup` for `memberId` (kafkajs negotiates the version; from v3 it is a batch of one).
   * @throws the kafkajs error of the broker's answer (`UNKNOWN_MEMBER_ID` when the member is gone)
   */
  leaveGroup(request: { readonly groupId: string; readonly memberId: string }): Promise<unknown>;
}

/** What kafkajs 2.2.4 names the private factory of a client's `Cluster` (`Symbol('private:Kafka:createCluster')`). */
const CREATE_CLUSTER = 'private:Kafka:createCluster';

/**
 * A new internal kafkajs `Cluster` of `kafka`, made by the client's own private factory, so it
 * has the client's brokers, client id, retries, log creator and socket factory (its admin,
 * producers and consumers are made the same way). Not connected.
 *
 * @throws IllegalStateError when this kafkajs has no such factory (only 2.2.4 is supported)
 */
export function createKafkajsCluster(kafka: Kafkajs.Kafka): KafkajsCluster {
  const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const create = key === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[key];
  if (typeof create !== 'function')
    throw new IllegalStateError(`this kafkajs has no ${CREATE_CLUSTER}: weir reaches kafkajs 2.2.4's internal cluster through it`);
  return (create as (options: { allowAutoTopicCreation: boolean }) => KafkajsCluster)({ allowAutoTopicCreation: false });
}
