/**
 * The memory side of `bench/profile.ts`: the worker's resident set and V8 heap over the timed
 * window (PROFILE_MEMORY=1), and where it allocates, by function (PROFILE_ALLOCATIONS=1, through
 * bench/allocation-sampler.mjs).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** A frame of a `.heapprofile` (V8's sampling heap profile). */
interface AllocationNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children: readonly AllocationNode[];
}
interface AllocationProfile {
  readonly head: AllocationNode;
  readonly samples: ReadonlyArray<{ readonly nodeId: number; readonly size: number }>;
}

const MIB = 1_048_576;

/** A gauge of weir's /metrics (its process metrics carry the `application_id` label), in MiB. */
function gaugeMiB(metrics: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics);
  return match === null ? Number.NaN : Number(match[1]) / MIB;
}

/**
 * Samples a process's resident set (`VmRSS` of /proc) and its main thread's V8 heap (weir's
 * `/metrics` at `metricsUrl`: heap total, heap used, external memory) every `everyMs` until
 * {@link stop}. Each sample is stamped when its RSS is read.
 */
export class MemorySampler {
  private readonly lines: string[] = [];
  private peakRss = { mib: 0, at: '' };
  private peakHeapUsed = { mib: 0, at: '' };
  private readonly timer: NodeJS.Timeout;
  private readonly t0 = performance.now();

  constructor(
    private readonly pid: number,
    private readonly metricsUrl: string,
    everyMs = 250,
  ) {
    this.timer = setInterval(() => void this.sample().catch(() => undefined), everyMs);
  }

  private async sample(): Promise<void> {
    const at = `${((performance.now() - this.t0) / 1_000).toFixed(1)} s`;
    const status = await readFile(`/proc/${this.pid}/status`, 'utf8');
    const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1_024;
    const metrics = await (await fetch(this.metricsUrl)).text();
    const heap = (name: string): number => gaugeMiB(metrics, `weir_process_nodejs_${name}`);
    const used = heap('heap_size_used_bytes');
    this.lines.push(
      `${at.padStart(7)}: RSS ${rssMiB.toFixed(0)} MiB, V8 heap ${heap('heap_size_total_bytes').toFixed(0)} MiB ` +
        `(${used.toFixed(0)} used), external ${heap('external_memory_bytes').toFixed(0)} MiB`,
    );
    if (rssMiB > this.peakRss.mib) this.peakRss = { mib: rssMiB, at };
    if (used > this.peakHeapUsed.mib) this.peakHeapUsed = { mib: used, at };
  }

  /** Stops sampling; returns the timeline (about one line a second) and the peak. */
  stop(): string {
    clearInterval(this.timer);
    const every = Math.max(1, Math.round(this.lines.length / Math.max(1, (performance.now() - this.t0) / 1_000)));
    return [
      ...this.lines.filter((_, i) => i % every === 0),
      `peak RSS ${this.peakRss.mib.toFixed(0)} MiB (at ${this.peakRss.at}), peak V8 heap used ${this.peakHeapUsed.mib.toFixed(0)} MiB (at ${this.peakHeapUsed.at})`,
      // weir's process metrics are the main thread's: a stream thread has a heap of its own.
      'V8 heap: the main thread only (a stream thread of --threads has its own heap, counted in RSS)',
    ].join('\n');
  }
}

/**
 * The bytes allocated in a `.heapprofile` by area (`areaOf`, as for the CPU profile) and by
 * function, as markdown tables, largest first; `records` gives the bytes per record.
 */
export async function summariseAllocations(
  file: string,
  records: number,
  areaOf: (frame: AllocationNode['callFrame']) => string,
): Promise<string> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as AllocationProfile;
  const bytesOf = new Map<number, number>();
  for (const s of profile.samples) bytesOf.set(s.nodeId, (bytesOf.get(s.nodeId) ?? 0) + s.size);
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const walk = (node: AllocationNode): void => {
    const bytes = bytesOf.get(node.id) ?? 0;
    if (bytes > 0) {
      const { functionName, url } = node.callFrame;
      const area = url === '' ? `native: ${functionName || '(anonymous)'}` : areaOf(node.callFrame);
      byArea.set(area, (byArea.get(area) ?? 0) + bytes);
      const name = `${functionName || '(anonymous)'} ${path.basename(url)}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + bytes);
      total += bytes;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const rows = (m: Map<string, number>, limit: number): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, b]) => `| ${name} | ${(b / MIB).toFixed(1)} | ${(b / records).toFixed(0)} | ${((100 * b) / total).toFixed(1)} % |`)
      .join('\n');
  return [
    `allocated ${(total / MIB).toFixed(0)} MiB in the window (${(total / records).toFixed(0)} bytes per record)`,
    `\n| area | MiB | bytes/record | of all |\n|---|---|---|---|\n${rows(byArea, 15)}`,
    `\n| function | MiB | bytes/record | of all |\n|---|---|---|---|\n${rows(byFunction, 25)}`,
  ].join('\n');
}
