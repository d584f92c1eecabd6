/**
 * What a failed "no duplicates" assertion needs to be understood: for each duplicated id (up to
 * 8), every copy — its topic partition and offset, the input record it came from, the process
 * that wrote it and when — and what those processes logged about their group membership,
 * tasks and transactions. Outputs of the scripted topology carry `pid`, `input`
 * (`<partition>@<offset>`), `attempt` and `writtenAtMs`.
 */
import type { ReadRecord } from '../../../scripts/lib/topic-io.js';
import type { WorkerProcess } from '../../../scripts/lib/worker-process.js';

interface Written {
  readonly id: string;
  readonly seq?: number;
  readonly pid?: number;
  readonly attempt?: number;
  readonly writtenAtMs?: number;
  readonly input?: string;
}

const written = (r: ReadRecord): Written => JSON.parse(r.value!.toString()) as Written;

/** Log lines that tell a member's story: joins, assignments, revocations, task starts and stops, transactions, crashes. */
const NOTABLE =
  /assigned|revoked|lost|task started|task committed|transaction|fenced|rejoin|crash|stopped|started|unreachable|commit|shutting down/i;

/**
 * @param label names the run in every line
 * @param ids the duplicated ids (or ids with a wrong count)
 * @param began epoch ms that times are shown relative to
 */
export function duplicateReport(
  label: string,
  records: readonly ReadRecord[],
  workers: readonly WorkerProcess[],
  ids: readonly string[],
  began: number,
): string[] {
  const shown = new Set(ids.slice(0, 8));
  const at = (ms: number): string => `+${((ms - began) / 1000).toFixed(2)}s`;
  const copies = new Map<string, string[]>();
  const pids = new Set<number | undefined>();
  for (const r of records) {
    const w = written(r);
    if (!shown.has(w.id)) continue;
    pids.add(w.pid);
    const where = `${r.topic.split('.').at(-1)}:${r.partition}@${r.offset}`;
    const copy = `${where} from ${w.input ?? '?'} seq ${w.seq} pid ${w.pid} attempt ${w.attempt} producer ${r.producer ?? 'none'} ${w.writtenAtMs ? at(w.writtenAtMs) : ''}`;
    copies.set(w.id, [...(copies.get(w.id) ?? []), copy]);
  }
  const lines = [...copies].map(([id, list]) => `[${label}] duplicated ${id}: ${list.join(' | ')}`);
  if (ids.length > shown.size) lines.push(`[${label}] … and ${ids.length - shown.size} more duplicated ids`);
  for (const worker of workers) {
    if (!pids.has(worker.child.pid)) continue;
    const story = worker.logs
      .filter((l) => NOTABLE.test(l.msg))
      .map((l) => {
        const time = typeof l['time'] === 'string' ? Date.parse(l['time']) : Number(l['time']);
        const partitions = l['partitions'] ? ` ${JSON.stringify(l['partitions'])}` : '';
        const task = l['task'] ? ` ${String(l['task'])}` : '';
        const from = l['startOffset'] !== undefined ? ` from ${String(l['startOffset'])}` : '';
        return `${at(time)} ${l.msg}${partitions}${task}${from}`;
      });
    lines.push(`[${label}] pid ${worker.child.pid}: ${story.join('; ')}`);
  }
  return lines;
}
