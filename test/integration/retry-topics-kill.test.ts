/**
 * No loss under at_least_once with retry topics: SIGKILL the worker while records wait in
 * the retry tiers, restart it, and every input still ends in the sink or the DLQ. The source
 * and tier offsets are committed only after the tier / DLQ copies are acknowledged, so a kill
 * can duplicate (counted here) but never lose.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTopics, endOffsets, produce, quietKafka, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { startWorker, type WorkerProcess } from '../../scripts/lib/worker-process.js';

const FIXTURE = 'test/integration/fixtures/scripted-topology.ts';

interface Script {
  id: string;
  seq: number;
  failAttempts?: number;
  kind?: 'fatal' | 'poison';
}

let kafka: Kafka;
const workers: WorkerProcess[] = [];

beforeAll(() => {
  kafka = quietKafka(inject('kafkaBrokers'), 'weir-it-retry-kill');
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
});

const idOf = (r: ReadRecord): string => (JSON.parse(r.value!.toString()) as Script).id;

describe('weir run (retry topics, at_least_once)', () => {
  it('loses nothing when the worker is SIGKILLed twice in the middle of retry traffic', async () => {
    const id = `rt-kill-${randomUUID().slice(0, 8)}`;
    const topics = { source: `${id}.in`, sink: `${id}.out`, dlq: `${id}.dlq`, tier0: `${id}.scripted.retry.0`, tier1: `${id}.scripted.retry.1` };
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic: topics.source, partitions: 3 }]);
    const env = {
      WEIR_TEST_SOURCE: topics.source,
      WEIR_TEST_SINK: topics.sink,
      WEIR_TEST_DLQ: topics.dlq,
      WEIR_TEST_RETRY_MODE: 'topics',
      WEIR_TEST_MAX_ATTEMPTS: '3',
      WEIR_TEST_BACKOFF_MS: '1000',
      WEIR_TEST_BACKOFF_MAX_MS: '2000',
    };
    const start = (): WorkerProcess => {
      const worker = startWorker(FIXTURE, { args: ['--application-id', id, '--commit-interval-ms', '200', '--session-timeout-ms', '6000'], env });
      workers.push(worker);
      return worker;
    };
    const scripts: Script[] = Array.from({ length: 600 }, (_, seq) => ({
      id: `r${seq}`,
      seq,
      ...(seq % 4 === 1 ? { failAttempts: 1 } : seq % 4 === 2 ? { failAttempts: 2 } : {}),
      ...(seq % 29 === 3 ? { kind: 'poison' as const } : seq % 31 === 5 ? { kind: 'fatal' as const } : {}),
    }));
    const expectedDlq = new Set(scripts.filter((s) => s.kind !== undefined).map((s) => s.id));
    const tierRecords = async (): Promise<number> => {
      const ends = await endOffsets(admin, [topics.tier0, topics.tier1]);
      let n = 0;
      for (const partitions of ends.values()) for (const end of partitions.values()) n += end;
      return n;
    };

    const first = start();
    await first.waitForLog((l) => l.msg === 'worker started', 60_000);
    await produce(kafka, topics.source, scripts.map((s) => ({ key: `k${s.seq}`, value: JSON.stringify(s) })));
    // Kill while many records wait in the tiers (due in 1–2 s) and others are still arriving.
    await waitFor(async () => (await tierRecords()) >= 100, 30_000, () => 'no retry traffic');
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const tierAtFirstKill = await tierRecords();
    // The kill really hit the middle of the work: not every input had its outcome yet.
    const finalsAtKill = [...(await endOffsets(admin, [topics.sink, topics.dlq])).values()].flatMap((p) => [...p.values()]).reduce((a, b) => a + b, 0);
    expect(finalsAtKill).toBeLessThan(scripts.length);

    const second = start();
    await second.waitForLog((l) => l.msg === 'worker started', 60_000);
    // Kill again once the restarted worker has written more retry traffic.
    await waitFor(async () => (await tierRecords()) > tierAtFirstKill + 20, 30_000, () => 'no retry traffic after the restart');
    expect(await second.stop('SIGKILL')).toBe('SIGKILL');

    const third = start();
    const { records, complete } = await readTopics(kafka, [topics.sink, topics.dlq], {
      until: (rs) => new Set(rs.map(idOf)).size >= scripts.length,
      timeoutMs: 90_000,
    });
    const seen = new Set(records.map(idOf));
    const missing = scripts.filter((s) => !seen.has(s.id)).map((s) => s.id);
    expect(missing, 'inputs in neither the sink nor the DLQ').toEqual([]);
    expect(complete).toBe(true);

    const sinkIds = new Set(records.filter((r) => r.topic === topics.sink).map(idOf));
    const dlqIds = new Set(records.filter((r) => r.topic === topics.dlq).map(idOf));
    expect([...dlqIds].sort()).toEqual([...expectedDlq].sort());
    expect([...sinkIds].filter((x) => dlqIds.has(x))).toEqual([]);
    expect(sinkIds.size + dlqIds.size).toBe(scripts.length);
    const duplicates = records.length - scripts.length;
    console.log(`[retry-topics-kill] ${scripts.length} inputs: ${sinkIds.size} in the sink, ${dlqIds.size} in the DLQ, ${duplicates} duplicate(s) from the two kills`);

    expect(await third.stop('SIGTERM')).toBe(0);
    await admin.disconnect();
  });
});
