/**
 * Runs `weir run` as a child process (the built CLI, `bin/weir.js`) for the demo, the
 * benchmarks and the integration tests, and reads its JSON log lines.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './repo-paths.js';

/** One pino log line of the worker. */
export interface WorkerLogLine {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A running `weir run` process. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Every JSON log line so far. */
  readonly logs: WorkerLogLine[];
  /** Output lines that were not JSON (errors printed by the CLI). */
  readonly otherOutput: string[];
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Resolves with the exit code (or the signal name) once the process ended and its output is read to the end ({@link logs} is complete). */
  readonly closed: Promise<number | string>;
  /** Waits for a log line matching `predicate`. @throws Error after `timeoutMs` or when the process exits first */
  waitForLog(predicate: (line: WorkerLogLine) => boolean, timeoutMs?: number): Promise<WorkerLogLine>;
  /**
   * Resolves with the exit code (or the signal name) of a process expected to exit by itself.
   * @throws Error after `timeoutMs` (60 s by default) with the process's last output lines
   */
  exitWithin(timeoutMs?: number): Promise<number | string>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Options of {@link startWorker}. */
export interface StartWorkerOptions {
  /** Extra `weir run` flags. */
  readonly args?: readonly string[];
  /** Extra environment variables. */
  readonly env?: Readonly<Record<string, string>>;
  /** Mirror the worker's output to this stream (e.g. for debugging). */
  readonly echo?: NodeJS.WritableStream;
}

/** Starts `node bin/weir.js run <topologyFile> ...args` with JSON logs. */
export function startWorker(topologyFile: string, options: StartWorkerOptions = {}): WorkerProcess {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'weir.js'), 'run', topologyFile, ...(options.args ?? [])], {
    cwd: repoRoot,
    env: { ...process.env, WEIR_LOG_LEVEL: process.env['WEIR_LOG_LEVEL'] ?? 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: WorkerLogLine[] = [];
  const otherOutput: string[] = [];
  const waiters = new Set<() => void>();
  const onText = (chunk: Buffer, carry: { rest: string }): void => {
    options.echo?.write(chunk);
    const text = carry.rest + chunk.toString('utf8');
    const lines = text.split('\n');
    carry.rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        logs.push(JSON.parse(line) as WorkerLogLine);
      } catch {
        otherOutput.push(line);
      }
    }
    for (const wake of waiters) wake();
  };
  const out = { rest: '' };
  const err = { rest: '' };
  child.stdout!.on('data', (chunk: Buffer) => onText(chunk, out));
  child.stderr!.on('data', (chunk: Buffer) => onText(chunk, err));
  let exitValue: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      exitValue = code ?? signal ?? 'unknown';
      resolve(exitValue);
    });
  });
  // 'close' follows 'exit' once stdout and stderr are read to their end: a waiter then stops
  // waiting for a line that can no longer come (and not before: the last lines may trail 'exit').
  let outputClosed = false;
  const closed = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => {
      outputClosed = true;
      for (const wake of waiters) wake();
      resolve(code ?? signal ?? 'unknown');
    });
  });

  const lastLines = (): string =>
    `last lines:\n${logs
      .slice(-10)
      .map((l) => JSON.stringify(l))
      .join('\n')}\n${otherOutput.slice(-10).join('\n')}`;

  const waitForLog = (predicate: (line: WorkerLogLine) => boolean, timeoutMs = 60_000): Promise<WorkerLogLine> =>
    new Promise((resolve, reject) => {
      let seen = 0;
      const check = (): void => {
        for (; seen < logs.length; seen++) {
          if (predicate(logs[seen]!)) {
            done();
            resolve(logs[seen]!);
            return;
          }
        }
        if (outputClosed) {
          done();
          reject(new Error(`worker exited (${exitValue}) before the expected log line; output:\n${otherOutput.slice(-20).join('\n')}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching worker log line within ${timeoutMs} ms; ${lastLines()}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const exitWithin = (timeoutMs = 60_000): Promise<number | string> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`worker still running after ${timeoutMs} ms; ${lastLines()}`)), timeoutMs);
    });
    return Promise.race([exited, late]).finally(() => clearTimeout(timer));
  };

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> => {
    if (exitValue === undefined) child.kill(signal);
    return exited;
  };
  return { child, logs, otherOutput, exited, closed, waitForLog, exitWithin, stop };
}

/** The outcome of a finished `weir` command. */
export interface WeirCommandResult {
  /** Exit code (null when killed by a signal). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A `weir` command started with {@link startWeir}. */
export interface WeirCommand {
  readonly child: ChildProcess;
  /** Resolves when the command ends; never rejects on a non-zero exit (tests assert the code). */
  readonly result: Promise<WeirCommandResult>;
}

/**
 * Starts `node bin/weir.js ...args` (e.g. `dlq replay <topic>`), collecting its output.
 *
 * @param timeoutMs kill the command after this long (default 60 000)
 */
export function startWeir(
  args: readonly string[],
  options: { readonly env?: Readonly<Record<string, string>>; readonly timeoutMs?: number } = {},
): WeirCommand {
  let child!: ChildProcess;
  const result = new Promise<WeirCommandResult>((resolve) => {
    child = execFile(
      process.execPath,
      [path.join(repoRoot, 'bin', 'weir.js'), ...args],
      { cwd: repoRoot, env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
  return { child, result };
}

/** Runs `node bin/weir.js ...args` to completion: {@link startWeir}'s result. */
export function runWeir(
  args: readonly string[],
  options: { readonly env?: Readonly<Record<string, string>>; readonly timeoutMs?: number } = {},
): Promise<WeirCommandResult> {
  return startWeir(args, options).result;
}
