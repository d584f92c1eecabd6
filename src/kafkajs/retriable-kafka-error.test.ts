import { describe, expect, it } from 'vitest';
import { MissingSourceTopicError } from '../errors.js';
import { isRetriableKafkaError } from '../kafka/retriable-kafka-error.js';
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} from './kafkajs-library.js';

/** kafkajs' error for UNKNOWN_TOPIC_OR_PARTITION (code 3), as its protocol decoder builds it. */
const unknownTopic = () =>
  new KafkaJSProtocolError({
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
    code: 3,
    retriable: true,
    message: 'This server does not host this topic-partition',
  } as never);

describe('isRetriableKafkaError', () => {
  it('follows kafkajs retriable flags, also inside its retries-exceeded error', () => {
    expect(isRetriableKafkaError(unknownTopic())).toBe(true);
    expect(isRetriableKafkaError(new KafkaJSConnectionError('Connection error: ECONNREFUSED'))).toBe(true);
    expect(isRetriableKafkaError(new KafkaJSNumberOfRetriesExceeded(unknownTopic(), { retryCount: 5, retryTime: 9_000 }))).toBe(true);
    expect(isRetriableKafkaError(new KafkaJSNonRetriableError('Group authorization failed'))).toBe(false);
  });

  it("reads librdkafka's isRetriable, and weir's own errors are not retriable", () => {
    expect(isRetriableKafkaError(Object.assign(new Error('Broker: Leader not available'), { code: 5, isRetriable: true }))).toBe(true);
    expect(isRetriableKafkaError(Object.assign(new Error('Broker: Topic authorization failed'), { code: 29, isRetriable: false }))).toBe(
      false,
    );
    expect(isRetriableKafkaError(new MissingSourceTopicError(['orders']))).toBe(false);
    expect(isRetriableKafkaError(undefined)).toBe(false);
  });
});
