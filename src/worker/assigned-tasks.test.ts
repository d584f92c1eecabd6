import { describe, expect, it } from 'vitest';
import { captureLog } from '../observability/log-capture.test-support.js';
import type { TopicPartition } from '../record/record-types.js';
import type { OffsetCommitter } from '../runtime/ports.js';
import { AssignedTasks } from './assigned-tasks.js';
import { oneTask } from './one-task.test-support.js';
import type { TaskFactory, TaskHooks } from './task-factory.js';
import type { TaskRunner } from './task-runner.js';

/**
 * The tasks of a member assigned `in`-0 (processor `p` → `out`, at_least_once, on in-memory
 * Kafka) whose group offset commits never get an answer (a coordinator that does not respond),
 * after one record processed — or, `hangInProcessor`, with the processor never returning on it.
 */
async function membersTaskWithHangingCommits(options: { hangInProcessor?: boolean } = {}) {
  const { kafka, newTask, newRunner, produceOne } = oneTask({
    fn: (r) => (options.hangInProcessor === true ? new Promise(() => undefined) : r.value),
  });
  let commits = 0;
  const committer: OffsetCommitter = {
    commit: () => {
      commits++;
      return new Promise<void>(() => undefined);
    },
  };
  let runner: TaskRunner | undefined;
  const factory = {
    create: (partitions: readonly TopicPartition[], hooks: TaskHooks) => {
      runner = newRunner(newTask(hooks.committer), {
        setPaused: (paused) => hooks.setPaused(partitions[0]!, paused),
        logger: captureLog('silent').logger,
        onClosed: (state) => hooks.onClosed(partitions[0]!, state),
      });
      return Promise.resolve([{ tp: partitions[0]!, runner, startOffset: 0 }]);
    },
  } as unknown as TaskFactory;
  const { logger, lines } = captureLog('warn');
  const fetcher = { pause: () => undefined, resume: () => undefined, seek: () => undefined };
  const tasks = new AssignedTasks({ factory, fetcher, committer, logger, active: () => true, atLeastOnce: true });
  tasks.assign({
    assignment: [{ topic: 'in', partition: 0 }],
    added: [{ topic: 'in', partition: 0 }],
    protocol: 'cooperative',
    memberId: 'm',
  });
  await expect.poll(() => runner, { timeout: 10_000 }).toBeDefined();
  // One record processed and produced: the shutdown's commit has an offset to commit.
  tasks.batch({ topic: 'in', partition: 0 }, await produceOne(), 1);
  if (options.hangInProcessor === true)
    await expect.poll(() => runner!.task.currentState === 'running' && runner!.task.buffered === 1, { timeout: 10_000 }).toBe(true);
  else await expect.poll(() => kafka.read('out', 0, 0).records.length, { timeout: 10_000 }).toBe(1);
  return { tasks, lines, commits: () => commits };
}

describe('AssignedTasks.closeAll', () => {
  it('with a commit limit, fails a final commit still unanswered then: its task closes without it, named in a warning', async () => {
    const { tasks, lines, commits } = await membersTaskWithHangingCommits();
    const began = Date.now();
    await tasks.closeAll('stop', 200);
    const tookMs = Date.now() - began;
    expect(commits()).toBeGreaterThan(0);
    expect(tookMs).toBeGreaterThanOrEqual(190);
    // Without the limit it would never end (the next test): any bounded wait shows the limit at work.
    expect(tookMs).toBeLessThan(10_000);
    const warning = lines.find((l) => String(l['msg']).startsWith('offset commits got no answer in time'));
    expect(warning).toMatchObject({ tasks: ['in-0'], limitMs: 200 });
    expect(tasks.unclosed()).toEqual([]);
  });

  it('without a limit, waits for that commit', async () => {
    const { tasks, lines, commits } = await membersTaskWithHangingCommits();
    const outcome = await Promise.race([
      tasks.closeAll('stop').then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300)),
    ]);
    expect(outcome).toBe('still waiting');
    expect(commits()).toBeGreaterThan(0);
    // What it waits on, for the shutdown's progress lines.
    expect(tasks.unclosed()).toEqual([expect.stringMatching(/^in-0 \(stopping, waiting on its write and offset commit for \d+ s\)$/)]);
    expect(lines.filter((l) => String(l['msg']).startsWith('offset commits got no answer'))).toEqual([]);
  });

  it('with a commit limit, still waits for a task whose processor has not returned (only commits are bounded)', async () => {
    const { tasks, lines } = await membersTaskWithHangingCommits({ hangInProcessor: true });
    const outcome = await Promise.race([
      tasks.closeAll('stop', 100).then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 400)),
    ]);
    expect(outcome).toBe('still waiting');
    expect(tasks.unclosed()).toEqual([expect.stringMatching(/^in-0 \(stopping, waiting on its processor \(offset 0\) for \d+ s\)$/)]);
    expect(lines.filter((l) => String(l['msg']).startsWith('offset commits got no answer'))).toEqual([]);
  });

  it("'close' (its consumer stopped) fails a commit still waiting for an answer: the task closes at once, no limit needed", async () => {
    const { tasks, commits } = await membersTaskWithHangingCommits();
    // The interval commit is in flight and gets no answer (a broker that is down).
    await expect.poll(commits, { timeout: 10_000 }).toBeGreaterThan(0);
    const outcome = await Promise.race([
      tasks.closeAll('close').then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
    ]);
    expect(outcome).toBe('closed');
    expect(tasks.unclosed()).toEqual([]);
  });
});
