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
  /**
   * Says, line by line, when the contestant is ready to process: called with each line it
   * prints on stdout, in order, parsed as JSON (`{}` for a line that is not a JSON object), until
   * it returns true. Default: the line `{"msg":"started"}`. See {@link weirTasksStarted} for weir.
   */
  readonly startedWhen?: StartedCondition;
}

/** Called with each line a contestant prints on stdout, parsed as JSON, in order; true once it is ready (it may keep state). */
export type StartedCondition = (line: Readonly<Record<string, unknown>>) => boolean;

/** weir's task ids (`<topic>-<partition>`, as its `task started` lines name them) of partitions 0…`partitions`−1 of `topic`. */
export function weirTaskIds(topic: string, partitions: number): string[] {
  return Array.from({ length: partitions }, (_, partition) => `${topic}-${partition}`);
}

/**
 * weir's analogue of Kafka Streams' RUNNING state: each task of `tasks` (ids, see
 * {@link weirTaskIds}) has logged `task started`, which weir does once it has read the task's
 * committed offset, with its transactional producer (librdkafka: the member's; kafkajs: the
 * task's own) initialized under exactly_once. Kafka Streams enters RUNNING only after its tasks
 * are initialized, which runs `initTransactions` and fetches their committed offsets; weir's
 * `worker started` comes before it has even joined its group (0.5–1.2 s earlier at 6 partitions
 * on this machine, 2026-12-05).
 */
export function weirTasksStarted(tasks: readonly string[]): StartedCondition {
  const waiting = new Set(tasks);
  return (line) => {
    if (line['msg'] === 'task started' && typeof line['task'] === 'string') waiting.delete(line['task']);
    return waiting.size === 0;
  };
}

const TAIL_LINES = 30;

/**
 * Starts a process that prints JSON lines on stdout and says by one of them that it is ready to
 * process ({@link ChildProcessOptions.startedWhen}: by default `{"msg":"started"}`, printed by
 * bench/kafkajs-baseline.ts once it joined its group and by the Kafka Streams pass-through once
 * it is RUNNING).
 */
export function startChildProcess(options: ChildProcessOptions): ContestantProcess {
  const isStarted = options.startedWhen ?? ((line) => line['msg'] === 'started');
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
      () => reject(new Error(`${options.label}: not ready to process (no "started" line) within ${options.startTimeoutMs ?? 120_000} ms`)),
      options.startTimeoutMs ?? 120_000,
    );
    let rest = '';
    let ready = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      remember(chunk);
      const text = rest + chunk.toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      if (!ready && parts.some((line) => isStarted(jsonLine(line)))) {
        ready = true;
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

/** A line of stdout as a JSON object, or an empty one when it is not one (a stray print). */
export function jsonLine(line: string): Readonly<Record<string, unknown>> {
  if (!line.startsWith('{')) return {};
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
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
