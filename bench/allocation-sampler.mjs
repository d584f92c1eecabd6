/**
 * `node --import ./bench/allocation-sampler.mjs …`: where a process allocates, by function, from
 * V8's sampling heap profiler (every object of about `ALLOCATION_SAMPLING_BYTES`, default
 * 4 096 bytes, sampled, including the ones garbage collection already took: the allocation rate
 * rather than what is live at the end). bench/profile.ts preloads it with PROFILE_ALLOCATIONS=1.
 *
 * The first SIGUSR2 starts sampling; the second stops it and writes the profile (a
 * `.heapprofile`, which Chrome DevTools opens) to `ALLOCATION_PROFILE_PATH`. Main thread only
 * (the stream threads of `--threads` are not sampled).
 */
import { renameSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import { isMainThread } from 'node:worker_threads';

if (isMainThread && process.env['ALLOCATION_PROFILE_PATH']) {
  const session = new inspector.Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', {
        samplingInterval: Number(process.env['ALLOCATION_SAMPLING_BYTES'] ?? 4096),
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      return;
    }
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) console.error(`allocation-sampler: ${error.message}`);
      else {
        // Whole or not at all, for the reader that waits for it.
        const file = process.env['ALLOCATION_PROFILE_PATH'];
        writeFileSync(`${file}.partial`, JSON.stringify(result.profile));
        renameSync(`${file}.partial`, file);
      }
    });
  });
}
