import { describe, expect, it } from 'vitest';
import { CLIENT_FEATURES, clientsWith, KAFKA_CLIENTS, whyLacks, type KafkaClientFeature } from './kafka-client.js';

const CAPABILITIES: readonly KafkaClientFeature[] = ['groupMetadataInTransactions', 'staticMembership', 'streamThreads'];

describe('CLIENT_FEATURES', () => {
  it('has a row for every client, as docs/clients.md describes them', () => {
    expect(Object.keys(CLIENT_FEATURES).sort()).toEqual([...KAFKA_CLIENTS].sort());
    expect(CLIENT_FEATURES.kafkajs).toMatchObject({
      groupMetadataInTransactions: false,
      staticMembership: false,
      rebalanceProtocol: 'eager',
      streamThreads: true,
    });
    expect(CLIENT_FEATURES.librdkafka).toMatchObject({
      groupMetadataInTransactions: true,
      staticMembership: true,
      rebalanceProtocol: 'cooperative',
      streamThreads: false,
    });
  });

  it('says why a client lacks each capability it lacks, and nothing for what it has', () => {
    for (const client of KAFKA_CLIENTS)
      for (const feature of CAPABILITIES) {
        const why = CLIENT_FEATURES[client].lacks[feature];
        if (CLIENT_FEATURES[client][feature]) expect(why, `${client} ${feature}`).toBeUndefined();
        else expect(why, `${client} ${feature}`).toMatch(/\w{3}/);
      }
    expect(whyLacks('kafkajs', 'staticMembership')).toBe('kafkajs has no group.instance.id');
    expect(whyLacks('librdkafka', 'streamThreads')).toMatch(/one thread/);
  });

  it('is frozen: no code can grant a client a capability at run time', () => {
    expect(Object.isFrozen(CLIENT_FEATURES)).toBe(true);
    for (const client of KAFKA_CLIENTS) {
      expect(Object.isFrozen(CLIENT_FEATURES[client])).toBe(true);
      expect(Object.isFrozen(CLIENT_FEATURES[client].lacks)).toBe(true);
    }
  });

  it('lists the clients that have a capability', () => {
    expect(clientsWith('staticMembership')).toEqual(['librdkafka']);
    expect(clientsWith('groupMetadataInTransactions')).toEqual(['librdkafka']);
    expect(clientsWith('streamThreads')).toEqual(['kafkajs']);
  });
});
