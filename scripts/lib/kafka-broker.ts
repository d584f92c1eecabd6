/**
 * Local infrastructure for development, tests, the demo and the benchmarks: a single-node
 * Apache Kafka 4.x KRaft broker run from jars that Maven fetches (no Docker, no Kafka install),
 * and a local `redis-server`.
 *
 * - `kafka/pom.xml` declares the broker jars; {@link ensureKafkaJars} copies them into the
 *   git-ignored `kafka/lib/`.
 * - `kafka/server.properties` is the broker configuration template; {@link startBroker} writes
 *   `.kafka/server.properties` from it (absolute `log.dirs`), formats `.kafka/data` once, starts
 *   the broker detached (log in `.kafka/broker.log`, pid in `.kafka/broker.pid`) and waits until
 *   it answers. {@link stopBroker} stops it and keeps the data, so a restart continues with the
 *   same topics and committed offsets.
 * - {@link ensureRedis} / {@link stopRedisIfStarted} do the same for Redis.
 *
 * Every path is resolved from this module's location, never from the current directory.
 *
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { link, mkdir, open, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { Redis } from 'ioredis';

/** Bootstrap servers of the local broker (its PLAINTEXT listener). */
export const DEFAULT_BROKERS = '127.0.0.1:9092';
/** URL of the local Redis. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Repository root: this file lives in `<root>/scripts/lib/`. */
export const repoRoot: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Absolute paths of the files this module reads and writes. */
export const kafkaPaths = {
  /** Maven pom declaring the broker jars. */
  pom: path.join(repoRoot, 'kafka', 'pom.xml'),
  /** Folder the jars are copied into (git-ignored). */
  lib: path.join(repoRoot, 'kafka', 'lib'),
  /** Marker written after a complete copy; holds the SHA-256 of the pom it was made from. */
  libMarker: path.join(repoRoot, 'kafka', 'lib', '.complete'),
  /** Broker configuration template (checked in). */
  serverPropertiesTemplate: path.join(repoRoot, 'kafka', 'server.properties'),
  /** log4j2 configuration of the broker (checked in). */
  log4jConfig: path.join(repoRoot, 'kafka', 'log4j2.yaml'),
  /** Runtime folder (git-ignored): generated config, data, logs, pid files. */
  runtimeDir: path.join(repoRoot, '.kafka'),
  /** Generated broker configuration (template with an absolute `log.dirs`). */
  serverProperties: path.join(repoRoot, '.kafka', 'server.properties'),
  /** KRaft metadata and topic data. */
  dataDir: path.join(repoRoot, '.kafka', 'data'),
  /** Broker stdout/stderr (and the storage format output) of the latest start. */
  brokerLog: path.join(repoRoot, '.kafka', 'broker.log'),
  /** Pid of the broker started by {@link startBroker}. */
  brokerPid: path.join(repoRoot, '.kafka', 'broker.pid'),
} as const;

/** Lines of the broker log quoted in start errors. */
const LOG_TAIL_LINES = 40;

/**
 * A separate local broker instance (for tests that restart or kill their broker without
 * disturbing the shared one on {@link DEFAULT_BROKERS}): its own listener and controller ports,
 * data dir `.kafka/<name>/data`, config, log and pid file under `.kafka/<name>/`; the same jars
 * and `kafka/server.properties` template.
 */
export interface BrokerInstance {
  /** Folder name under `.kafka/` (letters, digits, `-`, `_`). */
  readonly name: string;
  /** PLAINTEXT listener port (clients connect to `127.0.0.1:<port>`). */
  readonly port: number;
  /** KRaft controller listener port. */
  readonly controllerPort: number;
  /** Extra broker properties, appended to the template's (they win). */
  readonly properties?: Readonly<Record<string, string>>;
}

/** The files and address of one broker: the shared default one, or an instance. */
interface BrokerFiles {
  readonly brokers: string;
  readonly runtimeDir: string;
  readonly serverProperties: string;
  readonly dataDir: string;
  readonly brokerLog: string;
  readonly brokerPid: string;
  readonly startLock: string;
  readonly instance?: BrokerInstance;
}

