/**
 * What the benchmarks share: CPU time and peak RSS of a process, a timed run, the machine's
 * description, and writing a result table into bench/README.md.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { waitFor } from '../scripts/lib/wait-for.js';

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** User + system CPU seconds of a process so far (/proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
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
}

/**
 * Times `child` from now until `done()` holds (polled every 50 ms), with its CPU time over the
 * same window and its peak RSS at the end of it.
 *
 * @throws Error when the process exits first or `timeoutMs` passes
 */
export async function timeRun(
  child: ChildProcess,
  records: number,
  done: () => Promise<boolean>,
  label: string,
  timeoutMs = 900_000,
): Promise<Measurement> {
  const t0 = performance.now();
  const cpu0 = cpuSeconds(child.pid!);
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
  return {
    recordsPerSecond: records / seconds,
    cpuMicrosPerRecord: (cpu * 1e6) / records,
    seconds,
    peakRssBytes: peakRssBytes(child.pid!),
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
