import type { Logger } from 'pino';
import { createKafkaClient } from '../config/kafka-clients.js';
import { BrokerUnreachableError } from '../errors.js';
import type { GroupConsumerHandlers } from '../kafka/group-consumer.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient, RecordProducerClient } from '../kafka/kafka-client.js';
import { OtelAttemptTracer } from '../observability/otel-attempt-tracer.js';
import { combineTaskListeners, taskLogListener } from '../observability/task-log-listener.js';
import type { WorkerMetrics } from '../observability/worker-metrics.js';
import { ResilienceRegistry } from '../runtime/processor-resilience.js';
import { routeOf } from '../topology/compiled-topology.js';
import { AssignedTasks } from './assigned-tasks.js';
import { createDedupStores, type DedupStores } from './dedup-stores.js';
import { ensureTopics } from './ensure-topics.js';
import type { MemberIdentity } from './member-identity.js';
import { MemberConsumer } from './member-consumer.js';
import { warnOfOrphanChangelogs } from './orphan-changelogs.js';
import { retryWhileRetriable } from './retry-while-retriable.js';
import { TaskFactory } from './task-factory.js';
import type { WorkerHealth } from './worker-health.js';
import type { WorkerOptions } from './worker-options.js';

/** What {@link WorkerParts} are built from: the worker's options, and what the worker does with the group's events. */
export interface WorkerPartsOptions {
  readonly worker: WorkerOptions;
  readonly identity: MemberIdentity;
  /** The worker's logger (it names the application). */
  readonly logger: Logger;
  readonly metrics: WorkerMetrics;
  readonly health: WorkerHealth;
  /** The consumer's rebalance and crash events (its batches go to the tasks). */
  readonly handlers: Pick<GroupConsumerHandlers, 'onRevoked' | 'onAssigned' | 'onCrash'>;
  /** The member's shared producer was fenced. */
  readonly onFenced: (error: unknown) => void;
  /** Throws when the worker was stopped while it was starting: the start goes no further. */
  readonly stillStarting: () => void;
  /** Whether the worker still takes new tasks (false once it stops). */
  readonly active: () => boolean;
}

/**
 * The parts of a {@link Worker}: its Kafka client, admin and record producer, its group
 * membership (the consumer, replaced after a crash, and the shared producer), its dedup stores,
 * task factory and tasks. {@link open} creates them in order; each part is kept as soon as it
 * exists, so that a shutdown during the start ({@link close}) closes what is open by then.
 */
export class WorkerParts {
  client: KafkaClient | undefined;
  admin: KafkaAdmin | undefined;
  producer: RecordProducerClient | undefined;
  dedupStores: DedupStores | undefined;
  /** The group membership: current consumer (replaced after a crash) and shared producer. */
  membership: MemberConsumer | undefined;
  factory: TaskFactory | undefined;
  /** The member's tasks, once the worker has its task factory. */
  tasks: AssignedTasks | undefined;
  /** Tasks wait for {@link releaseTasks}. */
  private tasksHeld: boolean;

  constructor(private readonly options: WorkerPartsOptions) {
    this.tasksHeld = options.worker.holdTasks === true;
  }

  /** Ends the hold of {@link WorkerOptions.holdTasks}: the tasks of the current and later assignments start. */
  releaseTasks(): void {
    this.tasksHeld = false;
    this.tasks?.release();
  }

