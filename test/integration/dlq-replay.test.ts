/**
 * The inspect → fix → replay walkthrough of docs/retry-and-dlq.md on the real broker, with
 * the example topology topologies/payments.ts: a currency the gateway does not take sends
 * payments to the DLQ; after the fix (the worker restarted with the currency enabled)
 * `weir dlq replay` sends them back and they are charged. A payment that keeps failing is
 * replayed until its replay limit (`maxReplays: 2`) and then refused.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { produce, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { readTopicNow } from '../../scripts/lib/read-topic-now.js';
import { runWeir, type WorkerProcess } from '../../scripts/lib/worker-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';
import { topicSize } from './support/topic-size.js';

const TOPOLOGY = 'topologies/payments.ts';

const fx = useIntegrationFixture('weir-it-dlq-replay');

interface PaymentJson {
  id: string;
  accountId: string;
  amountCents: number;
  currency: string;
  attempt?: number;
}

const payment = (r: ReadRecord): PaymentJson => JSON.parse(r.value!.toString()) as PaymentJson;

/** Committed records of `topic` now (its end offsets also count the replay's transaction markers). */
async function committed(topic: string): Promise<number> {
  return (await readTopicNow(fx.kafka, fx.admin, topic, { timeoutMs: 30_000 })).length;
}

describe(onClient('inspect → fix → replay (topologies/payments.ts)'), () => {
  it('replays the fixed payments once, and refuses a payment past its replay limit', async () => {
    const app = `payments-it-${randomUUID().slice(0, 8)}`;
    const topics = { source: `${app}.payments`, charged: `${app}.charged`, dlq: `${app}.charge.dlq` };
    await fx.createTopics([{ topic: topics.source, partitions: 2 }]);
    const start = (currencies: string): WorkerProcess => {
      return fx.startWorker(TOPOLOGY, {
        args: ['--application-id', app],
        env: {
          PAYMENTS_TOPIC: topics.source,
          PAYMENTS_CHARGED_TOPIC: topics.charged,
          PAYMENTS_CURRENCIES: currencies,
          PAYMENTS_FAILURE_RATE: '0',
        },
      });
    };
    const read = (topic: string, count: number) => readTopics(fx.kafka, [topic], { until: (rs) => rs.length >= count, timeoutMs: 30_000 });

    // 1. The gateway takes EUR only: 6 USD payments and an invalid one are dead-lettered at once.
    let worker = start('EUR');
    const payments: PaymentJson[] = Array.from({ length: 16 }, (_, i) => ({
      id: `p${i}`,
      accountId: `a${i % 4}`,
      amountCents: 100 + i,
      currency: i % 8 < 3 ? 'USD' : 'EUR',
    }));
    payments.push({ id: 'p-bad', accountId: 'a9', amountCents: -1, currency: 'EUR' });
    await produce(
      fx.kafka,
      topics.source,
      payments.map((p) => ({ key: p.accountId, value: JSON.stringify(p) })),
    );
    expect((await read(topics.charged, 10)).complete).toBe(true);
    expect((await read(topics.dlq, 7)).complete).toBe(true);

    // 2. Inspect: what failed, and why.
    const inspected = await runWeir(['dlq', 'inspect', topics.dlq, '--format', 'json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    const report = JSON.parse(inspected.stdout);
    expect(report.counts).toEqual({ total: 7, byErrorClass: { UnsupportedCurrency: 6, NonRetriableError: 1 }, byProcessor: { charge: 7 } });
    for (const r of report.records) {
      expect(r).toMatchObject({
        applicationId: app,
        processor: 'charge',
        attempts: 1,
        replayCount: 0,
        replayMax: 2,
        origin: { topic: topics.source },
      });
      expect(r.weirHeaders['weir.error.stack']).toContain(r.errorClass);
    }

    // 3. The fix: enable USD and restart the worker.
    expect(await worker.stop('SIGTERM')).toBe(0);
    worker = start('EUR,USD');

    // 4. Replay the unsupported-currency payments: a dry run first, then for real.
    const dry = await runWeir(['dlq', 'replay', topics.dlq, '--error-class', 'UnsupportedCurrency', '--dry-run']);
    expect(dry.stdout).toMatch(/would replay\s+6 /);
    const sourceBefore = await committed(topics.source);
    const replay = await runWeir(['dlq', 'replay', topics.dlq, '--error-class', 'UnsupportedCurrency', '--rate', '100']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/replayed\s+6 \(.*\.payments: 6\)/);
    expect(replay.stdout).toMatch(/skipped\s+1 /);
    expect(await committed(topics.source)).toBe(sourceBefore + 6);
    const { records: charged, complete } = await read(topics.charged, 16);
    expect(complete).toBe(true);
    expect(charged.map((r) => payment(r).id).sort()).toEqual(
      payments
        .filter((p) => p.id !== 'p-bad')
        .map((p) => p.id)
        .sort(),
    );
    expect(charged.filter((r) => payment(r).currency === 'USD')).toHaveLength(6);

    // Again: nothing is replayed twice.
    const again = await runWeir(['dlq', 'replay', topics.dlq, '--error-class', 'UnsupportedCurrency']);
    expect(again.stdout).toContain('nothing to replay, all 7 record(s) were handled by earlier runs');
    expect(await committed(topics.source)).toBe(sourceBefore + 6);

    // 5. The invalid payment fails on every replay: it comes back to the DLQ with its replay
    //    count, until the replay limit (maxReplays: 2) refuses it. The first replay left it
    //    behind the default group's position (filtered out), so it goes through its own group.
    expect(replay.stdout).toContain('the 1 skipped record(s) are behind the group');
    const invalid = ['dlq', 'replay', topics.dlq, '--error-class', 'NonRetriableError', '--group', `${app}.invalid-replays`];
    for (let replays = 1; replays <= 2; replays++) {
      const run = await runWeir(invalid);
      expect(run.stdout, `replay ${replays}`).toMatch(/replayed\s+1 /);
      const { records: dlq } = await read(topics.dlq, 7 + replays);
      const back = dlq.filter((r) => payment(r).id === 'p-bad' && r.headers['weir.replay.count'] === String(replays));
      expect(back, `replay ${replays}`).toHaveLength(1);
      expect(back[0]!.headers['weir.replay.max']).toBe('2');
      expect(back[0]!.headers['weir.original.topic']).toBe(topics.source);
    }
    const refused = await runWeir(invalid);
    expect(refused.code).toBe(0);
    expect(refused.stdout).toMatch(/replayed\s+0/);
    expect(refused.stdout).toMatch(/refused\s+1 \(max-replays: 1\)/);
    expect(await topicSize(fx.admin, topics.dlq)).toBe(9);

    const summary = await runWeir(['dlq', 'inspect', topics.dlq]);
    expect(summary.stdout).toMatch(/NonRetriableError\s+3/);
    expect(summary.stdout).toMatch(/NonRetriableError\s+1\s+2\/2\s+/);
    // The invalid payment's three dead letters share their original record: flagged as duplicates.
    expect(summary.stdout).toContain('duplicates: 2 record(s) repeat the original record of another (1 original record(s)');
    expect(summary.stdout).toMatch(/NonRetriableError\s+1\s+2\/2\s+\S+\.payments-\d+@\d+ ×3 /);
    expect(await worker.stop('SIGTERM')).toBe(0);
  });
});
