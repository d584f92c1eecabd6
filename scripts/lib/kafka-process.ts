/**
 * One detached `java … kafka.Kafka <properties>` process of the local Kafka (a broker, or an
 * instance's own KRaft controller), its output appended to a log file and its pid written to a
 * pid file, and the check that a pid file still names such a process.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { javaExecutable, javaNotFound, log4jOptions } from './broker-storage.js';
import { isEnoent, processCommandLine, readPidFile } from './process-helpers.js';
import { kafkaPaths, repoRoot } from './repo-paths.js';

/** What {@link spawnKafkaProcess} starts. */
export interface KafkaProcessSpec {
  /** The `server.properties` (or `controller.properties`) file to run. */
  readonly properties: string;
  /** JVM heap options, e.g. `['-Xmx1g', '-Xms256m']`. */
  readonly heap: readonly string[];
  /** Further JVM options (GC tuning). */
  readonly jvmOptions?: readonly string[];
  /** Appended to with the process's stdout and stderr. */
  readonly logFile: string;
  /** Gets the pid once the process runs. */
  readonly pidFile: string;
}

/**
 * Spawns a Kafka server process detached from this one (it outlives the caller) and writes its
 * pid file.
 *
 * @returns its pid, and the child to watch for an early exit (already unref'd)
 * @throws Error naming JAVA_HOME when Java is missing; the spawn error otherwise
 */
export async function spawnKafkaProcess(spec: KafkaProcessSpec): Promise<{ pid: number; child: ChildProcess }> {
  const java = javaExecutable();
  const args = [
    ...spec.heap,
    ...(spec.jvmOptions ?? []),
    '-Djava.awt.headless=true',
    ...log4jOptions(),
    '-cp',
    path.join(kafkaPaths.lib, '*'),
    'kafka.Kafka',
    spec.properties,
  ];
  const log = await open(spec.logFile, 'a');
  try {
    const child = spawn(java, args, { cwd: repoRoot, detached: true, stdio: ['ignore', log.fd, log.fd] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (error) => reject(isEnoent(error) ? javaNotFound(java) : error));
      child.once('spawn', () => resolve(child.pid as number));
    });
    child.unref();
    await writeFile(spec.pidFile, `${pid}\n`);
    return { pid, child };
  } finally {
    // The child has its own copy of the descriptor.
    await log.close();
  }
}

/** The pid in `pidFile` when that process is alive and is a `java … kafka.Kafka` process. */
export async function kafkaPid(pidFile: string): Promise<number | undefined> {
  const pid = await readPidFile(pidFile);
  if (pid === undefined) return undefined;
  const argv = await processCommandLine(pid);
  if (!argv || !argv.includes('kafka.Kafka') || !path.basename(argv[0] ?? '').startsWith('java')) return undefined;
  return pid;
}
