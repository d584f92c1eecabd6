/**
 * The local single-node Apache Kafka 4.x KRaft broker for development, tests, the demo and the
 * benchmarks, run from the jars Maven fetches (kafka-jars.ts; no Docker, no Kafka install).
 *
 * {@link startBroker} writes `.kafka/server.properties` from the `kafka/server.properties`
 * template (absolute `log.dirs`), formats `.kafka/data` once (broker-storage.ts), starts the
 * broker detached (log in `.kafka/broker.log`, pid in `.kafka/broker.pid`) and waits until it
 * answers. {@link stopBroker} stops it and keeps the data, so a restart continues with the same
 * topics and committed offsets. Both also run a separate {@link BrokerInstance}
 * (broker-instance.ts) for tests that restart or kill their broker.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from '../../src/kafkajs/kafkajs-library.js';
import { DEFAULT_BROKERS, brokerFiles, type BrokerFiles, type BrokerInstance } from './broker-instance.js';
import { withStartLock } from './broker-start-lock.js';
import { formatStorageOnce, writeServerProperties } from './broker-storage.js';
import { ensureKafkaJars } from './kafka-jars.js';
import { kafkaPid, spawnKafkaProcess } from './kafka-process.js';
import { LOG_TAIL_LINES, isAlive, tail, terminate } from './process-helpers.js';
import { pollUntil } from './wait-for.js';

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
    brokers: brokers
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b !== ''),
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
  return kafkaPid(brokerFiles(instance).brokerPid);
}

/** Last `lines` lines of `.kafka/broker.log` (or the instance's log; empty string when there is none). */
export async function brokerLogTail(lines = LOG_TAIL_LINES, instance?: BrokerInstance): Promise<string> {
  try {
    return tail(await readFile(brokerFiles(instance).brokerLog, 'utf8'), lines);
  } catch {
    return '';
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
 * @example const { startedByUs } = await startBroker(); // … if (startedByUs) await stopBroker();
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
    if (await pollUntil(() => brokerAnswers(brokers, 2_000), timeoutMs, 500)) {
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
  if (files.controller !== undefined) await ensureController(files.controller);

  let exited: string | undefined;
  const { pid, child } = await spawnKafkaProcess({
    properties: files.serverProperties,
    heap: [`-Xmx${options.heap ?? '1g'}`, '-Xms256m'],
    jvmOptions: ['-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20'],
    logFile: files.brokerLog,
    pidFile: files.brokerPid,
  });
  child.once('exit', (code, signal) => {
    exited = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  });
  const started = Date.now();
  const up = await pollUntil(
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
}

/**
 * Starts an instance's own KRaft controller process (detached, 256 MiB heap) unless it runs
 * already; the broker started next waits for it (a controller restarts nothing of the broker's).
 *
 * @throws Error when Java is missing
 */
async function ensureController(controller: NonNullable<BrokerFiles['controller']>): Promise<void> {
  if ((await kafkaPid(controller.pid)) !== undefined) return;
  if (existsSync(controller.log)) await rename(controller.log, `${controller.log}.1`);
  await spawnKafkaProcess({
    properties: controller.properties,
    heap: ['-Xmx256m', '-Xms64m'],
    jvmOptions: ['-XX:+UseG1GC'],
    logFile: controller.log,
    pidFile: controller.pid,
  });
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
 * `java … kafka.Kafka` process: SIGTERM, wait up to `timeoutMs` ms, then SIGKILL. An instance's
 * own controller ({@link BrokerInstance.separateController}) keeps running (removeBrokerInstance
 * stops it). Removes the
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
  const controllerLogFrom = files.controller !== undefined ? await fileSize(files.controller.log) : undefined;
  if (!(await terminate(pid, options.timeoutMs ?? 30_000, options.hard ?? false))) {
    throw new Error(`The Kafka broker (pid ${pid}) is still running after SIGKILL.`);
  }
  await rm(files.brokerPid, { force: true });
  // A crashed broker of an instance with its own controller: wait until the controller fenced it
  // (its session timed out), so that its restart registers afresh instead of acting on the
  // metadata of its dead incarnation. (A graceful stop unregisters at once.)
  if (options.hard === true && files.controller !== undefined && controllerLogFrom !== undefined) {
    const { log } = files.controller;
    await pollUntil(async () => (await readFrom(log, controllerLogFrom)).includes('Fencing broker'), 20_000, 200);
  }
  return true;
}

async function fileSize(file: string): Promise<number> {
  return (await stat(file).catch(() => undefined))?.size ?? 0;
}

async function readFrom(file: string, offset: number): Promise<string> {
  const text = await readFile(file).catch(() => Buffer.alloc(0));
  return text.subarray(offset).toString('utf8');
}

/**
 * Stops a broker instance (if it runs) and deletes its folder `.kafka/<name>/` — data, config
 * and logs. Never touches the shared broker.
 *
 * @returns true when a broker process was stopped.
 * @example
 * const instance = { name: 'crash-1', port: await freePort(), controllerPort: await freePort() };
 * await startBroker({ instance }); // … clients on instanceBrokers(instance)
 * await removeBrokerInstance(instance);
 */
export async function removeBrokerInstance(instance: BrokerInstance): Promise<boolean> {
  const files = brokerFiles(instance);
  const stopped = await stopBroker({ instance, timeoutMs: 10_000 });
  const controllerPid = files.controller === undefined ? undefined : await kafkaPid(files.controller.pid);
  if (controllerPid !== undefined) await terminate(controllerPid, 10_000);
  await rm(files.runtimeDir, { recursive: true, force: true });
  return stopped;
}
