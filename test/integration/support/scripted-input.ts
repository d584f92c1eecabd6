/**
 * Input of the crash test and the fault campaign, for the scripted topology
 * (fixtures/scripted-topology.ts): about 2 % poison records (always fail: DLQ), 5 % failing
 * transiently (1 or 2 attempts; half of the failing ones forward a partial output first) and 3 %
 * re-sends of an earlier record's dedup key (half on the same partition key, half on another
 * partition), keyed over 97 keys. Optionally every `crashEvery`-th record is a `crash` record
 * (it ends its stream thread while the crash marker file is missing; see the fixture).
 *
 * @example
 * const input = new ScriptedInput(seededRandom(seed));
 * await produce(kafka, topic, scriptMessages(input.next(10_000)));
 */
import type { Message } from 'kafkajs';
import type { Script } from '../fixtures/scripted-topology.js';

/** One input message: its partition key and the script it carries. */
export interface InputMessage {
  readonly key: string;
  readonly script: Script;
}

/** Options of {@link ScriptedInput}. */
export interface ScriptedInputOptions {
  /** Every this many records (by seq), a clean record becomes a `crash` record; default: none. */
  readonly crashEvery?: number;
}

/** A seeded, growing input: the same seed gives the same messages, however they are taken in chunks. */
export class ScriptedInput {
  /** Every message so far, in order (re-sends included). */
  readonly messages: InputMessage[] = [];
  /** The first script of each id. */
  readonly unique = new Map<string, Script>();
  private readonly originals: InputMessage[] = [];

  constructor(
    private readonly random: () => number,
    private readonly options: ScriptedInputOptions = {},
  ) {}

  /** The next `count` messages (also appended to {@link messages}). */
  next(count: number): InputMessage[] {
    const added: InputMessage[] = [];
    for (let i = 0; i < count; i++) {
      const message = this.draw(this.messages.length);
      this.messages.push(message);
      added.push(message);
    }
    return added;
  }

  private draw(seq: number): InputMessage {
    const random = this.random;
    const roll = random();
    if (roll < 0.03 && this.originals.length > 0) {
      const original = this.originals[Math.floor(random() * this.originals.length)]!;
      const sameKey = random() < 0.5;
      return { key: sameKey ? original.key : `other-${seq}`, script: { ...original.script, seq } };
    }
    const id = `c${seq}`;
    const failing = roll < 0.05 ? 'poison' : roll < 0.1 ? 'transient' : undefined;
    const crash = failing === undefined && this.options.crashEvery !== undefined && seq % this.options.crashEvery === 0;
    const script: Script = {
      id,
      seq,
      ...(failing === 'poison' ? { kind: 'poison' as const } : {}),
      ...(crash ? { kind: 'crash' as const } : {}),
      ...(failing === 'transient' ? { failAttempts: random() < 0.7 ? 1 : 2 } : {}),
      ...(failing !== undefined && random() < 0.5 ? { forwardThenFail: true } : {}),
    };
    const message = { key: `key-${seq % 97}`, script };
    this.originals.push(message);
    this.unique.set(id, script);
    return message;
  }
}

/** The Kafka messages of `messages` (key, the script as JSON). */
export function scriptMessages(messages: readonly InputMessage[]): Message[] {
  return messages.map((m) => ({ key: m.key, value: JSON.stringify(m.script) }));
}
