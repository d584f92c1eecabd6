/**
 * BENCH_BASELINE=<git rev>: weir as built at an earlier commit, for bench/run.ts to run next to
 * this checkout's weir. The commit's tree goes into the git-ignored `.bench-baseline/<short id>/`
 * (`git archive`, once; later runs reuse it), gets this checkout's node_modules as a symlink
 * when its package-lock.json is the same (else it is not run, unless a node_modules was installed
 * there by hand), and is built with `npm run build` (once; a marker file says it succeeded).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, realpath, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { unavailableWeir, weirFeatures, type WeirFeatures } from './weir-features.js';

/** The baseline commit and its build. */
export interface Baseline {
  /** Short commit id: in the ids (`weir-alos-1t-<rev>`) and names (`weir@<rev> …`) of its rows. */
  readonly rev: string;
  /** The commit's subject line (its first 80 characters). */
  readonly subject: string;
  /** What its `weir run` offers, or why it cannot run (`unavailable`). */
  readonly weir: WeirFeatures;
}

/** Where baseline checkouts go (git-ignored). */
export const BASELINE_DIR = path.join(repoRoot, '.bench-baseline');

/** Marker written into a checkout once `npm run build` succeeded there. */
const BUILT_MARKER = '.bench-built';

function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ ok: error === null, output: `${stdout}${stderr}`.trim() || (error?.message ?? '') }),
    );
  });
}

async function git(...args: string[]): Promise<string> {
  const result = await run('git', ['-C', repoRoot, ...args], repoRoot, 60_000);
  if (!result.ok) throw new Error(`git ${args.join(' ')}: ${result.output}`);
  return result.output;
}

/** Extracts the tree of `commit` into `dir` (via a temporary folder, so a half copy is never taken for one). */
async function extract(commit: string, dir: string): Promise<void> {
  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const archive = path.join(partial, '.tree.tar');
  await git('archive', '--format=tar', `--output=${archive}`, commit);
  const untar = await run('tar', ['-xf', archive, '-C', partial], repoRoot, 120_000);
  if (!untar.ok) throw new Error(`tar: ${untar.output}`);
  await rm(archive);
  await rename(partial, dir);
}

/** Links this checkout's node_modules into `dir` when the lock files match; else why it cannot run. */
async function install(dir: string): Promise<string | undefined> {
  const modules = path.join(dir, 'node_modules');
  const current = await lstat(modules).catch(() => undefined);
  const [theirs, ours] = await Promise.all([
    readFile(path.join(dir, 'package-lock.json'), 'utf8').catch(() => ''),
    readFile(path.join(repoRoot, 'package-lock.json'), 'utf8'),
  ]);
  if (theirs === ours) {
    if (current === undefined) await symlink(await realpath(path.join(repoRoot, 'node_modules')), modules, 'dir');
    return undefined;
  }
  if (current?.isDirectory()) return undefined; // installed there by hand
  if (current?.isSymbolicLink()) await unlink(modules); // linked when this checkout's lock file was still the same
  const where = path.relative(repoRoot, dir);
  return `its package-lock.json differs from this checkout's, so it cannot share node_modules: install it with \`npm ci\` in ${where}`;
}

/** Runs `npm run build` in `dir` unless it succeeded there before; the reason when it fails. */
async function build(dir: string, rev: string): Promise<string | undefined> {
  const marker = path.join(dir, BUILT_MARKER);
  if (existsSync(marker)) return undefined;
  console.log(`bench: building weir at ${rev} (npm run build in ${path.relative(repoRoot, dir)})`);
  const result = await run('npm', ['run', 'build'], dir, 600_000);
  if (!result.ok) {
    console.log(`bench: npm run build at ${rev} failed:\n${result.output}`);
    return `\`npm run build\` failed at ${rev} (its output is printed above the tables)`;
  }
  await writeFile(marker, `${new Date().toISOString()}\n`);
  return undefined;
}

/**
 * Checks out, installs and builds weir at `rev` (any git revision). A build that cannot run
 * comes back with `weir.unavailable` set, so its rows show as skipped.
 *
 * @throws Error when `rev` names no commit
 */
export async function prepareBaseline(rev: string): Promise<Baseline> {
  const commit = await git('rev-parse', '--verify', '--quiet', `${rev}^{commit}`).catch(() => {
    throw new Error(`BENCH_BASELINE=${rev} names no commit of ${repoRoot}`);
  });
  const short = await git('rev-parse', '--short', commit);
  const fullSubject = await git('log', '-1', '--format=%s', commit);
  const subject = fullSubject.length > 80 ? `${fullSubject.slice(0, 79)}…` : fullSubject;
  const dir = path.join(BASELINE_DIR, short);
  if (!existsSync(path.join(dir, 'package.json'))) {
    console.log(`bench: checking out ${short} (${subject}) into ${path.relative(repoRoot, dir)}`);
    await extract(commit, dir);
  }
  const reason = (await install(dir)) ?? (await build(dir, short));
  const features = reason === undefined ? await weirFeatures(dir) : unavailableWeir(dir, reason);
  return { rev: short, subject, weir: features };
}