function brokerFiles(instance?: BrokerInstance): BrokerFiles {
  if (instance === undefined) {
    const { runtimeDir, serverProperties, dataDir, brokerLog, brokerPid } = kafkaPaths;
    return { brokers: DEFAULT_BROKERS, runtimeDir, serverProperties, dataDir, brokerLog, brokerPid, startLock: path.join(runtimeDir, 'start.lock') };
  }
  if (!/^[A-Za-z0-9_-]+$/.test(instance.name) || instance.name === 'data') throw new Error(`invalid broker instance name '${instance.name}'`);
  const dir = path.join(kafkaPaths.runtimeDir, instance.name);
  return {
    brokers: `127.0.0.1:${instance.port}`,
    runtimeDir: dir,
    serverProperties: path.join(dir, 'server.properties'),
    dataDir: path.join(dir, 'data'),
    brokerLog: path.join(dir, 'broker.log'),
    brokerPid: path.join(dir, 'broker.pid'),
    startLock: path.join(dir, 'start.lock'),
    instance,
  };
}

/** Bootstrap servers of a broker instance. */
export function instanceBrokers(instance: BrokerInstance): string {
  return brokerFiles(instance).brokers;
}

// ---------------------------------------------------------------------------------------------
// Small process helpers
// ---------------------------------------------------------------------------------------------

interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; rejects only when it cannot be started (e.g. ENOENT). */
function run(file: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd: options.cwd ?? repoRoot, timeout: options.timeoutMs ?? 0, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error && typeof error.code === 'string') {
          reject(error);
          return;
        }
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

function isEnoent(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** The last `lines` lines of the non-empty parts of `texts`. */
function tail(texts: string | readonly string[], lines: number): string {
  const text = (typeof texts === 'string' ? [texts] : texts).map((t) => t.trimEnd()).filter((t) => t !== '').join('\n');
  return text.split('\n').slice(-lines).join('\n');
}

/** The `java` executable: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` on the PATH. */
function javaExecutable(): string {
  const javaHome = process.env['JAVA_HOME'];
  return javaHome ? path.join(javaHome, 'bin', 'java') : 'java';
}

/** Command line of a live process, or undefined when it does not exist or is a zombie. */
async function processCommandLine(pid: number): Promise<string[] | undefined> {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: it belongs to someone else, so it is not ours to manage either way.
    return undefined;
  }
  if (process.platform === 'linux') {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') return undefined;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      return cmdline.split('\0').filter((arg) => arg !== '');
    } catch {
      return undefined;
    }
  }
  try {
    const { code, stdout } = await run('ps', ['-o', 'args=', '-p', String(pid)]);
    return code === 0 && stdout.trim() !== '' ? stdout.trim().split(/\s+/) : undefined;
  } catch {
    return undefined;
  }
}

async function isAlive(pid: number): Promise<boolean> {
  return (await processCommandLine(pid)) !== undefined;
}

async function readPidFile(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Polls `condition` every `intervalMs` until it holds or `timeoutMs` passes; returns whether it held. */
async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, intervalMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/**
 * Sends SIGTERM (or SIGKILL when `hard`) to `pid`, waits up to `timeoutMs` for it to exit, then
 * SIGKILLs it and waits up to 10 s more. Returns whether the process is gone.
 */
async function terminate(pid: number, timeoutMs: number, hard = false): Promise<boolean> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  signal(hard ? 'SIGKILL' : 'SIGTERM');
  if (await waitFor(async () => !(await isAlive(pid)), timeoutMs)) return true;
  signal('SIGKILL');
  return waitFor(async () => !(await isAlive(pid)), 10_000);
}

// ---------------------------------------------------------------------------------------------
// Kafka jars
// ---------------------------------------------------------------------------------------------

async function pomDigest(): Promise<string> {
  return createHash('sha256').update(await readFile(kafkaPaths.pom)).digest('hex');
}

