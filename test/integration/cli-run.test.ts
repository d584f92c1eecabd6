/**
 * `weir run` as a user runs it: exit codes and messages when a source topic is missing, Kafka
 * cannot be reached or the shutdown times out; the flags that reach the worker; clean stops;
 * the warning of exactly_once on kafkajs at many partitions.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { produce } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { copyTopology as VALID, topologyFilesIn, weirCli as weir } from './support/cli-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { CLIENT, onClient } from './support/client-under-test.js';
import { librdkafkaProblem } from '../../src/config/kafka-clients.js';
import {
  EXACTLY_ONCE_PARTITION_WARNING_THRESHOLD as THRESHOLD,
  exactlyOncePartitionWarning,
} from '../../src/host/exactly-once-partition-warning.js';

const fx = useIntegrationFixture('weir-it-cli-run');
const tmp = fx.tempDir();
const topologyFile = topologyFilesIn(tmp);

describe(onClient('weir run'), () => {
  it('exits 1 naming a missing source topic', async () => {
    const file = topologyFile('missing-source.ts', VALID(`cli-${randomUUID().slice(0, 8)}`, `absent-${randomUUID().slice(0, 8)}`));
    const result = await weir(['run', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/source topic 'absent-[0-9a-f]+' does not exist/);
  });

  it('exits 1 naming the brokers when Kafka cannot be reached, within seconds', async () => {
    const file = topologyFile('unreachable.ts', VALID('cli-unreachable', 'whatever'));
    const began = Date.now();
    const result = await weir(['run', file, '--brokers', '127.0.0.1:1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach Kafka at 127.0.0.1:1');
    expect(Date.now() - began).toBeLessThan(30_000);
  });

  it('shuts down cleanly when SIGTERM comes while the worker is still starting', async () => {
    const id = randomUUID().slice(0, 8);
    await fx.createTopics([{ topic: `cli-early-${id}`, partitions: 1 }]);
    const worker = fx.startWorker(topologyFile(`early-${id}.ts`, VALID(`cli-early-${id}`, `cli-early-${id}`)));
    await worker.waitForLog((l) => l.msg === 'joining the consumer group' || l.msg === 'worker started');
    const began = Date.now();
    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(worker.logs.some((l) => l.msg === 'worker stopped')).toBe(true);
  });

  it('a shutdown that outlives --shutdown-timeout-ms exits 1 and says so on stderr', async () => {
    const id = randomUUID().slice(0, 8);
    const topic = `cli-hang-${id}`;
    await fx.createTopics([{ topic, partitions: 1 }]);
    const marker = path.join(tmp, `in-hand-${id}`);
    // The processor takes the record and never returns: the shutdown waits for it in vain.
    const file = topologyFile(
      `hang-${id}.ts`,
      `import { writeFileSync } from 'node:fs';\nimport { topology, sink } from 'weir';\n` +
        `export default topology('${topic}').source('${topic}', 'json')` +
        `.process('hang', () => { writeFileSync(${JSON.stringify(marker)}, 'x'); return new Promise(() => {}); })` +
        `.branch({ success: sink('${topic}.out') });\n`,
    );
    const worker = fx.startWorker(file, { args: ['--shutdown-timeout-ms', '500'] });
    await worker.waitForLog((l) => l.msg === 'worker started');
    await produce(fx.kafka, topic, [{ key: 'k', value: '{}' }]);
    await waitFor(
      () => existsSync(marker),
      30_000,
      () => 'the processor never got the record',
    );
    const began = Date.now();
    expect(await worker.stop('SIGTERM')).toBe(1);
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(worker.otherOutput.join('\n')).toContain(
      'weir: shutdown did not finish within 500 ms (--shutdown-timeout-ms): exited without committing or leaving the group',
    );
  });

  it('passes --guarantee and --application-id to the worker, and exits 0 on SIGINT', async () => {
    const id = randomUUID().slice(0, 8);
    await fx.createTopics([{ topic: `cli-${id}`, partitions: 1 }]);
    const file = topologyFile(`run-${id}.ts`, VALID('from-file', `cli-${id}`));
    const worker = fx.startWorker(file, { args: ['--guarantee', 'exactly_once', '--application-id', `cli-app-${id}`] });
    const started = await worker.waitForLog((l) => l.msg === 'worker started');
    expect(started['guarantee']).toBe('exactly_once');
    expect(started['applicationId']).toBe(`cli-app-${id}`);
    const began = Date.now();
    expect(await worker.stop('SIGINT')).toBe(0);
    expect(Date.now() - began).toBeLessThan(10_000);
  });

  it(`exactly_once with more than ${THRESHOLD} partitions (sources and retry tiers) warns once on kafkajs, naming --client librdkafka; not at ${THRESHOLD}, never on librdkafka`, async () => {
    const id = randomUUID().slice(0, 8);
    // A source of n partitions with one retry tier (of as many): 2n partitions to consume.
    const worker = async (name: string, sourcePartitions: number) => {
      const topic = `cli-eos-${name}-${id}`;
      await fx.createTopics([{ topic, partitions: sourcePartitions }]);
      const file = topologyFile(
        `eos-${name}-${id}.ts`,
        `import { topology, sink } from 'weir';\nexport default topology('${topic}').source('${topic}', 'json')` +
          `.process('copy', (r) => r.value, { retry: { mode: 'topics', tiers: ['1s'] } }).branch({ success: sink('${topic}.out') });\n`,
      );
      return fx.startWorker(file, { args: ['--guarantee', 'exactly_once'] });
    };
    const above = await worker('above', THRESHOLD / 2 + 1);
    const at = await worker('at', THRESHOLD / 2);
    // The check runs before the worker starts: once it started, every warning it makes is out.
    await Promise.all([above, at].map((w) => w.waitForLog((l) => l.msg === 'worker started')));
    const warnings = (w: typeof above) => w.logs.filter((l) => l.msg.startsWith('exactly_once on '));
    expect(warnings(at)).toEqual([]);
    if (CLIENT === 'librdkafka') expect(warnings(above)).toEqual([]);
    else {
      const expected = exactlyOncePartitionWarning(
        { guarantee: 'exactly_once', client: CLIENT, partitions: THRESHOLD + 2 },
        await librdkafkaProblem(),
      );
      expect(expected).toContain('--client librdkafka');
      expect(warnings(above)).toEqual([
        expect.objectContaining({ level: 40, msg: expected, partitions: THRESHOLD + 2, threshold: THRESHOLD }),
      ]);
    }
    expect(await Promise.all([above.stop('SIGTERM'), at.stop('SIGTERM')])).toEqual([0, 0]);
  });
});
