/**
 * Which local broker: the shared one on {@link DEFAULT_BROKERS} (files directly under `.kafka/`),
 * or a separate {@link BrokerInstance} (files under `.kafka/<name>/`), and where each keeps its
 * address, config, data, log, pid and start lock.
 *
 * @module
 */
import path from 'node:path';
import { kafkaPaths } from './repo-paths.js';

/** Bootstrap servers of the local broker (its PLAINTEXT listener). */
export const DEFAULT_BROKERS = '127.0.0.1:9092';

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
  /**
   * Run the KRaft controller as a process of its own (`process.roles=controller`, on
   * `controllerPort`) next to the broker (`process.roles=broker`), as production clusters do,
   * instead of one combined node. A crash test then SIGKILLs the broker alone: the controller
   * stays up and fences the dead broker within `broker.session.timeout.ms`, so the restarted
   * broker never acts on a stale metadata image (a combined node does, and its transaction
   * coordinator then drops transaction markers: docs/guarantees.md, "Broker crashes and hanging
   * transactions").
   */
  readonly separateController?: boolean;
}

/** The files (absolute paths) and address of one broker: the shared default one, or an instance. */
export interface BrokerFiles {
  /** Bootstrap servers, `host:port`. */
  readonly brokers: string;
  readonly runtimeDir: string;
  readonly serverProperties: string;
  readonly dataDir: string;
  readonly brokerLog: string;
  readonly brokerPid: string;
  /** Held (it holds the holder's pid) while a start is under way. */
  readonly startLock: string;
  /** The controller process's files, when the instance runs one of its own ({@link BrokerInstance.separateController}). */
  readonly controller?: {
    readonly properties: string;
    readonly dataDir: string;
    readonly log: string;
    readonly pid: string;
  };
  /** Undefined for the shared broker. */
  readonly instance?: BrokerInstance;
}

/**
 * The files and address of the shared broker (no `instance`) or of `instance`.
 *
 * @throws Error when the instance name is not letters, digits, `-` and `_`, or is `data`.
 */
export function brokerFiles(instance?: BrokerInstance): BrokerFiles {
  if (instance === undefined) {
    const { runtimeDir, serverProperties, dataDir, brokerLog, brokerPid } = kafkaPaths;
    return {
      brokers: DEFAULT_BROKERS,
      runtimeDir,
      serverProperties,
      dataDir,
      brokerLog,
      brokerPid,
      startLock: path.join(runtimeDir, 'start.lock'),
    };
  }
  if (!/^[A-Za-z0-9_-]+$/.test(instance.name) || instance.name === 'data')
    throw new Error(`invalid broker instance name '${instance.name}'`);
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
    ...(instance.separateController === true
      ? {
          controller: {
            properties: path.join(dir, 'controller.properties'),
            dataDir: path.join(dir, 'controller-data'),
            log: path.join(dir, 'controller.log'),
            pid: path.join(dir, 'controller.pid'),
          },
        }
      : {}),
  };
}

/**
 * Bootstrap servers of a broker instance.
 *
 * @example quietKafka(instanceBrokers(instance)) // 127.0.0.1:<instance.port>
 */
export function instanceBrokers(instance: BrokerInstance): string {
  return brokerFiles(instance).brokers;
}
