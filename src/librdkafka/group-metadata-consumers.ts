import { call, type NativeConsumer } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';

/**
 * Consumers that only name a consumer group, for `sendOffsetsToTransaction` without a live
 * group member (per-task producers, `weir dlq replay`): librdkafka takes a transaction's
 * offsets only with a consumer's group metadata, and a consumer that never subscribes gives
 * the group id alone (no member id, generation -1 — the pre-KIP-447 form, fenced by
 * transactional id only). One consumer per group id, shared by the producers that use it and
 * disconnected when the last one lets it go.
 */
export class GroupMetadataConsumers {
  private readonly entries = new Map<string, { readonly consumer: Promise<NativeConsumer>; readonly users: Set<object> }>();

  constructor(private readonly clients: NativeClients) {}

  /** The group's metadata consumer, connected, held by `user` until {@link release}. */
  async acquire(groupId: string, user: object): Promise<NativeConsumer> {
    let entry = this.entries.get(groupId);
    if (entry === undefined) {
      const consumer = this.connect(groupId);
      entry = { consumer, users: new Set() };
      this.entries.set(groupId, entry);
      // A consumer that failed to connect is not kept: the next acquire tries again.
      consumer.catch(() => this.entries.get(groupId) === entry && this.entries.delete(groupId));
    }
    entry.users.add(user);
    return entry.consumer;
  }

  /** `user` no longer needs the group's consumer; the last one out disconnects it. */
  async release(groupId: string, user: object): Promise<void> {
    const entry = this.entries.get(groupId);
    if (entry === undefined || !entry.users.delete(user) || entry.users.size > 0) return;
    this.entries.delete(groupId);
    const consumer = await entry.consumer.catch(() => undefined);
    if (consumer !== undefined) await call((cb) => consumer.disconnect(cb)).catch(() => undefined);
  }

  private connect(groupId: string): Promise<NativeConsumer> {
    return this.clients.nonJoiningConsumer({ 'group.id': groupId });
  }
}
