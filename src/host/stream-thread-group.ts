import type { Logger } from 'pino';
import type { GroupDescription, KafkaAdmin } from '../kafka/kafka-admin.js';
import { createKafkaClient } from '../config/kafka-clients.js';
import { memberIdentity } from '../worker/member-identity.js';
import { threadsSettled, type ThreadJoin } from './thread-start-gate.js';
import type { WorkerConfig } from '../config/worker-config.js';

/** How often the start gate describes the group while it waits, ms. */
const SETTLE_POLL_MS = 100;

/** Options of a {@link StreamThreadGroup}. */
export interface StreamThreadGroupOptions {
  /** The threads' consumer group (`application.id`). */
  readonly groupId: string;
  readonly config: Pick<WorkerConfig, 'client' | 'brokers' | 'groupInstanceIds'>;
  readonly logger: Logger;
}

/**
 * The process's own admin connection to its stream threads' consumer group (client id
 * `weir-<application.id>-<host>-<pid>`, not a member), for what only the process can do:
 *
 * - the start gate ({@link settle}): wait until the group settled on every thread;
 * - {@link leave}: take a thread that died out of the group at once. A thread that ends on an
 *   uncaught error never sends its `LeaveGroup`, so without this every member would wait for its
 *   session to time out before the group could rebalance: every partition stalled, the other
 *   threads' too (kafkajs rebalances eagerly). Kafka Streams gets the same effect by closing the
 *   dead `StreamThread`'s consumer, which leaves the group.
 *
 * Connected on first use; {@link close} disconnects.
 */
export class StreamThreadGroup {
  private admin: Promise<KafkaAdmin> | undefined;

  constructor(private readonly options: StreamThreadGroupOptions) {}

  private connect(): Promise<KafkaAdmin> {
    this.admin ??= (async () => {
      const { config, groupId, logger } = this.options;
      const client = await createKafkaClient(config.client, {
        brokers: config.brokers,
        clientId: memberIdentity(groupId, config).clientId,
        logger,
      });
      const admin = client.admin();
      await admin.connect();
      return admin;
    })().catch((error: unknown) => {
      this.admin = undefined;
      throw error;
    });
    return this.admin;
  }

  /** The group as its coordinator describes it. @throws the client's error */
  async describe(): Promise<GroupDescription> {
    return (await this.connect()).describeGroup(this.options.groupId);
  }

  /**
   * Waits until {@link threadsSettled} holds for the threads' latest `joins()` (read again at
   * each look), at most `timeoutMs`, or until `stopped()`.
   *
   * @returns `true` when the group settled; else why it did not, at the end of the wait
   */
  async settle(joins: () => ReadonlyArray<ThreadJoin | undefined>, timeoutMs: number, stopped: () => boolean): Promise<true | string> {
    const deadline = Date.now() + timeoutMs;
    while (!stopped()) {
      const current = joins();
      const why = current.some((j) => j === undefined)
        ? threadsSettled(current, { groupId: this.options.groupId, state: 'Unknown', protocol: '', members: [] })
        : await this.describe().then(
            (group) => threadsSettled(joins(), group),
            (error: unknown) => `the group could not be described (${String(error)})`,
          );
      if (why === true || Date.now() >= deadline) return why;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    }
    return 'the process is stopping';
  }

  /**
   * Sends a `LeaveGroup` for `memberId`, the member of a thread that ended without leaving.
   *
   * @returns false when the client cannot send it (librdkafka: the member's session times out)
   * @throws the client's error
   */
  async leave(memberId: string): Promise<boolean> {
    const admin = await this.connect();
    if (admin.leaveGroup === undefined) return false;
    await admin.leaveGroup(this.options.groupId, memberId);
    return true;
  }

  /** Disconnects the admin client, if it connected. */
  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  }
}
