/**
 * How steadily a topology wrote its outputs, per input partition: for tests that measure how long
 * a rebalance or a crash stopped processing. Each output names its input (`<partition>@<offset>`)
 * and when it was written (`writtenAtMs`, epoch ms), as the scripted topology's outputs do.
 */

/** What an output must carry. */
export interface TimedOutput {
  /** `<partition>@<offset>` of the input record. */
  readonly input: string;
  /** When the output was made, epoch ms. */
  readonly writtenAtMs: number;
}

/** The input partition of an output. */
export const inputPartition = (o: TimedOutput): number => Number(o.input.split('@')[0]);

/** The partition number of a task id (`<topic>-<partition>`). */
export const taskPartition = (task: string): number => Number(task.slice(task.lastIndexOf('-') + 1));

/** Each input partition's output times, ascending. */
export function outputTimes(outputs: readonly TimedOutput[]): Map<number, number[]> {
  const times = new Map<number, number[]>();
  for (const o of outputs) {
    const p = inputPartition(o);
    const list = times.get(p) ?? [];
    list.push(o.writtenAtMs);
    times.set(p, list);
  }
  for (const list of times.values()) list.sort((a, b) => a - b);
  return times;
}

/**
 * The longest time without an output that overlaps `[fromMs, toMs]`: the longest gap between two
 * consecutive outputs where the later one is at or after `fromMs` and the earlier one at or before
 * `toMs`. `times` ascending.
 *
 * @returns the gap, ms, and when it began (epoch ms); 0 when fewer than two outputs overlap
 */
export function longestGap(times: readonly number[], fromMs: number, toMs: number): { readonly gapMs: number; readonly fromMs: number } {
  let longest = { gapMs: 0, fromMs };
  for (let i = 1; i < times.length; i++) {
    const a = times[i - 1]!;
    const b = times[i]!;
    if (b < fromMs || a > toMs) continue;
    if (b - a > longest.gapMs) longest = { gapMs: b - a, fromMs: a };
  }
  return longest;
}