  /**
   * Checks and creates topics, connects, and joins the group: the steps of
   * {@link Worker.start}, whose TSDoc names the errors they throw.
   */
  async open(): Promise<void> {
    const { topology, config } = this.options.worker;
    const { logger, stillStarting } = this.options;
    this.client = await createKafkaClient(config.client, {
      brokers: config.brokers,
      clientId: this.options.identity.clientId,
      logger,
    });
    const admin = this.client.admin();
    this.admin = admin;
    await admin.connect().catch((error: unknown) => {
      throw new BrokerUnreachableError(config.brokers, { cause: error });
    });
    stillStarting();
    // A broker just restarted, or one that does not know yet of the topics another worker
    // created a moment ago, answers with retriable errors: the start waits them out.
    const untilReady = <T>(step: string, run: () => Promise<T>): Promise<T> =>
      retryWhileRetriable(run, { step, logger, stillWanted: stillStarting });
    await untilReady('checking the topics', () => ensureTopics(topology, admin, logger, config.topicPartitions));
    stillStarting();
    // Once per process (its first stream thread): parked records no processor restores any more.
    if ((this.options.worker.thread ?? 1) === 1) await warnOfOrphanChangelogs(topology, this.client, admin, logger);
    stillStarting();
    if (topology.processingGuarantee === 'at_least_once') {
      const producer = this.client.recordProducer();
      this.producer = producer;
      await untilReady('connecting the producer', () => producer.connect());
      stillStarting();
    }
    const membership = new MemberConsumer({
      client: this.client,
      topology,
      config,
      identity: this.options.identity,
      logger,
      clock: this.options.worker.clock ?? { now: () => Date.now() },
      handlers: {
        ...this.options.handlers,
        onBatch: (topic, partition, records, nextOffset) => this.tasks?.batch({ topic, partition }, records, nextOffset) ?? false,
        onSkipped: (topic, partition, nextOffset) => this.tasks?.skipped({ topic, partition }, nextOffset),
      },
      onFenced: this.options.onFenced,
    });
    this.membership = membership;
    this.createTasks(this.client, admin, membership);
    await untilReady('joining the group', () =>
      membership.start().catch(async (error: unknown) => {
        await membership.stop().catch(() => undefined);
        throw error;
      }),
    );
    stillStarting();
  }

  /** The dedup stores, the task factory and the member's tasks, and the metrics that watch them. */
  private createTasks(client: KafkaClient, admin: KafkaAdmin, membership: MemberConsumer): void {
    const { topology, config, clock, thread } = this.options.worker;
    const { logger, metrics, health } = this.options;
    this.dedupStores = createDedupStores(topology, config, clock);
    const listener = combineTaskListeners(metrics.listener(), taskLogListener(logger), health.listener());
    // One circuit breaker and retry budget per processor for the whole worker process.
    const resilience = new ResilienceRegistry(topology, (t) => listener.onCircuitTransition?.(t));
    metrics.watchResilience(resilience, () => (clock ?? Date).now());
    metrics.watchTasks({
      tasks: () => this.tasks?.views() ?? [],
      endOffsets: async (topics) => new Map(await Promise.all(topics.map(async (t) => [t, await admin.latestOffsets(t)] as const))),
      isRetryTier: (topic) => (routeOf(topology, topic)?.tier ?? null) !== null,
    });
    this.factory = new TaskFactory({
      topology,
      client,
      admin,
      producer: this.producer,
      dedupStores: this.dedupStores,
      config,
      logger,
      listener,
      resilience,
      tracer: new OtelAttemptTracer(),
      ...(clock ? { clock } : {}),
      ...(membership.sharesTransactions ? { sharedTransaction: () => membership.sharedTransaction() } : {}),
    });
    this.tasks = new AssignedTasks({
      factory: this.factory,
      fetcher: membership,
      committer: membership,
      logger,
      active: this.options.active,
      atLeastOnce: topology.processingGuarantee === 'at_least_once',
      held: this.tasksHeld,
      ...(thread !== undefined ? { thread } : {}),
    });
  }

  /**
   * After the tasks closed: leaves the group, then closes the task factory, disconnects the
   * producer, closes the dedup stores and disconnects the admin — the parts that are open. A
   * failed leave is logged, a failed disconnect ignored.
   *
   * @param options.step told each step before it is taken (what a slow shutdown waits for)
   * @param options.leave false: the consumer is being stopped already (a restart's, not joined), do not wait for it
   * @throws what closing the task factory or the dedup stores throws
   */
  async close(options: { readonly step?: (what: string) => void; readonly leave?: boolean } = {}): Promise<void> {
    const step = options.step ?? (() => undefined);
    step('the consumer to leave the group');
    if (options.leave !== false)
      await this.membership?.stop().catch((error: unknown) => this.options.logger.warn({ err: error }, 'leaving the group failed'));
    step("the tasks' transactional producers to disconnect");
    await this.factory?.close();
    step('the producer to disconnect');
    await this.producer?.disconnect().catch(() => undefined);
    step('the dedup stores to close');
    await this.dedupStores?.close();
    step('the admin client to disconnect');
    await this.admin?.disconnect().catch(() => undefined);
  }
}
