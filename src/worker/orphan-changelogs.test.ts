import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { FRESH_HISTORY } from '../failure/retry-history.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { KafkaClient } from '../kafka/kafka-client.js';
import type { TopicRangeReadOptions } from '../kafka/topic-range.js';
import { captureLog } from '../observability/log-capture.test-support.js';
import type { InputRecord } from '../record/record-types.js';
import { parkedChangelogRecord } from '../runtime/parked-changelog.js';
import { parkedKeyId } from '../runtime/parked-records.js';
import { compile } from '../topology/compile.js';
import { orphanChangelogs, warnOfOrphanChangelogs } from './orphan-changelogs.js';

/** Topics by name: each partition's records, offsets from 0. A double of what the check asks of Kafka. */
type Topics = Map<string, InputRecord[][]>;

function kafka(topics: Topics): { client: KafkaClient; admin: KafkaAdmin; reads: string[] } {
  const reads: string[] = [];
  const ends = (topic: string) => new Map((topics.get(topic) ?? []).map((records, p) => [p, records.length]));
  const admin = {
    listTopics: async () => [...topics.keys()],
    partitionCounts: async (names: readonly string[]) => new Map(names.filter((n) => topics.has(n)).map((n) => [n, topics.get(n)!.length])),
    earliestOffsets: async (topic: string) => new Map([...ends(topic).keys()].map((p) => [p, 0])),
    latestOffsets: async (topic: string) => ends(topic),
  } as unknown as KafkaAdmin;
  const client = {
    readTopicRange: async (options: TopicRangeReadOptions) => {
      reads.push(options.topic);
      for (const [p, range] of options.ranges) {
        const batch = topics.get(options.topic)![p]!.slice(range.from, range.to);
        await options.onRecords(batch, { progress: async () => undefined, heartbeat: async () => undefined, end: range.to });
      }
      return new Map();
    },
  } as unknown as KafkaClient;
  return { client, admin, reads };
}

/** The changelog partition that parks `count` records of key `key`, read from `source`, then resolves the first `resolved`. */
function changelog(topic: string, source: string, key: string, count: number, resolved = 0): InputRecord[] {
  const entries = Array.from({ length: count }, (_, offset) => {
    const record: InputRecord = {
      topic: source,
      partition: 0,
      offset,
      timestamp: 0,
      key: Buffer.from(key),
      value: Buffer.from('v'),
      headers: {},
    };
    return parkedChangelogRecord(
      { topic, partition: 0 },
      { offset, keyId: parkedKeyId(record), step: 0, record, history: FRESH_HISTORY, dueAt: 1 },
    );
  });
  const tombstones = entries.slice(0, resolved).map((e) => ({ ...e, value: null }));
  return [...entries, ...tombstones].map((e, offset) => ({ ...e, partition: 0, offset, timestamp: 0 }) as InputRecord);
}

const app = compile(
  topology('orders')
    .source('orders.in', 'json')
    .process('price', (r) => r.value, { retry: { mode: 'topics' } })
    .branch({ success: sink('orders.out') }),
);

describe('orphanChangelogs', () => {
  it("finds the application's changelogs that hold parked records of its sources that no processor restores", async () => {
    const { client, admin, reads } = kafka(
      new Map([
        ['orders.in', [[]]],
        // Dropped order 'key' with 3 records of one key still parked (one resolved of 4).
        ['orders.price.parked', [changelog('orders.price.parked', 'orders.in', 'k1', 4, 1)]],
        // Every record decided: nothing to say.
        ['orders.enrich.parked', [changelog('orders.enrich.parked', 'orders.in', 'k2', 2, 2)]],
        // Named alike, but of the application `orders.eu` (whose source is another topic).
        ['orders.eu.price.parked', [changelog('orders.eu.price.parked', 'orders-eu.in', 'k3', 2)]],
        // Another application's, and a topic that is no changelog.
        ['payments.price.parked', [changelog('payments.price.parked', 'orders.in', 'k4', 1)]],
        ['orders.price.dlq', [[]]],
      ]),
    );
    expect(await orphanChangelogs(app, client, admin)).toEqual([
      { topic: 'orders.price.parked', processor: 'price', records: 3, keys: 1, unreadable: 0 },
    ]);
    expect(reads.sort()).toEqual(['orders.enrich.parked', 'orders.eu.price.parked', 'orders.price.parked']);
  });

  it('leaves alone the changelog the topology restores, and logs a warn per orphan naming it and what it holds', async () => {
    const ordered = compile(
      topology('orders')
        .source('orders.in', 'json')
        .process('price', (r) => r.value, { retry: { mode: 'topics', order: 'key' } })
        .branch({ success: sink('orders.out') }),
    );
    const topics: Topics = new Map([
      ['orders.in', [[]]],
      ['orders.price.parked', [changelog('orders.price.parked', 'orders.in', 'k1', 2)]],
    ]);
    expect(await orphanChangelogs(ordered, kafka(topics).client, kafka(topics).admin)).toEqual([]);

    const { logger, lines } = captureLog();
    const { client, admin } = kafka(topics);
    await warnOfOrphanChangelogs(app, client, admin, logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, changelog: 'orders.price.parked', processor: 'price', records: 2, keys: 1 });
    expect(lines[0]!['msg']).toContain("changelog topic 'orders.price.parked' holds 2 parked record(s) of 1 key(s)");
    expect(lines[0]!['msg']).toContain("Put order 'key' back on processor 'price'");
  });

  it('warns, and lets the start go on, when the check itself fails', async () => {
    const { logger, lines } = captureLog();
    const admin = { listTopics: async () => Promise.reject(new Error('broker gone')) } as unknown as KafkaAdmin;
    await warnOfOrphanChangelogs(app, {} as KafkaClient, admin, logger);
    expect(lines).toMatchObject([{ level: 40, msg: 'could not check for parked-records changelogs the topology no longer restores' }]);
  });
});
