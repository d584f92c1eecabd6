/** Running the built `weir` CLI as a user does, for the CLI integration tests. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../../scripts/lib/repo-paths.js';

/** What a finished `weir` command left: its exit code (1 when killed by the 60 s timeout) and output. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node bin/weir.js ...args` from the repo root, killed after 60 s. */
export function weirCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(repoRoot, 'bin', 'weir.js'), ...args],
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * A writer of topology files in `dir` (under the repo, so `import 'weir'` resolves): it writes
 * the file and returns its path relative to the repo root.
 */
export function topologyFilesIn(dir: string): (name: string, source: string) => string {
  return (name, source) => {
    const file = path.join(dir, name);
    writeFileSync(file, source);
    return path.relative(repoRoot, file);
  };
}

/** A topology file that copies `source` to `<source>.out` under application.id `app`. */
export const copyTopology = (app: string, source: string): string => `import { topology, sink } from 'weir';
export default topology('${app}').source('${source}', 'json').process('copy', (r) => r.value).branch({ success: sink('${source}.out') });
`;
