/**
 * Steady input for rebalance tests: scripted records (`{ id, seq }`, see
 * fixtures/scripted-topology.ts) produced to a topic at a steady rate until stopped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { produce } from '../../../scripts/lib/topic-io.js';

/** A running producer of steady input. */
export interface SteadyInput {
  /** Stops producing and waits for the last batch. @returns how many records were produced */
  stop(): Promise<number>;
}

/**
 * Produces `perSecond` records a second to `topic`, in batches every 50 ms, keyed over `keys`
 * keys (`k<seq % keys>`), ids `s<seq>`, until stopped.
 *
 * @throws (from `stop`) the producer's error, if a batch failed
 */
export function steadyInput(kafka: Kafka, topic: string, options: { readonly perSecond: number; readonly keys?: number }): SteadyInput {
  const keys = options.keys ?? 60;
  const perBatch = Math.max(1, Math.round(options.perSecond / 20));
  let stopped = false;
  let seq = 0;
  const loop = (async () => {
    while (!stopped) {
      const batch = Array.from({ length: perBatch }, () => {
        const n = seq++;
        return { key: `k${n % keys}`, value: JSON.stringify({ id: `s${n}`, seq: n }), headers: { trace: `s${n}` } };
      });
      await produce(kafka, topic, batch);
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return seq;
    },
  };
}
