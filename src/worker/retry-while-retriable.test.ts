import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MissingSourceTopicError } from '../errors.js';
import { captureLog } from '../observability/log-capture.test-support.js';
import { retryWhileRetriable } from './retry-while-retriable.js';

/** A client's retriable error, shaped as kafkajs builds UNKNOWN_TOPIC_OR_PARTITION (code 3). */
const unknownTopic = () =>
  Object.assign(new Error('This server does not host this topic-partition'), {
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
    code: 3,
    retriable: true,
  });

describe('retryWhileRetriable', () => {
  it('tries a step again after a growing backoff while it fails retriably, and warns each time', async () => {
    const { logger, lines } = captureLog();
    const waits: number[] = [];
    let calls = 0;
    const result = await retryWhileRetriable(
      async () => {
        calls++;
        if (calls < 4) throw unknownTopic();
        return 'joined';
      },
      { step: 'joining the group', logger, stillWanted: () => undefined, sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('joined');
    expect(calls).toBe(4);
    expect(waits).toEqual([500, 1_000, 2_000]);
    const warnings = lines.filter((l) => l['level'] === 40);
    expect(warnings.map((l) => l['msg'])).toEqual(
      Array(3).fill('joining the group: the Kafka cluster is not ready (retriable error); retrying'),
    );
    expect(warnings.map((l) => l['retryInMs'])).toEqual([500, 1_000, 2_000]);
  });

  it('throws a non-retriable error at once, and stops retrying when the caller gave up', async () => {
    const logger = pino({ level: 'silent' });
    let calls = 0;
    const missing = new MissingSourceTopicError(['orders']);
    await expect(
      retryWhileRetriable(
        async () => {
          calls++;
          throw missing;
        },
        { step: 'checking the topics', logger, stillWanted: () => undefined, sleep: async () => undefined },
      ),
    ).rejects.toBe(missing);
    expect(calls).toBe(1);

    calls = 0;
    const stopped = new Error('the worker was stopped while it was starting');
    await expect(
      retryWhileRetriable(
        async () => {
          calls++;
          throw unknownTopic();
        },
        {
          step: 'checking the topics',
          logger,
          stillWanted: () => {
            if (calls >= 2) throw stopped;
          },
          sleep: async () => undefined,
        },
      ),
    ).rejects.toBe(stopped);
    expect(calls).toBe(2);
  });
});
