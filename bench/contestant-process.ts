/**
 * A benchmark contestant running as a child process: when it has joined its consumer group,
 * how to stop it, and the tail of what it printed (for error messages).
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A started contestant. */
export interface ContestantProcess {
  readonly child: ChildProcess;
  /**
   * Resolves when the contestant has joined its group (its "started" line).
   *
   * @throws Error when the process exits first or `timeoutMs` of {@link startChildProcess} passes
   */
  readonly started: Promise<void>;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`, default 30 000 ms). */
  stop(graceMs?: number): Promise<void>;
  /** The last lines it printed. */
  outputTail(): string;
}

/** Options of {@link startChildProcess}. */
export interface ChildProcessOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** A label for error messages. */
  readonly label: string;
  /** Longest wait for the started line, ms (default 120 000). */
  readonly startTimeoutMs?: number;
  /** The `msg` (plain words) of the JSON line on stdout that says it has joined its group (default `started`). */
  readonly startedMsg?: string;
}

const TAIL_LINES = 30;

/**
 * Starts a process that prints a JSON line `{"msg":"started"}` on stdout once it has joined its
 * group (bench/kafkajs-baseline.ts, the Kafka Streams pass-through; `weir run` logs
 * `{"msg":"worker started",…}`).
 */
export function startChildProcess(options: ChildProcessOptions): ContestantProcess {
  const startedLine = new RegExp(`"msg"\\s*:\\s*"${options.startedMsg ?? 'started'}"`);
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const remember = (chunk: Buffer): void => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim() !== ''),
    );
    if (lines.length > 4 * TAIL_LINES) lines.splice(0, lines.length - TAIL_LINES);
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${options.label}: no "started" line within ${options.startTimeoutMs ?? 120_000} ms`)),
      options.startTimeoutMs ?? 120_000,
    );
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      remember(chunk);
      const text = rest + chunk.toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      if (parts.some((line) => startedLine.test(line))) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${options.label}: cannot start ${options.command}: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.label}: exited (${code ?? signal}) before it started:\n${lines.slice(-TAIL_LINES).join('\n')}`));
    });
  });
  started.catch(() => undefined);
  child.stderr!.on('data', remember);
  return {
    child,
    started,
    stop: (graceMs = 30_000) => stopChild(child, exited, graceMs),
    outputTail: () => lines.slice(-TAIL_LINES).join('\n'),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
  ]);
  clearTimeout(timer);
  if (killed) {
    child.kill('SIGKILL');
    await exited;
  }
}
