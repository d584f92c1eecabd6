import type { Worker as Thread } from 'node:worker_threads';
import type { FromThread, ToThread } from './stream-thread-protocol.js';
import type { Slot } from './stream-thread-slot.js';
import type { ProbeResult } from '../observability/health-probes.js';

/** How long a probe or a metrics scrape waits for a thread's answer, ms. */
export const ANSWER_TIMEOUT_MS = 3_000;

/** One slot's answer to a request: `undefined` when its thread is gone or did not answer in time. */
export interface ThreadAnswer<T extends FromThread['type']> {
  readonly slot: Slot;
  /** The thread that was asked (undefined: the slot had none). */
  readonly thread: Thread | undefined;
  readonly answer: Extract<FromThread, { type: T }> | undefined;
}

let nextId = 0;

/** Asks the live thread of every slot; threads that do not answer within {@link ANSWER_TIMEOUT_MS} answer `undefined`. */
export function askThreads<T extends FromThread['type']>(
  slots: readonly Slot[],
  type: T & ToThread['type'],
): Promise<Array<ThreadAnswer<T>>> {
  return Promise.all(
    slots.map(async (slot) => {
      const thread = slot.current;
      if (thread === undefined) return { slot, thread, answer: undefined };
      const id = ++nextId;
      const answer = await new Promise<FromThread | undefined>((resolve) => {
        const timer = setTimeout(() => {
          slot.waiting.delete(id);
          resolve(undefined);
        }, ANSWER_TIMEOUT_MS);
        slot.waiting.set(id, (message) => {
          clearTimeout(timer);
          resolve(message);
        });
        thread.postMessage({ type, id } as ToThread);
      });
      return { slot, thread, answer: answer?.type === type ? (answer as Extract<FromThread, { type: T }>) : undefined };
    }),
  );
}

/** `/readyz` of a process of stream threads: ready when every thread is ready (none starting, replaced or stopping). */
export function threadsReadiness(answers: ReadonlyArray<ThreadAnswer<'probe'>>, stopping: boolean): ProbeResult {
  const threads = answers.map(({ slot, answer }) => ({
    thread: slot.thread,
    state: slot.state.kind,
    ...(answer === undefined ? { status: 'no answer' } : answer.readiness.body),
    ready: answer?.readiness.status === 200 && slot.state.kind === 'running',
  }));
  const waiting = threads.filter((t) => !t.ready).map((t) => t.thread);
  const ready = !stopping && waiting.length === 0;
  return {
    status: ready ? 200 : 503,
    body: {
      status: ready ? 'ready' : 'not ready',
      ...(ready ? {} : { reason: stopping ? 'the process is stopping' : `stream threads not ready: ${waiting.join(', ')}` }),
      threads,
    },
  };
}

/** `/healthz` of a process of stream threads: live unless a thread is not, or does not answer; a thread being replaced is live (its replacement is the cure). */
export function threadsLiveness(answers: ReadonlyArray<ThreadAnswer<'probe'>>): ProbeResult {
  const problems: string[] = [];
  const threads = answers.map(({ slot, answer }) => {
    if (answer === undefined && !['replacing', 'stopped', 'stopping'].includes(slot.state.kind))
      problems.push(`stream thread ${slot.thread} did not answer within ${ANSWER_TIMEOUT_MS} ms (its event loop is blocked)`);
    if (answer !== undefined && answer.liveness.status !== 200) {
      const own = answer.liveness.body['problems'];
      for (const p of Array.isArray(own) ? own : ['unhealthy']) problems.push(`stream thread ${slot.thread}: ${String(p)}`);
    }
    return { thread: slot.thread, state: slot.state.kind, ...(answer === undefined ? {} : answer.liveness.body) };
  });
  return {
    status: problems.length === 0 ? 200 : 503,
    body: { status: problems.length === 0 ? 'ok' : 'unhealthy', ...(problems.length > 0 ? { problems } : {}), threads },
  };
}
