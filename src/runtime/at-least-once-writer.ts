import type { OffsetCommitter, RecordProducer } from './ports.js';
import type { TaskWriter, WriteResult } from './task-writer.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * at_least_once: outputs are produced (idempotent producer, acks=-1) at every flush and the
 * offset is committed only after they are acknowledged, at most once per commit interval.
 * A crash after the acks and before the commit replays those records: the documented
 * duplicate window.
 */
export class AtLeastOnceWriter implements TaskWriter {
  private committed: number;

  constructor(
    private readonly topic: string,
    private readonly partition: number,
    private readonly producer: RecordProducer,
    private readonly committer: OffsetCommitter,
    startOffset: number,
  ) {
    this.committed = startOffset;
  }

  get committedOffset(): number {
    return this.committed;
  }

  async write(unit: UnitOfWork, nextOffset: number, commitDue: boolean): Promise<WriteResult> {
    if (unit.outputs.length > 0) {
      try {
        await this.producer.send(unit.outputs);
      } catch (error) {
        return { kind: 'failed', port: 'produce', error };
      }
    }
    if (!commitDue || nextOffset <= this.committed) return { kind: 'durable', committed: false };
    try {
      await this.committer.commit([{ topic: this.topic, partition: this.partition, offset: nextOffset }]);
    } catch (error) {
      return { kind: 'durable', committed: false, commitError: error };
    }
    this.committed = nextOffset;
    return { kind: 'durable', committed: true };
  }
}
