import type { TopicPartitionOffset } from '../record/record-types.js';
import { taskId } from '../record/task-id.js';
import type { OffsetCommitter } from '../runtime/ports.js';

/**
 * A member's group offset commits (at_least_once) that a shutdown can give up on: after
 * {@link abandon}, the commits still waiting for the coordinator's answer fail, and so does every
 * later one. The coordinator answers a member's commits only after its pending JoinGroup, which a
 * slow rebalance holds up to the rebalance timeout; a task whose final commit fails closes
 * without it (Kafka Streams' dirty close of a task whose commit fails on shutdown).
 */
export class AbandonableCommits implements OffsetCommitter {
  private readonly waiting = new Set<{ readonly offsets: readonly TopicPartitionOffset[]; readonly reject: (e: Error) => void }>();
  private abandoned: Error | undefined;

  /** @param committer the member's consumer */
  constructor(private readonly committer: OffsetCommitter) {}

  /** Commits through the member's consumer. @throws the consumer's error, or the abandon error once {@link abandon} was called */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    if (this.abandoned !== undefined) return Promise.reject(this.abandoned);
    return new Promise<void>((resolve, reject) => {
      const waiting = { offsets, reject };
      this.waiting.add(waiting);
      this.committer
        .commit(offsets)
        .then(resolve, reject)
        .finally(() => this.waiting.delete(waiting));
    });
  }

  /**
   * Fails the commits waiting for an answer, and every later one, with `error`.
   *
   * @returns the ids of the tasks whose commits were waiting
   */
  abandon(error: Error): string[] {
    this.abandoned = error;
    return this.failWaiting(error);
  }

  /**
   * Fails the commits waiting for an answer with `error`; later ones go through. For the tasks
   * of a consumer that stopped: they close without a commit, and one still in its client's
   * retries (a broker that is down) would hold up their close, and a shutdown behind it.
   *
   * @returns the ids of the tasks whose commits were waiting
   */
  failWaiting(error: Error): string[] {
    const tasks = [...new Set([...this.waiting].flatMap((w) => w.offsets.map(taskId)))];
    for (const waiting of this.waiting) waiting.reject(error);
    return tasks;
  }
}
