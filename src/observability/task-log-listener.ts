import type { Logger } from 'pino';
import { CircuitOpenLog } from './circuit-open-log.js';
import type { TaskListener } from '../runtime/task-listener.js';

/** Every handler of {@link TaskListener}, in dispatch order. */
const HANDLERS = [
  'onRecord',
  'onFailedRecord',
  'onRecords',
  'onFlush',
  'onPortError',
  'onDedupSkipped',
  'onClosed',
  'onWarning',
  'onCircuitTransition',
  'onRetryDelayed',
  'onParked',
] as const satisfies ReadonlyArray<keyof TaskListener>;

/**
 * Joins task listeners: each event goes to every listener that handles it, in order. The
 * result has only the handlers some listener has, so a task builds no event nobody takes.
 */
export function combineTaskListeners(...listeners: readonly TaskListener[]): TaskListener {
  const combined: Record<string, (event: never) => void> = {};
  for (const name of HANDLERS) {
    const handlers = listeners.map((l) => l[name]?.bind(l)).filter((h) => h !== undefined) as Array<(e: never) => void>;
    if (handlers.length === 1) combined[name] = handlers[0]!;
    else if (handlers.length > 1)
      combined[name] = (event: never): void => {
        for (const handler of handlers) handler(event);
      };
  }
  return combined as TaskListener;
}

/**
 * A task listener that logs the events an operator must see: dead-lettered records (`warn`,
 * with the offset, attempts and error), retries (`debug`), failed port calls (Kafka
 * produce/commit/transaction, the dedup store), each retried with backoff (`warn`), and
 * records processed without dedup because the dedup store failed under
 * `onStoreError: 'skip-dedup'` (`warn`), and circuit breakers that open (`warn`, with the
 * failure rate and the last error; then one summary a minute while probes fail, see
 * {@link CircuitOpenLog}) or close (`info`, with how long they were open), and `order: 'key'`
 * tasks that reach `maxParkedKeys` (`warn`, once: the partition pauses) or go below it again
 * (`info`). Counting is the metrics listener's job.
 */
export function taskLogListener(logger: Logger): TaskListener {
  const circuits = new CircuitOpenLog(logger);
  const full = new Set<string>();
  return {
    onClosed: (e) => void full.delete(e.task),
    onParked: (e) => {
      if (e.full === full.has(e.task)) return;
      if (e.full) {
        full.add(e.task);
        logger.warn(
          { task: e.task, parkedKeys: e.keys, parkedRecords: e.records, maxParkedKeys: e.maxParkedKeys },
          "order 'key': the task holds records of maxParkedKeys keys; it takes no new record (its partition pauses) until a key's records are decided",
        );
      } else {
        full.delete(e.task);
        logger.info(
          { task: e.task, parkedKeys: e.keys, parkedRecords: e.records },
          "order 'key': the task is below maxParkedKeys again; it takes records again",
        );
      }
    },
    onFailedRecord: (e) => {
      if (e.outcome === 'dead-letter') {
        logger.warn(
          { task: e.task, offset: e.offset, attempt: e.attempt, errorClass: e.errorClass, error: e.errorMessage },
          'record dead-lettered',
        );
      } else if ((e.outcome === 'retry' || e.outcome === 'held') && logger.isLevelEnabled('debug')) {
        logger.debug(
          { task: e.task, offset: e.offset, attempt: e.attempt, delayMs: e.delayMs, errorClass: e.errorClass, error: e.errorMessage },
          e.outcome === 'retry' ? 'record failed; retrying' : 'record failed while the circuit breaker is open; it waits with its attempts',
        );
      }
    },
    onPortError: (e) =>
      logger.warn(
        { task: e.task, port: e.port, err: e.error, retryInMs: e.retryInMs },
        e.port === 'dedup' ? 'dedup store call failed' : `kafka ${e.port} failed; the task retries`,
      ),
    onWarning: (e) => logger.warn({ task: e.task, offset: e.offset }, e.message),
    onCircuitTransition: (t) => circuits.transition(t),
    onDedupSkipped: (e) =>
      logger.warn(
        { task: e.task, records: e.records, err: e.error },
        "dedup store failed: records processed without dedup (onStoreError: 'skip-dedup')",
      ),
  };
}
