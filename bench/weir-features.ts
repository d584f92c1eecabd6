/**
 * Which optional `weir run` features the built CLI has, read from `node bin/weir.js run --help`:
 * contestants that need a flag the build does not have yet are reported as skipped.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../scripts/lib/repo-paths.js';

/** What the built `weir run` offers. */
export interface WeirFeatures {
  /** The checkout whose build this is: its `bin/weir.js` runs, from this folder. */
  readonly root: string;
  /** Every `--flag` its help text names. */
  readonly flags: ReadonlySet<string>;
  /** Its help text, for finding choices such as `librdkafka`. */
  readonly help: string;
  /** Why weir cannot run at all (no build), else undefined. */
  readonly unavailable?: string;
}

/**
 * Runs `node bin/weir.js run --help` in `root` (build first: `npm run build`). Never throws.
 *
 * @param root the checkout (default: this one; the bench's baseline build is another)
 */
export function weirFeatures(root: string = repoRoot): Promise<WeirFeatures> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'bin', 'weir.js'), 'run', '--help'],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error !== null) {
          const reason = (stderr || error.message).trim().split('\n')[0]!;
          resolve(unavailableWeir(root, `\`weir run --help\` failed (run \`npm run build\`): ${reason}`));
          return;
        }
        resolve({ root, flags: new Set(stdout.match(/--[a-z][a-z0-9-]*/g) ?? []), help: stdout });
      },
    );
  });
}

/** A weir build in `root` that cannot run, and why. */
export function unavailableWeir(root: string, reason: string): WeirFeatures {
  return { root, flags: new Set(), help: '', unavailable: reason };
}

/**
 * Why a weir contestant needing `flags` (and, when given, a help text mentioning `word`, e.g. a
 * `--client` choice) cannot run on this build, or undefined when it can.
 */
export function missingWeirFeature(features: WeirFeatures, flags: readonly string[], word?: string): string | undefined {
  if (features.unavailable !== undefined) return features.unavailable;
  const missing = flags.filter((flag) => !features.flags.has(flag));
  if (missing.length > 0) return `weir run has no ${missing.join(', ')} flag yet`;
  if (word !== undefined && !features.help.includes(word)) return `weir run does not offer ${word} yet`;
  return undefined;
}
