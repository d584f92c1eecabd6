import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';
import { TopologyError, TopologyLoadError } from '../errors.js';
import { compile, type CompileOverrides } from '../topology/compile.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';

let registered = false;

/**
 * Loads a topology file (`.ts`, `.mts`, `.js`, `.mjs`; TypeScript through tsx) and compiles
 * its default export.
 *
 * @throws TopologyLoadError naming the file when it is missing, fails to load (syntax error,
 *   a throwing import, ...) or has no default export
 * @throws TopologyError (with the file prefixed to its message) when it does not compile
 */
export async function loadTopology(file: string, overrides: CompileOverrides = {}): Promise<CompiledTopology> {
  const path = resolve(file);
  if (!existsSync(path)) throw new TopologyLoadError(file, 'file not found');
  if (!statSync(path).isFile()) throw new TopologyLoadError(file, 'not a file');
  if (!registered) {
    register();
    registered = true;
  }
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (cause) {
    const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    throw new TopologyLoadError(file, `failed to load: ${reason}`, { cause });
  }
  if (module.default === undefined) {
    throw new TopologyLoadError(file, 'has no default export: end it with `export default topology(...)...branch({...})`');
  }
  try {
    return compile(module.default, overrides);
  } catch (error) {
    if (error instanceof TopologyError) throw new TopologyError(error.node, error.problem, file);
    throw error;
  }
}