/** True when `kafka/lib` holds a complete copy made from the current `kafka/pom.xml`. */
export async function kafkaJarsPresent(): Promise<boolean> {
  try {
    const [marker, digest] = await Promise.all([readFile(kafkaPaths.libMarker, 'utf8'), pomDigest()]);
    if (marker.trim() !== digest) return false;
    const jars = (await readdir(kafkaPaths.lib)).filter((name) => name.endsWith('.jar'));
    return jars.some((name) => /^kafka_2\.13-.*\.jar$/.test(name));
  } catch {
    return false;
  }
}

/**
 * Makes sure the Kafka broker jars are in `kafka/lib/`: when the folder is missing, incomplete
 * or was made from another version of `kafka/pom.xml`, it is emptied and refilled with
 * `mvn dependency:copy-dependencies` (Maven Central; the first download takes a while).
 *
 * @throws Error when `mvn` is not installed or fails (the message quotes Maven's output).
 */
export async function ensureKafkaJars(): Promise<void> {
  if (await kafkaJarsPresent()) return;
  await rm(kafkaPaths.lib, { recursive: true, force: true });
  const args = [
    '-q',
    '-B',
    '-f',
    kafkaPaths.pom,
    'dependency:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${kafkaPaths.lib}`,
  ];
  let result: ExecResult;
  try {
    result = await run('mvn', args, { timeoutMs: 15 * 60_000 });
  } catch (error) {
    if (isEnoent(error)) {
      throw new Error('Cannot fetch the Kafka broker jars: Maven (`mvn`) is not on the PATH. Install Maven 3.x and Java 17+.');
    }
    throw error;
  }
  if (result.code !== 0) {
    throw new Error(
      `Fetching the Kafka broker jars failed: \`mvn ${args.join(' ')}\` exited with code ${result.code}.\n` +
        tail([result.stdout, result.stderr], LOG_TAIL_LINES),
    );
  }
  await writeFile(kafkaPaths.libMarker, `${await pomDigest()}\n`);
  if (!(await kafkaJarsPresent())) {
    throw new Error(`Maven succeeded but ${kafkaPaths.lib} holds no kafka_2.13 jar; check ${kafkaPaths.pom}.`);
  }
}

// ---------------------------------------------------------------------------------------------
// Kafka broker
// ---------------------------------------------------------------------------------------------

/**
 * Whether a Kafka broker at `brokers` answers a metadata request. Never throws; returns false
 * quickly (connection refused) when nothing listens.
 *
 * @param brokers - comma-separated `host:port` list.
 * @param timeoutMs - upper bound for the whole check, in ms.
 */
