import type { KafkaMessage, Message, TopicMessages } from 'kafkajs';
import type { InputRecord, OutputRecord } from '../record/record-types.js';

/** A kafkajs message as a weir input record. */
export function toInputRecord(topic: string, partition: number, message: KafkaMessage): InputRecord {
  return {
    topic,
    partition,
    offset: Number(message.offset),
    timestamp: Number(message.timestamp),
    key: message.key,
    value: message.value,
    headers: message.headers ?? {},
  };
}

/** A weir output record as a kafkajs message. */
export function toMessage(record: OutputRecord): Message {
  const message: Message = { key: record.key, value: record.value, headers: record.headers };
  if (record.partition !== undefined) message.partition = record.partition;
  if (record.timestamp !== undefined) message.timestamp = String(record.timestamp);
  return message;
}

/** Groups output records by topic, keeping their order, for one `sendBatch`. */
export function topicMessagesOf(records: readonly OutputRecord[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const record of records) {
    let messages = byTopic.get(record.topic);
    if (messages === undefined) byTopic.set(record.topic, (messages = []));
    messages.push(toMessage(record));
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
