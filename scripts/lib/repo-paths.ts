/**
 * Where the repository and the local infrastructure's files are. Every path is resolved from
 * this module's location, never from the current directory.
 *
 * @module
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root: this file lives in `<root>/scripts/lib/`. */
export const repoRoot: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Absolute paths of the files the local broker's scripts read and write. */
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
  /** Runtime folder (git-ignored): generated config, data, logs, pid files (also Redis's). */
  runtimeDir: path.join(repoRoot, '.kafka'),
  /** Generated broker configuration (template with an absolute `log.dirs`). */
  serverProperties: path.join(repoRoot, '.kafka', 'server.properties'),
  /** KRaft metadata and topic data. */
  dataDir: path.join(repoRoot, '.kafka', 'data'),
  /** Broker stdout/stderr (and the storage format output) of the latest start. */
  brokerLog: path.join(repoRoot, '.kafka', 'broker.log'),
  /** Pid of the broker started by `startBroker` (kafka-broker.ts). */
  brokerPid: path.join(repoRoot, '.kafka', 'broker.pid'),
} as const;
