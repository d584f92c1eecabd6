/**
 * The lock that serializes starting one local Kafka instance across processes (test workers,
 * the demo, the bench): `.kafka/start.lock`, or the instance's.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerFiles } from './broker-instance.js';
import { isAlive, readPidFile } from './process-helpers.js';

/**
 * Runs `fn` while holding `.kafka/start.lock` (the lock file holds the holder's pid), waiting (up
 * to 20 min: a first jar download may be slow) while another live process holds it; a lock left
 * by a dead process is taken over.
 */
export async function withStartLock<T>(files: BrokerFiles, fn: () => Promise<T>): Promise<T> {
  const startLock = files.startLock;
  await mkdir(files.runtimeDir, { recursive: true });
  const candidate = `${startLock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(candidate, `${process.pid}\n`);
  const deadline = Date.now() + 20 * 60_000;
  try {
    for (;;) {
      try {
        await link(candidate, startLock); // atomic: fails with EEXIST while someone holds it
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readPidFile(startLock);
      if (holder === undefined || !(await isAlive(holder))) {
        await rm(startLock, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`Timed out waiting for ${startLock} (held by pid ${holder}); remove it if no Kafka start is running.`);
      }
      await sleep(250);
    }
  } finally {
    await rm(candidate, { force: true });
  }
  try {
    return await fn();
  } finally {
    await rm(startLock, { force: true });
  }
}
