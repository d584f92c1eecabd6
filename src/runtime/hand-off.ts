import type { ProcessorOutput, ProcessorRecord } from '../dsl/processor.js';
import { ChainStepOutputError, SerializationError } from '../errors.js';
import type { InputRecord } from '../record/record-types.js';
import type { PreparedRecord } from './prepared-record.js';
import type { NextStepView } from './subtopology-view.js';

/**
 * Hands a chain step's successful attempt on to the next step: its one output (the return
 * value, or the one output it forwarded) becomes the next step's record — the output's key (else
 * the input's), its value, the input's headers plus the output's, and the input's topic, partition,
 * offset and timestamp. The value passes on in memory; its bytes — serialized with the next step's
 * `inputSerdes` — are what that step's retry-tier copies and dead letters carry.
 *
 * @param raw the step's input as bytes (the record read, or the previous hand-off's)
 * @returns the next step's input; `null` when the step forwarded nothing (a filter: the record
 *   ends here); `{ error }` when it forwarded more than one output (`ChainStepOutputError`) or
 *   the output does not serialize (`SerializationError`): the record is dead-lettered at this step
 */
export function handOff(
  processor: string,
  next: NextStepView,
  raw: InputRecord,
  record: ProcessorRecord,
  forwarded: readonly ProcessorOutput[] | undefined,
  returned: unknown,
): PreparedRecord | null | { readonly error: unknown } {
  const count = (forwarded?.length ?? 0) + (returned === undefined ? 0 : 1);
  if (count === 0) return null;
  if (count > 1) return { error: new ChainStepOutputError(processor, count) };
  const output: ProcessorOutput = forwarded?.[0] ?? { value: returned };
  const key = output.key !== undefined ? output.key : record.key;
  let keyBytes: Buffer | null;
  let valueBytes: Buffer | null;
  try {
    keyBytes = next.keySerde.serialize(key);
  } catch (cause) {
    return { error: new SerializationError({ step: next.name }, next.keySerde.name, { cause }) };
  }
  try {
    valueBytes = next.valueSerde.serialize(output.value);
  } catch (cause) {
    return { error: new SerializationError({ step: next.name }, next.valueSerde.name, { cause }) };
  }
  const extra = output.headers;
  const input: InputRecord = { ...raw, key: keyBytes, value: valueBytes, headers: extra ? { ...raw.headers, ...extra } : raw.headers };
  const nextRecord: ProcessorRecord = {
    ...record,
    key,
    value: output.value,
    headers: extra ? { ...record.headers, ...extra } : record.headers,
  };
  return { kind: 'ready', raw: input, record: nextRecord, dedupKey: null };
}
