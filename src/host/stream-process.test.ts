import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from '../config/worker-config.js';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { IllegalStateError } from '../errors.js';
import { compile } from '../topology/compile.js';
import { PROCESS_TRANSITIONS, assertProcessTransition, type ProcessState } from './process-state.js';
import { StreamProcess } from './stream-process.js';

describe('the stream process state table', () => {
  const states = Object.keys(PROCESS_TRANSITIONS) as ProcessState[];

  it('ends every way in stopped or failed, which nothing leaves', () => {
    const reachesEnd = (from: ProcessState, seen = new Set<ProcessState>()): boolean =>
      PROCESS_TRANSITIONS[from].length === 0 ||
      PROCESS_TRANSITIONS[from].every((to) => !seen.has(to) && reachesEnd(to, new Set([...seen, from])));
    for (const state of states) expect(reachesEnd(state), state).toBe(true);
    expect(PROCESS_TRANSITIONS.stopped).toEqual([]);
    expect(PROCESS_TRANSITIONS.failed).toEqual([]);
  });

  it('throws IllegalStateError on a transition it does not allow', () => {
    expect(() => assertProcessTransition('created', 'running')).toThrow(IllegalStateError);
    expect(() => assertProcessTransition('failing', 'stopped')).toThrow(/stream process: illegal state transition failing → stopped/);
    expect(() => assertProcessTransition('starting', 'running')).not.toThrow();
  });
});

describe('StreamProcess', () => {
  it('stops at once, with exit code 0, when a stop signal came before it started; it runs once', async () => {
    const compiled = compile(
      topology('orders-app')
        .source('orders', 'json')
        .process('pass', (r) => r.value)
        .branch({ success: sink('orders.out') }),
    );
    const streamProcess = new StreamProcess({
      file: 'topology.ts',
      topology: compiled,
      overrides: {},
      config: loadWorkerConfig({}, {}),
      verbose: false,
      signals: { received: 'SIGTERM', first: Promise.resolve('SIGTERM'), useLogger: () => undefined },
    });
    expect(streamProcess.state).toBe('created');
    await expect(streamProcess.run()).resolves.toEqual({ code: 0 });
    expect(streamProcess.state).toBe('stopped');
    await expect(streamProcess.run()).rejects.toThrow(IllegalStateError);
  });
});