export async function brokerAnswers(brokers: string = DEFAULT_BROKERS, timeoutMs = 3_000): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'weir-broker-probe',
    brokers: brokers.split(',').map((b) => b.trim()).filter((b) => b !== ''),
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 1_000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  const admin = kafka.admin({ retry: { retries: 0 } });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = (async (): Promise<boolean> => {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 && cluster.controller !== null;
  })().catch(() => false);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Pid of the broker recorded in `.kafka/broker.pid` (or the instance's pid file) when that
 * process is alive and is a `java … kafka.Kafka` process; undefined otherwise.
 */
export async function brokerPid(instance?: BrokerInstance): Promise<number | undefined> {
  const pid = await readPidFile(brokerFiles(instance).brokerPid);
  if (pid === undefined) return undefined;
  const argv = await processCommandLine(pid);
  if (!argv || !argv.includes('kafka.Kafka') || !path.basename(argv[0] ?? '').startsWith('java')) return undefined;
  return pid;
}

/** Last `lines` lines of `.kafka/broker.log` (or the instance's log; empty string when there is none). */
export async function brokerLogTail(lines = LOG_TAIL_LINES, instance?: BrokerInstance): Promise<string> {
  try {
    return tail(await readFile(brokerFiles(instance).brokerLog, 'utf8'), lines);
  } catch {
    return '';
  }
}

/** JVM option pointing log4j2 at `kafka/log4j2.yaml` (none when the file is absent: log4j2 defaults). */
function log4jOptions(): string[] {
  return existsSync(kafkaPaths.log4jConfig) ? [`-Dlog4j2.configurationFile=${kafkaPaths.log4jConfig}`] : [];
}

/**
 * Writes `.kafka/server.properties`: the template with `log.dirs` set to the absolute data dir
 * (for an instance: also its listener ports, then its extra properties).
 */
async function writeServerProperties(files: BrokerFiles): Promise<void> {
  const template = await readFile(kafkaPaths.serverPropertiesTemplate, 'utf8');
  if (!/^log\.dirs=/m.test(template)) throw new Error(`${kafkaPaths.serverPropertiesTemplate} has no log.dirs line.`);
  // Properties files treat backslashes as escapes (Windows paths).
  const dataDir = files.dataDir.replaceAll('\\', '/');
  let generated =
    `# GENERATED by scripts/lib/kafka-broker.ts from kafka/server.properties; edit the template instead.\n` +
    template.replace(/^log\.dirs=.*$/m, `log.dirs=${dataDir}`);
  const instance = files.instance;
  if (instance !== undefined) {
    const { port, controllerPort } = instance;
    generated =
      generated
        .replace(/^controller\.quorum\.voters=.*$/m, `controller.quorum.voters=1@127.0.0.1:${controllerPort}`)
        .replace(/^listeners=.*$/m, `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`)
        .replace(/^advertised\.listeners=.*$/m, `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`) +
      `\n# Instance '${instance.name}'\n` +
      Object.entries(instance.properties ?? {}).map(([k, v]) => `${k}=${v}\n`).join('');
  }
  await writeFile(files.serverProperties, generated);
}

/** Formats the KRaft storage in `.kafka/data` unless it already is; output goes to the broker log. */
async function formatStorageOnce(files: BrokerFiles): Promise<void> {
  if (existsSync(path.join(files.dataDir, 'meta.properties'))) return;
  const java = javaExecutable();
  const classpath = path.join(kafkaPaths.lib, '*');
  const jvm = [...log4jOptions(), '-cp', classpath];
  let uuid: ExecResult;
  try {
    uuid = await run(java, [...jvm, 'kafka.tools.StorageTool', 'random-uuid'], { timeoutMs: 60_000 });
  } catch (error) {
    if (isEnoent(error)) throw new Error(`Cannot start Kafka: \`${java}\` not found. Install Java 17+ or set JAVA_HOME.`);
    throw error;
  }
  const clusterId = uuid.stdout.trim().split('\n').pop()?.trim() ?? '';
  if (uuid.code !== 0 || !/^[A-Za-z0-9_-]{22}$/.test(clusterId)) {
    throw new Error(`\`kafka-storage random-uuid\` failed (exit ${uuid.code}):\n${tail([uuid.stdout, uuid.stderr], LOG_TAIL_LINES)}`);
  }
  const format = await run(
    java,
    [...jvm, 'kafka.tools.StorageTool', 'format', '--config', files.serverProperties, `--cluster-id=${clusterId}`, '--ignore-formatted'],
    { timeoutMs: 120_000 },
  );
  await writeFile(files.brokerLog, `${format.stdout}${format.stderr}`, { flag: 'a' });
  if (format.code !== 0) {
    throw new Error(
      `Formatting the Kafka storage in ${files.dataDir} failed (exit ${format.code}):\n` +
        tail([format.stdout, format.stderr], LOG_TAIL_LINES),
    );
  }
}

/**
 * Runs `fn` while holding `.kafka/start.lock` (the lock file holds the holder's pid), waiting (up
 * to 20 min: a first jar download may be slow) while another live process holds it; a lock left
 * by a dead process is taken over.
 */
async function withStartLock<T>(files: BrokerFiles, fn: () => Promise<T>): Promise<T> {
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

/** Options of {@link startBroker}. */
export interface StartBrokerOptions {
  /** How long to wait for the broker to answer, in ms (default 90 000). */
  timeoutMs?: number;
  /** JVM maximum heap, as for `-Xmx` (default `1g`). */
  heap?: string;
  /** Start this separate instance instead of the shared broker on {@link DEFAULT_BROKERS}. */
  instance?: BrokerInstance;
}

/** Result of {@link startBroker}. */
export interface StartBrokerResult {
  /** True when this call started the broker process (so the caller may want to stop it). */
  startedByUs: boolean;
  /** Pid of the broker process when it is one of ours (from `.kafka/broker.pid`). */
  pid?: number;
}

/**
 * Starts the local single-node KRaft broker on {@link DEFAULT_BROKERS} unless one already
 * answers there (then it returns at once with `startedByUs: false`). Otherwise it fetches the
 * jars if needed, formats `.kafka/data` once, starts `java -cp 'kafka/lib/*' kafka.Kafka`
 * detached (own process group, output to `.kafka/broker.log`, pid in `.kafka/broker.pid`) and
 * waits until the broker answers a metadata request. Concurrent calls (from any process) are
 * serialised by `.kafka/start.lock`, and a broker recorded in the pid file that is still
 * starting is waited for instead of starting another.
 *
 * @throws Error when Java or Maven are missing, the jar fetch or storage format fails, the
 *   broker exits, or it does not answer within `timeoutMs` ms (it is then stopped). The message
 *   ends with the last 40 lines of the broker log.
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<StartBrokerResult> {
  const files = brokerFiles(options.instance);
  if (await brokerAnswers(files.brokers, 2_000)) {
    const pid = await brokerPid(options.instance);
    return pid === undefined ? { startedByUs: false } : { startedByUs: false, pid };
  }
  // Concurrent starts (two terminals, a script and a test run) take turns; the later one then
  // finds the broker answering.
  return withStartLock(files, () => startBrokerLocked(options, files));
}

async function startBrokerLocked(options: StartBrokerOptions, files: BrokerFiles): Promise<StartBrokerResult> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const brokers = files.brokers;
  const existing = await brokerPid(options.instance);
  if (existing !== undefined) {
    // A broker of ours is alive: it may still be starting (or was just restarted).
    if (await waitFor(() => brokerAnswers(brokers, 2_000), timeoutMs, 500)) {
      return { startedByUs: false, pid: existing };
    }
    throw new Error(
      `The Kafka broker (pid ${existing}, from ${files.brokerPid}) runs but did not answer on ${brokers} ` +
        `within ${timeoutMs} ms. Stop it with \`npm run kafka:stop\`. Last lines of ${files.brokerLog}:\n${await brokerLogTail(LOG_TAIL_LINES, options.instance)}`,
    );
  }
  if (await brokerAnswers(brokers, 2_000)) return { startedByUs: false };

  await ensureKafkaJars();
  await mkdir(files.runtimeDir, { recursive: true });
  await rm(files.brokerPid, { force: true });
  if (existsSync(files.brokerLog)) await rename(files.brokerLog, `${files.brokerLog}.1`);
  await writeServerProperties(files);
  await formatStorageOnce(files);

  const java = javaExecutable();
  const args = [
    `-Xmx${options.heap ?? '1g'}`,
    '-Xms256m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-Djava.awt.headless=true',
    ...log4jOptions(),
    '-cp',
    path.join(kafkaPaths.lib, '*'),
    'kafka.Kafka',
    files.serverProperties,
  ];
  const log = await open(files.brokerLog, 'a');
  let exited: string | undefined;
  try {
    const child = spawn(java, args, { cwd: repoRoot, detached: true, stdio: ['ignore', log.fd, log.fd] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (error) =>
        reject(isEnoent(error) ? new Error(`Cannot start Kafka: \`${java}\` not found. Install Java 17+ or set JAVA_HOME.`) : error),
      );
      child.once('spawn', () => resolve(child.pid as number));
    });
    child.once('exit', (code, signal) => {
      exited = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    });
    child.unref();
    await writeFile(files.brokerPid, `${pid}\n`);

    const started = Date.now();
    const up = await waitFor(
      async () => exited !== undefined || !(await isAlive(pid)) || (await brokerAnswers(brokers, 2_000)),
      timeoutMs,
      500,
    );
    let dead = exited !== undefined || !(await isAlive(pid));
    if (up && !dead) {
      // Another broker (another checkout's, starting at the same moment) may be what answered,
      // while ours dies on the taken port: make sure ours is still alive a moment later.
      await sleep(1_500);
      dead = exited !== undefined || !(await isAlive(pid));
      if (!dead) return { startedByUs: true, pid };
      if (await brokerAnswers(brokers, 2_000)) {
        await rm(files.brokerPid, { force: true });
        return { startedByUs: false };
      }
    }

    // Quote the log as it was when the broker failed, before our SIGTERM adds shutdown lines.
    const logTail = await brokerLogTail(LOG_TAIL_LINES, options.instance);
    let reason: string;
    if (dead) {
      reason = `the broker process (pid ${pid}) ${exited ?? 'exited'} before it answered`;
    } else {
      await terminate(pid, 10_000);
      reason = `the broker (pid ${pid}) did not answer on ${brokers} within ${Date.now() - started} ms and was stopped`;
    }
    await rm(files.brokerPid, { force: true });
    throw new Error(`Kafka did not start: ${reason}. Last lines of ${files.brokerLog}:\n${logTail}`);
  } finally {
    await log.close();
  }
}

/** Options of {@link stopBroker}. */
export interface StopBrokerOptions {
  /** How long to wait after SIGTERM before SIGKILL, in ms (default 30 000). */
  timeoutMs?: number;
  /** Send SIGKILL right away (simulates a broker crash; the data dir is kept either way). */
  hard?: boolean;
  /** Stop this separate instance instead of the shared broker. */
  instance?: BrokerInstance;
}

/**
 * Stops the broker recorded in `.kafka/broker.pid`, after checking that the pid still is a
 * `java … kafka.Kafka` process: SIGTERM, wait up to `timeoutMs` ms, then SIGKILL. Removes the
 * pid file and keeps `.kafka/data`, so the next {@link startBroker} continues with the same
 * topics and offsets. A broker not started by this module (no pid file) is left alone.
 *
 * @returns true when a broker process was stopped.
 * @throws Error when the process survives SIGKILL.
 */
export async function stopBroker(options: StopBrokerOptions = {}): Promise<boolean> {
  const files = brokerFiles(options.instance);
  const pid = await brokerPid(options.instance);
  if (pid === undefined) {
    await rm(files.brokerPid, { force: true });
    return false;
  }
  if (!(await terminate(pid, options.timeoutMs ?? 30_000, options.hard ?? false))) {
    throw new Error(`The Kafka broker (pid ${pid}) is still running after SIGKILL.`);
  }
  await rm(files.brokerPid, { force: true });
  return true;
}

/**
 * Stops a broker instance (if it runs) and deletes its folder `.kafka/<name>/` — data, config
 * and logs. Never touches the shared broker.
 *
 * @returns true when a broker process was stopped.
 */
export async function removeBrokerInstance(instance: BrokerInstance): Promise<boolean> {
  const files = brokerFiles(instance);
  const stopped = await stopBroker({ instance, timeoutMs: 10_000 });
  await rm(files.runtimeDir, { recursive: true, force: true });
  return stopped;
}

// ---------------------------------------------------------------------------------------------
// Redis
// ---------------------------------------------------------------------------------------------

/** Result of {@link ensureRedis}. */
export interface EnsureRedisResult {
  /** True when this call started `redis-server`. */
  startedByUs: boolean;
  /** Pid of the `redis-server` this module started (from its pid file). */
  pid?: number;
}

function redisTarget(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: parsed.port ? Number(parsed.port) : 6379 };
}

function redisPidFile(port: number): string {
  return path.join(kafkaPaths.runtimeDir, `redis-${port}.pid`);
}

/**
 * Whether Redis at `url` answers PING. Never throws; no retries.
 *
 * @param timeoutMs - connect and command timeout, in ms.
 */
export async function redisAnswers(url: string = DEFAULT_REDIS_URL, timeoutMs = 1_000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Makes sure Redis answers at `url`. When it does not and `url` is on this machine, starts
 * `redis-server` daemonized on its port (no persistence; pid and log files in `.kafka/`) and
 * waits until it answers.
 *
 * @param timeoutMs - how long to wait for a started Redis to answer, in ms.
 * @throws Error when Redis does not answer at a non-local address, `redis-server` is not
 *   installed or fails, or it does not answer within `timeoutMs`.
 */
export async function ensureRedis(url: string = DEFAULT_REDIS_URL, timeoutMs = 15_000): Promise<EnsureRedisResult> {
  if (await redisAnswers(url)) return { startedByUs: false };
  const { host, port } = redisTarget(url);
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
    throw new Error(`Redis does not answer at ${url}, and it is not local, so it cannot be started here.`);
  }
  await mkdir(kafkaPaths.runtimeDir, { recursive: true });
  const pidFile = redisPidFile(port);
  const logFile = path.join(kafkaPaths.runtimeDir, `redis-${port}.log`);
  const args = [
    '--daemonize', 'yes',
    '--port', String(port),
    '--bind', host === 'localhost' ? '127.0.0.1' : host,
    '--save', '',
    '--appendonly', 'no',
    '--dir', kafkaPaths.runtimeDir,
    '--pidfile', pidFile,
    '--logfile', logFile,
  ];
  let result: ExecResult;
  try {
    result = await run('redis-server', args, { timeoutMs: 30_000 });
  } catch (error) {
    if (isEnoent(error)) throw new Error(`Redis does not answer at ${url} and \`redis-server\` is not installed.`);
    throw error;
  }
  if (result.code !== 0) {
    throw new Error(`\`redis-server ${args.join(' ')}\` failed (exit ${result.code}):\n${tail([result.stdout, result.stderr], 20)}`);
  }
  if (!(await waitFor(() => redisAnswers(url), timeoutMs, 200))) {
    let log = '';
    try {
      log = tail(readFileSync(logFile, 'utf8'), 20);
    } catch {
      // no log
    }
    throw new Error(`redis-server was started on port ${port} but did not answer at ${url} within ${timeoutMs} ms.\n${log}`);
  }
  const pid = await waitForPid(pidFile);
  return pid === undefined ? { startedByUs: true } : { startedByUs: true, pid };
}

async function waitForPid(pidFile: string): Promise<number | undefined> {
  let pid: number | undefined;
  await waitFor(async () => (pid = await readPidFile(pidFile)) !== undefined, 5_000, 100);
  return pid;
}

/**
 * Stops the `redis-server` that {@link ensureRedis} started for `url` (found through its pid
 * file in `.kafka/`, checked to still be a `redis-server`); leaves any other Redis alone.
 *
 * @returns true when a Redis process was stopped.
 */
export async function stopRedis(url: string = DEFAULT_REDIS_URL): Promise<boolean> {
  const { port } = redisTarget(url);
  const pidFile = redisPidFile(port);
  const pid = await readPidFile(pidFile);
  const argv = pid === undefined ? undefined : await processCommandLine(pid);
  if (pid === undefined || !argv || !argv.some((arg) => arg.includes('redis-server'))) {
    await rm(pidFile, { force: true });
    return false;
  }
  const stopped = await terminate(pid, 10_000);
  await rm(pidFile, { force: true });
  return stopped;
}

/**
 * Stops Redis only when `started.startedByUs` (the result of {@link ensureRedis}) says this
 * module started it.
 *
 * @returns true when a Redis process was stopped.
 */
export async function stopRedisIfStarted(started: EnsureRedisResult, url: string = DEFAULT_REDIS_URL): Promise<boolean> {
  return started.startedByUs ? stopRedis(url) : false;
}
