import type { ProcessOptions } from '../dsl/process-options.js';
import { sink } from '../dsl/sink.js';
import { topology, type BranchSpec } from '../dsl/topology-builder.js';
import { TopologyError } from '../errors.js';
import { compile } from './compile.js';

/** A processor that forwards the record's value. */
export const fn = (r: { value: unknown }) => r.value;

/** A topology `app` of one processor `p` from topic `in`: by default to `out`, dead letters to `dlq`, JSON values. */
export function one(
  options: ProcessOptions = {},
  branch: BranchSpec = { success: sink('out'), dlq: sink('dlq') },
  serde: unknown = 'json',
) {
  return topology('app')
    .source('in', serde as 'json')
    .process('p', fn, options)
    .branch(branch);
}

/**
 * The TopologyError that compiling `input` throws.
 *
 * @throws Error when compiling `input` throws nothing, or throws another error (rethrown)
 */
export function problemOf(input: unknown): TopologyError {
  try {
    compile(input);
  } catch (error) {
    if (error instanceof TopologyError) return error;
    throw error;
  }
  throw new Error('expected a TopologyError');
}
