/**
 * The exactly_once writer with the real kafkajs transactional producer on the real broker, with
 * faults injected at the wire: a commit whose reply is lost (the broker committed), a commit
 * that never reached the broker, and an abort that fails after a failed sendOffsets. In each case
 * kafkajs leaves its producer stuck (COMMITTING / ABORTING); the task throws it away, builds a
 * new one (InitProducerId), reads its committed offset back, and ends with every output exactly
 * once for read_committed readers.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Producer } from 'kafkajs';
import { Kafka, logLevel } from '../../src/kafkajs/kafkajs-library.js';
import { describe, expect, it } from 'vitest';
import { FaultySockets, KAFKA_API, type WireFault } from '../../scripts/lib/faulty-socket.js';
import { produce, readToEnd, readTopics } from '../../scripts/lib/topic-io.js';
import { sink } from '../../src/dsl/sink.js';
import { topology } from '../../src/dsl/topology-builder.js';
import { KafkajsAdmin } from '../../src/kafkajs/kafkajs-admin.js';
import { KafkajsTransactionalProducer } from '../../src/kafkajs/kafkajs-transactional-producer.js';
import type { InputRecord } from '../../src/record/record-types.js';
import { PartitionTask } from '../../src/runtime/partition-task.js';
import type { PortErrorEvent } from '../../src/runtime/task-listener.js';
import { compile } from '../../src/topology/compile.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-eos-txn');

const RECORDS = 60;

/** A task on partition 0 of a fresh source topic with RECORDS records, its producer behind faulty sockets. */
async function setup() {
  const id = `weir-it-txn-${randomUUID().slice(0, 8)}`;
  const topics = { source: `${id}.in`, sink: `${id}.out`, dlq: `${id}.dlq` };
  await fx.createTopics([topics.source, topics.sink, topics.dlq].map((topic) => ({ topic, partitions: 1 })));
  await produce(
    fx.kafka,
    topics.source,
    Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ n: i }) })),
  );
  const { records } = await readTopics(fx.kafka, [topics.source], { until: (rs) => rs.length >= RECORDS, timeoutMs: 30_000 });
  const input: InputRecord[] = records.map((r) => ({ ...r, key: r.key === null ? null : Buffer.from(r.key) }));

  const sockets = new FaultySockets();
  const faulty = new Kafka({
    clientId: `${id}-txn`,
    brokers: fx.brokers.split(','),
    logLevel: logLevel.NOTHING,
    socketFactory: sockets.factory,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  const producer = new KafkajsTransactionalProducer(faulty, `${id}-${topics.source}-0`, 10_000);
  let resets = 0;
  /** What the kafkajs producer said when asked for a new transaction just before each reset. */
  const stuck: string[] = [];
  const reset = producer.reset.bind(producer);
  producer.reset = async () => {
    resets++;
    const current = (producer as unknown as { producer?: Producer }).producer;
    stuck.push(
      await current!.transaction().then(
        async (t) => (await t.abort(), 'not stuck'),
        (e: Error) => e.message,
      ),
    );
    await reset();
  };
  await producer.init();
  const offsets = new KafkajsAdmin(fx.kafka);
  await offsets.connect();
  // Either may fail after the injected faults; closing is best effort.
  fx.onTeardown(() => producer.disconnect().catch(() => undefined));
  fx.onTeardown(() => offsets.disconnect().catch(() => undefined));

  const compiled = compile(
    topology({ applicationId: id, processingGuarantee: 'exactly_once', commitIntervalMs: 50 })
      .source(topics.source, 'json')
      .process('double', (r) => ({ n: (r.value as { n: number }).n * 2 }))
      .branch({ success: sink(topics.sink), dlq: sink(topics.dlq) }),
  );
  const portErrors: PortErrorEvent[] = [];
  const task = new PartitionTask({
    topology: compiled,
    topic: topics.source,
    partition: 0,
    startOffset: 0,
    clock: { now: () => Date.now() },
    output: { guarantee: 'exactly_once', transactions: producer, offsets },
    listener: { onPortError: (e) => portErrors.push(e) },
    maxPollRecords: 20,
  });
  /** Feeds the input in slices of 20 and polls (real time) until everything is committed. */
  const run = async (timeoutMs = 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let fed = 0;
    while (task.committedOffset < RECORDS) {
      if (Date.now() > deadline)
        throw new Error(
          `task committed ${task.committedOffset}/${RECORDS} within ${timeoutMs} ms; port errors: ${portErrors.map((e) => String(e.error)).join('; ')}`,
        );
      if (fed < RECORDS && task.buffered === 0) fed += task.enqueue(input.slice(fed, fed + 20));
      const r = await task.poll();
      if (r.kind === 'closed') throw new Error(`task closed: ${r.state}`);
      if (r.kind === 'wait') await sleep(Math.min(500, Math.max(0, r.untilMs - Date.now())));
      else if (r.kind === 'idle') await sleep(5);
    }
  };
  const outputs = async (isolation: 'read_committed' | 'read_uncommitted') =>
    (await readToEnd(fx.kafka, [topics.sink], { timeoutMs: 30_000, isolation })).map(
      (r) => (JSON.parse(r.value!.toString()) as { n: number }).n,
    );
  const committed = async () => offsets.committedOffset(id, topics.source, 0);
  return { sockets, task, run, outputs, committed, portErrors, resets: () => resets, stuck };
}

const doubled = Array.from({ length: RECORDS }, (_, i) => i * 2);
const tally = (values: readonly number[]) => {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
};

describe('exactly_once transactions with a stuck kafkajs producer (real broker, wire faults)', () => {
  it.each<[string, WireFault[], 'duplicates-aborted' | 'no-duplicates']>([
    ['a commit whose reply is lost (the broker committed)', [{ apiKey: KAFKA_API.EndTxn, lose: 'response' }], 'no-duplicates'],
    ['a commit that never reached the broker', [{ apiKey: KAFKA_API.EndTxn, lose: 'request' }], 'duplicates-aborted'],
    [
      'a failed sendOffsets whose abort fails too',
      [
        { apiKey: KAFKA_API.AddOffsetsToTxn, lose: 'request' },
        { apiKey: KAFKA_API.EndTxn, lose: 'request' },
      ],
      'duplicates-aborted',
    ],
  ])('%s: resets the producer, reads the offset back, and commits every output exactly once', async (_name, faults, uncommitted) => {
    const g = await setup();
    for (const fault of faults) g.sockets.arm(fault); // the first transactions hit them
    await g.run();
    expect(g.sockets.pending).toBe(0);
    expect(g.sockets.fired).toEqual(faults);
    expect(g.resets()).toBe(1); // the stuck producer was replaced once
    expect(g.stuck).toEqual([expect.stringMatching(/Cannot call "beginTransaction" in state "(COMMITTING|ABORTING)"/)]);
    expect(await g.committed()).toBe(RECORDS);
    const committed = await g.outputs('read_committed');
    expect(committed).toEqual(doubled);
    const all = await g.outputs('read_uncommitted');
    if (uncommitted === 'no-duplicates') {
      expect(all).toEqual(doubled);
    } else {
      // The failed transaction's records were written, then aborted: only read_uncommitted sees them.
      expect(all.length).toBeGreaterThan(RECORDS);
      expect([...tally(all).values()].some((n) => n > 1)).toBe(true);
    }
    if (uncommitted === 'no-duplicates') expect(g.portErrors).toEqual([]);
    else expect(g.portErrors.map((e) => e.port)).toContain('transaction');
  });
});
