// What the user gave weir is wrong: a topology file that does not compile or load, a config value.
import { WeirError } from './weir-error.js';

/** One problem of a topology: the node it names, when there is one, and what is wrong. */
export interface TopologyProblem {
  readonly node: string | undefined;
  readonly problem: string;
}

const sayProblem = ({ node, problem }: TopologyProblem): string => (node === undefined ? problem : `node '${node}': ${problem}`);

/**
 * A topology file that does not compile. `node` names the offending node (source topic,
 * processor or sink name) when there is one; `others` are the further problems compile found in
 * the same file, reported in the same message, one per line:
 * `<file>: 2 problems:\n  node '<node>': <problem>\n  node '<other>': <problem>`.
 */
export class TopologyError extends WeirError {
  readonly node: string | undefined;
  readonly problem: string;
  /** The topology file, when known. */
  readonly file: string | undefined;
  /** Further problems found in the same compile, after the first (`node`, `problem`). */
  readonly others: readonly TopologyProblem[];

  constructor(node: string | undefined, problem: string, file?: string, others: readonly TopologyProblem[] = []) {
    const all = [{ node, problem }, ...others];
    const what = all.length === 1 ? sayProblem(all[0]!) : `${all.length} problems:\n${all.map((p) => `  ${sayProblem(p)}`).join('\n')}`;
    super('WEIR_TOPOLOGY_INVALID', file === undefined ? what : `${file}: ${what}`);
    this.node = node;
    this.problem = problem;
    this.file = file;
    this.others = others;
  }

  /** Every problem this error reports, the first one first. */
  get problems(): readonly TopologyProblem[] {
    return [{ node: this.node, problem: this.problem }, ...this.others];
  }
}

/** A topology file that cannot be loaded (missing, syntax error, no default export, ...). */
export class TopologyLoadError extends WeirError {
  readonly file: string;

  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super('WEIR_TOPOLOGY_LOAD', `${file}: ${reason}`, options);
    this.file = file;
  }
}

/**
 * A bad configuration value. `key` is the flag or environment variable at fault; `others` are
 * further bad values found in the same check (`[key, problem]`), reported in the same message:
 * `invalid config '<key>': <problem>; invalid config '<other>': <problem>`.
 */
export class ConfigError extends WeirError {
  readonly key: string;

  constructor(key: string, problem: string, others: ReadonlyArray<readonly [string, string]> = []) {
    super('WEIR_CONFIG_INVALID', [[key, problem] as const, ...others].map(([k, p]) => `invalid config '${k}': ${p}`).join('; '));
    this.key = key;
  }
}
