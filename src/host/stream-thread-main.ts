/**
 * The entry of one stream thread of `weir run --threads <n>` (a `node:worker_threads` thread):
 * loads the topology file and runs one worker in the thread (see `hostStreamThread`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StreamThreadData } from './stream-thread-protocol.js';
import { hostStreamThread } from './stream-thread-host.js';
import { loadTopology } from './load-topology.js';
import { exitCodeOf, reportError } from './report-error.js';

if (parentPort === null) throw new Error('stream-thread-main runs in a worker thread of weir run --threads');

await hostStreamThread(parentPort, workerData as StreamThreadData, {
  load: loadTopology,
  describeFailure: (error, verbose) => {
    const lines: string[] = [];
    reportError(error, verbose, (line) => lines.push(line));
    return { exitCode: exitCodeOf(error), lines };
  },
});
