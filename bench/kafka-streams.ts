/**
 * The Kafka Streams contestant: builds bench/kafka-streams/ (a Maven project, Kafka Streams
 * 4.4.0 from Maven Central) once, and starts its byte-array pass-through as a JVM child process.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '../scripts/lib/repo-paths.js';
import { startChildProcess, type ContestantProcess } from './contestant-process.js';

/** Heap limit of the Kafka Streams JVM (its RSS includes the heap it touches). */
export const KAFKA_STREAMS_HEAP = '1g';

const projectDir = path.join(repoRoot, 'bench', 'kafka-streams');
const targetDir = path.join(projectDir, 'target');
const jar = path.join(targetDir, 'weir-kstreams-bench.jar');
const lib = path.join(targetDir, 'lib');
const digestFile = path.join(targetDir, '.weir-build-digest');

/** The outcome of {@link buildKafkaStreams}. */
export type KafkaStreamsBuild =
  { readonly ok: true; readonly classpath: string; readonly built: boolean } | { readonly ok: false; readonly reason: string };

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : Promise.resolve([path.join(dir, e.name)]))),
  );
  return nested.flat().sort();
}

/** SHA-256 over the pom and every file under src/. */
async function sourceDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [path.join(projectDir, 'pom.xml'), ...(await sourceFiles(path.join(projectDir, 'src')))]) {
    hash
      .update(path.relative(projectDir, file))
      .update('\0')
      .update(await readFile(file))
      .update('\0');
  }
  return hash.digest('hex');
}

function mvn(args: readonly string[]): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve) => {
    execFile('mvn', [...args], { cwd: repoRoot, timeout: 15 * 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : (error.code ?? 1);
      // Maven colours some lines even in batch mode: drop the ANSI escapes.
      // eslint-disable-next-line no-control-regex -- the escape character is what this removes
      resolve({ code, output: `${stdout}${stderr}`.replace(/\u001b\[[0-9;]*m/g, '') });
    });
  });
}

let build: Promise<KafkaStreamsBuild> | undefined;

/**
 * Builds the pass-through with `mvn -q -B -f bench/kafka-streams/pom.xml package` (the jar
 * plus its runtime dependencies in target/lib/), unless target/ was built from the same
 * sources. Never throws: a missing `mvn` or a failed build is returned as a reason, with the
 * tail of Maven's output. Built at most once per process.
 */
export function buildKafkaStreams(): Promise<KafkaStreamsBuild> {
  build ??= (async (): Promise<KafkaStreamsBuild> => {
    const classpath = `${jar}${path.delimiter}${path.join(lib, '*')}`;
    const digest = await sourceDigest();
    const previous = await readFile(digestFile, 'utf8').catch(() => '');
    if (previous.trim() === digest && existsSync(jar) && existsSync(lib)) return { ok: true, classpath, built: false };
    await rm(digestFile, { force: true });
    const { code, output } = await mvn(['-q', '-B', '-Dstyle.color=never', '-f', path.join(projectDir, 'pom.xml'), 'package']);
    if (code === 'ENOENT') return { ok: false, reason: 'Maven (`mvn`) is not on the PATH' };
    if (code !== 0 || !existsSync(jar)) {
      const tail = output.trim().split('\n').slice(-25).join('\n');
      return { ok: false, reason: `\`mvn package\` of bench/kafka-streams failed (exit ${code})${tail ? `:\n${tail}` : ''}` };
    }
    await writeFile(digestFile, `${digest}\n`);
    return { ok: true, classpath, built: true };
  })();
  return build;
}

/** What one Kafka Streams run is given. */
export interface KafkaStreamsRun {
  readonly classpath: string;
  readonly brokers: string;
  readonly applicationId: string;
  readonly source: string;
  readonly sink: string;
  readonly guarantee: 'at_least_once' | 'exactly_once_v2';
  /** `commit.interval.ms`. */
  readonly commitIntervalMs: number;
  /** `num.stream.threads`. */
  readonly threads: number;
  /** `state.dir` (the pass-through keeps no state, but Kafka Streams locks its task folders there). */
  readonly stateDir: string;
}

/** The `java` executable: `$JAVA_HOME/bin/java`, else `java` on the PATH. */
function java(): string {
  const home = process.env['JAVA_HOME'];
  return home ? path.join(home, 'bin', 'java') : 'java';
}

/**
 * Starts `java -Xmx1g -cp … dev.weir.bench.PassThrough` with the run's settings; every other
 * Kafka Streams, producer and consumer setting stays at its default.
 */
export function startKafkaStreams(run: KafkaStreamsRun): ContestantProcess {
  return startChildProcess({
    command: java(),
    args: [
      `-Xmx${KAFKA_STREAMS_HEAP}`,
      '-cp',
      run.classpath,
      'dev.weir.bench.PassThrough',
      ...['--bootstrap-servers', run.brokers, '--application-id', run.applicationId, '--source', run.source, '--sink', run.sink],
      ...[
        '--processing-guarantee',
        run.guarantee,
        '--commit-interval-ms',
        String(run.commitIntervalMs),
        '--num-stream-threads',
        String(run.threads),
      ],
      ...['--state-dir', run.stateDir],
    ],
    cwd: repoRoot,
    env: {},
    label: `Kafka Streams ${run.applicationId}`,
  });
}
