import { headerNumber } from '../record/weir-headers.js';
import { recordOrigin } from '../record/record-origin.js';
import type { InputRecord } from '../record/record-types.js';
import type { Subtopology } from '../topology/compiled-topology.js';
import type { DriverRecordEvent } from './driver-history.js';
import {
  TEST_INPUT_HEADER,
  coordinates,
  toDeadLetter,
  toTestOutput,
  type DeadLetter,
  type PipedInput,
  type TestOutput,
} from './test-records.js';
import type { TopologyTestDriver } from './topology-test-driver.js';

/** Where one piped input ended up, read from the in-memory broker and the driver's history. */
export interface InputOutcome {
  readonly input: PipedInput;
  readonly subtopology: Subtopology;
  /** Outcome events of the input's record and of every retry-tier copy of it, in order. */
  readonly events: readonly DriverRecordEvent[];
  /** The last deciding event (success, dead-letter or duplicate); undefined while undecided. */
  readonly final: DriverRecordEvent | undefined;
  /** Its outputs in the sub-topology's sinks (read_committed). */
  readonly sinkOutputs: readonly TestOutput[];
  /** Its dead letters (read_committed). */
  readonly deadLetters: readonly DeadLetter[];
  /** Its retry-tier copies (read_committed). */
  readonly tierCopies: readonly TestOutput[];
}

const key = (topic: string, partition: number, offset: number): string => `${topic}/${partition}@${offset}`;

/**
 * Ties every record of the run to the input it came from: sink outputs by the driver's
 * {@link TEST_INPUT_HEADER}, dead letters and retry-tier copies by their `weir.original.*`
 * headers, outcome events by the record they were reported for.
 */
export class RunIndex {
  readonly outcomes: readonly InputOutcome[];
  /** Sink outputs (read_committed) that carry no known input id. */
  readonly orphanOutputs: readonly TestOutput[];
  private readonly stored = new Map<string, InputRecord | undefined>();

  constructor(private readonly driver: TopologyTestDriver) {
    const byCoords = new Map<string, PipedInput>();
    for (const input of driver.inputs) byCoords.set(key(input.topic, input.partition, input.offset), input);
    const slots = new Map<
      number,
      { events: DriverRecordEvent[]; sinkOutputs: TestOutput[]; deadLetters: DeadLetter[]; tierCopies: TestOutput[] }
    >();
    const slot = (input: PipedInput | undefined) => {
      if (input === undefined) return undefined;
      let s = slots.get(input.id);
      if (s === undefined) slots.set(input.id, (s = { events: [], sinkOutputs: [], deadLetters: [], tierCopies: [] }));
      return s;
    };
    for (const input of driver.inputs) slot(input);
    const originOf = (record: InputRecord): PipedInput | undefined => {
      const origin = recordOrigin(record);
      return byCoords.get(key(origin.topic, origin.partition, origin.offset)) ?? this.byLineage(record);
    };
    for (const event of driver.history.records) {
      if (event.zombie) continue; // a zombie's work after it resumed never commits
      const record = this.storedRecord(event.topic, event.partition, event.offset);
      const input = byCoords.get(key(event.topic, event.partition, event.offset)) ?? (record && originOf(record));
      slot(input)?.events.push(event);
    }
    const orphans: TestOutput[] = [];
    for (const info of driver.catalog.all()) {
      const records = driver.kafka.readAll(info.topic, 'read_committed');
      for (const record of records) {
        if (info.role === 'sink') {
          const input = this.byLineage(record);
          const s = input !== undefined && driver.catalog.get(input.topic)?.subtopology === info.subtopology ? slot(input) : undefined;
          if (s) s.sinkOutputs.push(toTestOutput(record, info.serdes));
          else if (input === undefined) orphans.push(toTestOutput(record, info.serdes));
        } else if (info.role === 'dead-letter') {
          slot(originOf(record))?.deadLetters.push(toDeadLetter(record, info.serdes));
        } else if (info.role === 'retry-tier') {
          slot(originOf(record))?.tierCopies.push(toTestOutput(record, info.serdes));
        }
      }
    }
    this.orphanOutputs = orphans;
    this.outcomes = driver.inputs.map((input) => {
      const s = slots.get(input.id)!;
      const final = [...s.events].reverse().find((e) => e.outcome !== 'retry' && e.outcome !== 'held');
      return { input, subtopology: driver.catalog.get(input.topic)!.subtopology, ...s, final };
    });
  }

  /** The stored record at a position (any isolation), cached. */
  storedRecord(topic: string, partition: number, offset: number): InputRecord | undefined {
    const k = key(topic, partition, offset);
    if (!this.stored.has(k))
      this.stored.set(
        k,
        this.driver.kafka.read(topic, partition, offset, 1, 'read_uncommitted').records.find((r) => r.offset === offset),
      );
    return this.stored.get(k);
  }

  private byLineage(record: InputRecord): PipedInput | undefined {
    const id = headerNumber(record.headers, TEST_INPUT_HEADER);
    return id === undefined ? undefined : this.driver.inputs[id];
  }
}

/** How invariants name an outcome event: `success at attempt 2 of orders/0@3 in orders-0#1 at <time>`. */
export function describeEvent(event: DriverRecordEvent): string {
  return `${event.outcome} at attempt ${event.attempt} of ${coordinates(event)} in ${event.instance} at ${new Date(event.atMs).toISOString()}`;
}
