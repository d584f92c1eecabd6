/**
 * librdkafka's `DescribeGroups` runs in a helper process (src/librdkafka/isolated-describe-groups.ts):
 * the binding dies of SIGSEGV converting a group description that carries an error
 * (confluent-kafka-javascript issue #531). This file shows the crash is real, and that it costs
 * the helper only: the test's own process (which has the binding loaded too) lives on, and the
 * admin's `describeGroup` still answers. Runs in the `integration-librdkafka` project only.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DescribeGroupsHelperError, describeGroupsIsolated } from '../../src/librdkafka/isolated-describe-groups.js';
import { LibrdkafkaClient } from '../../src/librdkafka/librdkafka-client.js';
import { useIntegrationFixture } from './support/integration-fixture.js';

const fx = useIntegrationFixture('weir-it-rdk-describe');

describe('describing groups with librdkafka [librdkafka]', () => {
  it('crashes the helper, not this process, on a description with an error (an empty group id)', async () => {
    // The broker answers INVALID_GROUP_ID for the group: an error description, whose NULL
    // partition assignor the binding reads.
    const config = { 'bootstrap.servers': fx.brokers, 'client.id': 'weir-it-rdk-describe' };
    const crashed = await describeGroupsIsolated(config, [''], 5_000).catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(DescribeGroupsHelperError);
    expect((crashed as Error).message).toBe(
      'describeGroups [""]: the helper process was killed by SIGSEGV (a group description with an error: confluent-kafka-javascript issue #531)',
    );
    // Still here, and the binding still works in this process.
    const rdk = new LibrdkafkaClient({
      brokers: fx.brokers.split(','),
      clientId: 'weir-it-rdk-describe',
      logger: pino({ level: 'silent' }),
    });
    const admin = rdk.admin();
    await admin.connect();
    fx.onTeardown(() => admin.disconnect());
    const groupId = `weir-it-rdk-none-${randomUUID().slice(0, 6)}`;
    expect(await admin.describeGroup(groupId)).toEqual({ groupId, state: 'Dead', protocol: '', members: [] });
  });
});
