import { describe, expect, it } from 'vitest';
import { startChildProcess, weirTaskIds, weirTasksStarted } from './contestant-process.js';

/** A node child that prints `lines` on stdout, one every few ms, then waits `holdMs` and exits. */
function printer(lines: readonly string[], holdMs: number, startedWhen?: Parameters<typeof startChildProcess>[0]['startedWhen']) {
  const script = `const lines = ${JSON.stringify(lines)}; let i = 0;
const next = () => { if (i < lines.length) { console.log(lines[i++]); setTimeout(next, 5); } else setTimeout(() => {}, ${holdMs}); };
next();`;
  return startChildProcess({
    command: process.execPath,
    args: ['-e', script],
    cwd: process.cwd(),
    env: {},
    label: 'printer',
    startTimeoutMs: 10_000,
    ...(startedWhen ? { startedWhen } : {}),
  });
}

const line = (msg: string, task?: string): string => JSON.stringify({ level: 30, msg, ...(task ? { task } : {}) });

describe('weirTasksStarted', () => {
  it('holds once each named task has logged "task started", whatever else starts', () => {
    const ready = weirTasksStarted(weirTaskIds('in', 3));
    expect(weirTaskIds('in', 3)).toEqual(['in-0', 'in-1', 'in-2']);
    expect(ready({ msg: 'worker started' })).toBe(false);
    expect(ready({ msg: 'task started', task: 'in-0' })).toBe(false);
    expect(ready({ msg: 'task started', task: 'in-1' })).toBe(false);
    expect(ready({ msg: 'task started', task: 'in-0' })).toBe(false);
    expect(ready({ msg: 'task started', task: 'in.retry-0' })).toBe(false);
    expect(ready({ msg: 'partitions assigned', task: 'in-2' })).toBe(false);
    expect(ready({ msg: 'task started', task: 'in-2' })).toBe(true);
  });
});

describe('startChildProcess', () => {
  it('is started at the line {"msg":"started"} by default, past lines that are not JSON', async () => {
    const proc = printer(['hello', '{not json', line('joining'), line('started')], 5_000);
    try {
      await proc.started;
    } finally {
      await proc.stop();
    }
    expect(proc.outputTail()).toContain('"msg":"started"');
    const never = printer(['hello', line('joining'), JSON.stringify({ msg: 'worker started' })], 0);
    await expect(never.started).rejects.toThrow(/before it started/);
  });

  it('waits for every task under weirTasksStarted, and fails when the process exits before', async () => {
    const all = printer(
      [line('worker started'), line('task started', 'in-0'), line('task started', 'in-1')],
      5_000,
      weirTasksStarted(weirTaskIds('in', 2)),
    );
    try {
      await all.started;
    } finally {
      await all.stop();
    }
    const one = printer([line('worker started'), line('task started', 'in-0')], 0, weirTasksStarted(weirTaskIds('in', 2)));
    await expect(one.started).rejects.toThrow(/printer: exited \(0\) before it started/);
  });
});
