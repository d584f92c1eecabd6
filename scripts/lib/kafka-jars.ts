/**
 * The Apache Kafka broker jars: `kafka/pom.xml` declares them, Maven copies them into the
 * git-ignored `kafka/lib/` (no Kafka install needed).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { LOG_TAIL_LINES, isEnoent, run, tail, type ExecResult } from './process-helpers.js';
import { kafkaPaths } from './repo-paths.js';

async function pomDigest(): Promise<string> {
  return createHash('sha256')
    .update(await readFile(kafkaPaths.pom))
    .digest('hex');
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
 * @example await ensureKafkaJars(); // then `java -cp 'kafka/lib/*' kafka.Kafka …`
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
      throw new Error('Cannot fetch the Kafka broker jars: Maven (`mvn`) is not on the PATH. Install Maven 3.x and Java 17+.', {
        cause: error,
      });
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
