import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';
import { TopologyError, TopologyLoadError } from '../errors.js';
import { compile, type CompileOverrides } from '../topology/compile.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';

let registered = false;

/** Node's exit code when the event loop drained while a top-level await was still pending. */
const UNSETTLED_TOP_LEVEL_AWAIT = 13;
const UNSETTLED_REASON =
  'failed to load: its top-level await never settled (it waits for something that never happens, e.g. a promise nothing resolves)';

/** What Node and tsx say when a topology file is loaded as CommonJS. */
const MODULE_FORMAT = /require\(\) ES Module|ERR_REQUIRE_ESM|Cannot use import statement outside a module|No "exports" main defined/;
const MODULE_HINT =
  'it was loaded as CommonJS, but topology files are ES modules (weir is ESM-only): name the file .mts, or set "type": "module" in the package.json of its folder';

/**
 * Loads a topology file (`.ts`, `.mts`, `.js`, `.mjs`; TypeScript through tsx) and compiles
 * its default export.
 *
 * @param options `timeoutMs`: give up on a file still loading after this long, ms (a top-level
 *   await that waits for something that never comes; the load-only commands pass
 *   {@link TOPOLOGY_LOAD_TIMEOUT_ENV})
 * @throws TopologyLoadError naming the file when it is missing, fails to load (syntax error,
 *   a throwing import, a top-level await that never settles or outlives `timeoutMs`, ...) or
 *   has no default export
 * @throws TopologyError (with the file prefixed to its message) when it does not compile
 */
export async function loadTopology(
  file: string,
  overrides: CompileOverrides = {},
  options: { readonly timeoutMs?: number } = {},
): Promise<CompiledTopology> {
  const path = resolve(file);
  if (!existsSync(path)) throw new TopologyLoadError(file, 'file not found');
  if (!statSync(path).isFile()) throw new TopologyLoadError(file, 'not a file');
  if (!registered) {
    register();
    registered = true;
  }
  let module: { default?: unknown };
  // A top-level await in the file that never settles drains the event loop: Node then exits
  // with its code 13 and says nothing. Say what happened, as any other load failure (exit 2).
  // (Node 20 emits 'exit' with code 0 and process.exitCode already 13.)
  const onExitWhileLoading = (code: number): void => {
    if (code !== UNSETTLED_TOP_LEVEL_AWAIT && process.exitCode !== UNSETTLED_TOP_LEVEL_AWAIT) return;
    const error = new TopologyLoadError(file, UNSETTLED_REASON);
    process.stderr.write(`weir: ${error.message} [${error.code}]\n`);
    process.exitCode = 2;
  };
  process.on('exit', onExitWhileLoading);
  try {
    const loading = import(pathToFileURL(path).href) as Promise<{ default?: unknown }>;
    module = options.timeoutMs === undefined ? await loading : await withinLoadTimeout(loading, file, options.timeoutMs);
  } catch (cause) {
    if (cause instanceof TopologyLoadError) throw cause;
    // The builder found a mistake while the file ran (e.g. `.source(...).branch(...)`): report
    // it as a compile error naming the node, like the ones compile() finds.
    // Matched by code: the file's `weir` may be another copy of the module.
    if (isTopologyError(cause)) throw new TopologyError(cause.node, cause.problem, file, cause.others ?? []);
    const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    // Loaded as CommonJS: weir's hint first, Node's own words (whose advice, e.g. on a "cycle",
    // does not apply) after it.
    const message = MODULE_FORMAT.test(reason) ? `${MODULE_HINT} (Node: ${reason.replace(/\.$/, '')})` : reason;
    throw new TopologyLoadError(file, `failed to load: ${message}`, { cause });
  } finally {
    process.off('exit', onExitWhileLoading);
  }
  if (module.default === undefined) {
    throw new TopologyLoadError(file, 'has no default export: end it with `export default topology(...)...branch({...})`');
  }
  try {
    return compile(module.default, overrides);
  } catch (error) {
    if (error instanceof TopologyError) throw new TopologyError(error.node, error.problem, file, error.others);
    throw error;
  }
}

/**
 * The environment variable that bounds how long `weir validate`, `describe` and `status` wait for
 * a topology file to load, ms (default {@link DEFAULT_TOPOLOGY_LOAD_TIMEOUT_MS}).
 */
export const TOPOLOGY_LOAD_TIMEOUT_ENV = 'WEIR_TOPOLOGY_LOAD_TIMEOUT_MS';

/** Default of {@link TOPOLOGY_LOAD_TIMEOUT_ENV}, ms. */
export const DEFAULT_TOPOLOGY_LOAD_TIMEOUT_MS = 60_000;

/** `loading`, or a TopologyLoadError naming the file once `timeoutMs` passed (the timer keeps nothing alive). */
async function withinLoadTimeout<T>(loading: Promise<T>, file: string, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new TopologyLoadError(
            file,
            `failed to load: still loading after ${timeoutMs} ms (its top-level await waits for something that does not come; ${TOPOLOGY_LOAD_TIMEOUT_ENV} sets the limit)`,
          ),
        ),
      timeoutMs,
    );
    timer.unref();
  });
  try {
    return await Promise.race([loading, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A {@link TopologyError} from any copy of weir (matched by its code). */
function isTopologyError(error: unknown): error is Pick<TopologyError, 'node' | 'problem'> & Partial<Pick<TopologyError, 'others'>> {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'WEIR_TOPOLOGY_INVALID' &&
    typeof (error as { problem?: unknown }).problem === 'string'
  );
}
