/**
 * What the benchmarks share: CPU time and peak RSS of a process, a timed run, the machine's
 * description, and writing a result table into bench/README.md.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { waitFor } from '../scripts/lib/wait-for.js';

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** User + system CPU seconds of a process (or, with `statFile`, one of its threads) so far (/proc/<pid>/stat). */
export function cpuSeconds(pid: number, statFile = `/proc/${pid}/stat`): number {
  const stat = readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/** CPU seconds of a process so far by kind of thread: see {@link threadCpuSeconds}. */
export interface ThreadCpu {
  /** The main thread (the event loop, for Node.js). */
  readonly main: number;
  /** librdkafka's own threads (`rdk:*`). */
  readonly librdkafka: number;
  /** Every other thread: for Node.js, V8's platform workers (parallel and concurrent GC, compilation) and libuv's thread pool. */
  readonly other: number;
}

/**
 * User + system CPU seconds of a process so far, by kind of thread (`/proc/<pid>/task/<tid>/stat`
 * and `comm`). Threads that ended before the call are not counted, so take both ends of a window
 * while the threads of interest live.
 */
export function threadCpuSeconds(pid: number): ThreadCpu {
  const cpu = { main: 0, librdkafka: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const seconds = cpuSeconds(Number(tid), `/proc/${pid}/task/${tid}/stat`);
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      if (Number(tid) === pid) cpu.main += seconds;
      else if (comm.startsWith('rdk:')) cpu.librdkafka += seconds;
      else cpu.other += seconds;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return cpu;
}

/**
 * Peak resident set size of a process so far, in bytes (`VmHWM` of /proc/<pid>/status): the
 * high-water mark since the process started, including, for a JVM, its touched heap.
 *
 * @returns 0 when the kernel does not report it
 */
export function peakRssBytes(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** One timed run. */
export interface Measurement {
  readonly recordsPerSecond: number;
  /** User + system CPU time of the process over the timed window, µs per record. */
  readonly cpuMicrosPerRecord: number;
  /** Length of the timed window, s. */
  readonly seconds: number;
  /** Peak RSS of the process from its start to the end of the window, bytes. */
  readonly peakRssBytes: number;
  /**
   * User + system CPU time of the broker over the same window, µs per record, when its pid was
   * given: on this machine the broker shares the two cores with the contestant, so what a
   * contestant's requests cost the broker is CPU the contestant cannot have.
   */
  readonly brokerCpuMicrosPerRecord?: number;
  /** The process's CPU over the window by kind of thread, µs per record (a JVM's work is all `other`). */
  readonly threadCpuMicrosPerRecord: ThreadCpu;
}

/**
 * Times `child` from now until `done()` holds (polled every 50 ms), with its CPU time over the
 * same window and its peak RSS at the end of it, and the CPU time of `brokerPid` (the local
 * broker's process) over the same window when given.
 *
 * @throws Error when the process exits first or `timeoutMs` passes
 */
export async function timeRun(
  child: ChildProcess,
  records: number,
  done: () => Promise<boolean>,
  label: string,
  timeoutMs = 900_000,
  brokerPid?: number,
): Promise<Measurement> {
  const t0 = performance.now();
  const cpu0 = cpuSeconds(child.pid!);
  const brokerCpu0 = brokerPid === undefined ? undefined : cpuSeconds(brokerPid);
  const threads0 = threadCpuSeconds(child.pid!);
  await waitFor(
    async () => {
      if (await done()) return true;
      if (child.exitCode !== null) throw new Error(`${label}: the process exited with ${child.exitCode}`);
      return false;
    },
    timeoutMs,
    () => `${label}: not done`,
    50,
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(child.pid!) - cpu0;
  const brokerCpu = brokerCpu0 === undefined ? undefined : cpuSeconds(brokerPid!) - brokerCpu0;
  const threads1 = threadCpuSeconds(child.pid!);
  const perRecord = (kind: keyof ThreadCpu): number => ((threads1[kind] - threads0[kind]) * 1e6) / records;
  return {
    recordsPerSecond: records / seconds,
    cpuMicrosPerRecord: (cpu * 1e6) / records,
    seconds,
    peakRssBytes: peakRssBytes(child.pid!),
    threadCpuMicrosPerRecord: { main: perRecord('main'), other: perRecord('other'), librdkafka: perRecord('librdkafka') },
    ...(brokerCpu === undefined ? {} : { brokerCpuMicrosPerRecord: (brokerCpu * 1e6) / records }),
  };
}

/** Cores, CPU model, memory, Node and kernel. */
export function machineDescription(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, Linux ${os.release()}`;
}

/** Replaces the text between `<!-- bench:<name>:begin -->` and `<!-- bench:<name>:end -->` in bench/README.md. */
export function writeBenchSection(name: string, table: string): void {
  const readme = path.join(repoRoot, 'bench', 'README.md');
  const text = readFileSync(readme, 'utf8');
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  if (!text.includes(begin) || !text.includes(end)) throw new Error(`bench/README.md has no ${begin} … ${end} section`);
  writeFileSync(readme, `${text.slice(0, text.indexOf(begin) + begin.length)}\n${table}\n${text.slice(text.indexOf(end))}`);
  console.log(`bench: results written to bench/README.md (${name})`);
}
