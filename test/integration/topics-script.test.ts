/**
 * `npm run topics` (scripts/topics.ts, on kafkajs) against the real broker: a failure names the
 * command and the topic, with the broker's reason, and an unreachable broker is named with how
 * to pick another. Its happy path runs in the README's "Try your own topology" and demo.test.ts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { unique } from './support/unique.js';

const run = promisify(execFile);

const fx = useIntegrationFixture('weir-it-topics-script');

/** Runs `scripts/topics.ts args` with `brokers`; its exit code and stderr. */
async function topics(args: string[], brokers = fx.brokers): Promise<{ code: number; stderr: string; stdout: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/topics.ts', ...args], {
      env: { ...process.env, KAFKA_BROKERS: brokers },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm run topics', () => {
  it('names the command, the topic and the reason when it fails', async () => {
    const created = unique('topics-script');
    expect(await topics(['create', created, '--partitions', '2'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`created ${created}`),
    });
    expect(await topics(['create', created, '--partitions', '3'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`${created} exists already, with 2 partition(s) (not 3: left as it is)`),
    });
    const bad = await topics(['create', 'bad topic!']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^topics: create bad topic!: topic name 'bad topic!' has characters other than/m);
    const usage = await topics(['create', created, '--partitions', '0']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--partitions/);
    const missing = unique('connect-offsets-missing');
    const read = await topics(['read', missing, '--timeout-ms', '5000']);
    expect(read.code).toBe(1);
    expect(read.stderr).toContain(`topics: read ${missing}: topic '${missing}' does not exist`);
    expect(read.stderr, 'a topic named like a connection error is no unreachable broker').not.toContain('KAFKA_BROKERS');
    const produce = await topics(['produce', missing]);
    expect(produce.code).toBe(1);
    expect(produce.stderr).toContain(`topics: produce ${missing}: topic '${missing}' does not exist`);
  });

  it('names the broker it could not reach', async () => {
    const unreachable = await topics(['read', 'anything'], '127.0.0.1:9');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/topics: read anything: .*ECONNREFUSED.*\(broker 127\.0\.0\.1:9: set KAFKA_BROKERS/);
  });
});
