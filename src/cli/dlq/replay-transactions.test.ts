import { describe, expect, it } from 'vitest';
import { ProducerFencedError, ReplayFencedError } from '../../errors.js';
import type { KafkaClient, TransactionalProducerClient } from '../../kafka/kafka-client.js';
import type { OutputRecord } from '../../record/record-types.js';
import { ReplayTransactions } from './replay-transactions.js';

const DLQ = 'pay.dlq';
const GROUP = 'weir-replay.pay.dlq';
const TXN_ID = `${GROUP}.producer`;
const POSITION = { topic: DLQ, partition: 0, offset: 10 };
const RECORDS: OutputRecord[] = [{ topic: 'pay', key: Buffer.from('k'), value: Buffer.from('v'), headers: {} }];

type Step = 'begin' | 'send' | 'sendOffsets' | 'commit' | 'abort';

/**
 * A transactional producer that logs each call and throws the next scripted error of a step.
 * Like kafkajs, it refuses `begin()` after an abort that failed (the producer is stuck mid-abort).
 */
class ScriptedProducer implements TransactionalProducerClient {
  readonly transactionalId = TXN_ID;
  readonly calls: Step[] = [];
  private stuckAborting = false;

  constructor(private readonly failures: Partial<Record<Step, unknown[]>>) {}

  async init(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async reset(): Promise<void> {}
  async begin(): Promise<void> {
    this.step('begin');
    if (this.stuckAborting) throw new Error('Transaction state exception: Cannot call "beginTransaction" in state "ABORTING"');
  }
  async send(): Promise<void> {
    this.step('send');
  }
  async sendOffsets(): Promise<void> {
    this.step('sendOffsets');
  }
  async commit(): Promise<void> {
    this.step('commit');
  }
  async abort(): Promise<void> {
    try {
      this.step('abort');
    } catch (error) {
      this.stuckAborting = true;
      throw error;
    }
  }

  private step(name: Step): void {
    this.calls.push(name);
    const error = this.failures[name]?.shift();
    if (error !== undefined) throw error;
  }
}

async function open(producer: ScriptedProducer): Promise<ReplayTransactions> {
  const client = { transactionalProducer: () => producer } as unknown as KafkaClient;
  return ReplayTransactions.open(client, DLQ, GROUP);
}

describe('ReplayTransactions.write', () => {
  it('aborts a chunk whose transaction failed before its commit and tries it again', async () => {
    const producer = new ScriptedProducer({ sendOffsets: [new Error('CONCURRENT_TRANSACTIONS')] });
    await (await open(producer)).write(RECORDS, POSITION);
    expect(producer.calls).toEqual(['begin', 'send', 'sendOffsets', 'abort', 'begin', 'send', 'sendOffsets', 'commit']);
  });

  it('reports a fence that only the abort reveals as ReplayFencedError, and does not begin again', async () => {
    const producer = new ScriptedProducer({
      send: [new Error('The coordinator is loading')],
      abort: [new ProducerFencedError(TXN_ID)],
    });
    const txns = await open(producer);
    const error = await txns.write(RECORDS, POSITION).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayFencedError);
    expect(producer.calls).toEqual(['begin', 'send', 'abort']);
  });

  it('does not try again after an abort that failed otherwise, and names both errors', async () => {
    const producer = new ScriptedProducer({
      sendOffsets: [new Error('NOT_COORDINATOR')],
      abort: [new Error('request timed out')],
    });
    const error = await (await open(producer)).write(RECORDS, POSITION).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors.map((e: Error) => e.message)).toEqual(['NOT_COORDINATOR', 'request timed out']);
    expect((error as Error).message).toBe('NOT_COORDINATOR; aborting that transaction failed too: request timed out');
    expect(producer.calls).toEqual(['begin', 'send', 'sendOffsets', 'abort']);
  });

  it('does not abort or retry a fenced transaction', async () => {
    const producer = new ScriptedProducer({ send: [new ProducerFencedError(TXN_ID)] });
    const error = await (await open(producer)).write(RECORDS, POSITION).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayFencedError);
    expect(producer.calls).toEqual(['begin', 'send']);
  });

  it('does not report a failed commit as a fence when the abort after it is fenced (the commit may have landed)', async () => {
    const producer = new ScriptedProducer({ commit: [new Error('request timed out')], abort: [new ProducerFencedError(TXN_ID)] });
    const error = await (await open(producer)).write(RECORDS, POSITION).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ReplayFencedError);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as Error).message).toMatch(/^request timed out; aborting that transaction failed too: .*fenced.*in doubt/);
    expect(producer.calls).toEqual(['begin', 'send', 'sendOffsets', 'commit', 'abort']);
  });

  it('never tries a failed commit again (its outcome is in doubt)', async () => {
    const producer = new ScriptedProducer({ commit: [new Error('request timed out')] });
    const error = await (await open(producer)).write([], POSITION).catch((e: unknown) => e);
    expect((error as Error).message).toBe('request timed out');
    expect(producer.calls).toEqual(['begin', 'sendOffsets', 'commit', 'abort']);
  });
});
