/**
 * Small process helpers for the local infrastructure scripts: run a command to completion,
 * inspect a pid (alive, command line, pid files) and terminate it, and quote the end of an
 * output in an error.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { repoRoot } from './repo-paths.js';
import { pollUntil } from './wait-for.js';

/** Lines of a log or a command's output quoted in errors. */
export const LOG_TAIL_LINES = 40;

/** The outcome of a command run by {@link run}. */
export interface ExecResult {
  /** Exit code (1 when it was killed by a signal or timed out). */
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion (output up to 64 MiB per stream, UTF-8).
 *
 * @param options.cwd - working directory (default: the repository root).
 * @param options.timeoutMs - kill it after this long, in ms (default 0: no limit).
 * @returns its exit code and output; a non-zero exit does not reject.
 * @throws Error (with a string `code`, e.g. ENOENT) only when it cannot be started.
 * @example const { code, stdout } = await run('mvn', ['-v']);
 */
export function run(file: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd: options.cwd ?? repoRoot, timeout: options.timeoutMs ?? 0, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error && typeof error.code === 'string') {
          reject(error);
          return;
        }
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Whether `error` says a file or command does not exist (ENOENT). */
export function isEnoent(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** The last `lines` lines of the non-empty parts of `texts`. */
export function tail(texts: string | readonly string[], lines: number): string {
  const text = (typeof texts === 'string' ? [texts] : texts)
    .map((t) => t.trimEnd())
    .filter((t) => t !== '')
    .join('\n');
  return text.split('\n').slice(-lines).join('\n');
}

/** Command line of a live process, or undefined when it does not exist or is a zombie. */
export async function processCommandLine(pid: number): Promise<string[] | undefined> {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: it belongs to someone else, so it is not ours to manage either way.
    return undefined;
  }
  if (process.platform === 'linux') {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') return undefined;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      return cmdline.split('\0').filter((arg) => arg !== '');
    } catch {
      return undefined;
    }
  }
  try {
    const { code, stdout } = await run('ps', ['-o', 'args=', '-p', String(pid)]);
    return code === 0 && stdout.trim() !== '' ? stdout.trim().split(/\s+/) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live process of ours (not a zombie). */
export async function isAlive(pid: number): Promise<boolean> {
  return (await processCommandLine(pid)) !== undefined;
}

/** The pid written in `file`, or undefined when it is missing or holds no positive integer. */
export async function readPidFile(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends SIGTERM (or SIGKILL when `hard`) to `pid`, waits up to `timeoutMs` ms for it to exit,
 * then SIGKILLs it and waits up to 10 s more.
 *
 * @returns whether the process is gone.
 */
export async function terminate(pid: number, timeoutMs: number, hard = false): Promise<boolean> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  signal(hard ? 'SIGKILL' : 'SIGTERM');
  if (await pollUntil(async () => !(await isAlive(pid)), timeoutMs)) return true;
  signal('SIGKILL');
  return pollUntil(async () => !(await isAlive(pid)), 10_000);
}
