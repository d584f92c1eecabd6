/**
 * The transactional ids the broker knows, through the Java Admin client's `listTransactions`
 * (KIP-664) — neither kafkajs nor librdkafka offers it — run from the broker jars Maven fetched
 * (`kafka/lib`) with Java's single-file source launcher (scripts/java/ListTransactions.java).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { javaExecutable } from './broker-storage.js';
import { kafkaPaths, repoRoot } from './repo-paths.js';

/** One transactional id, as the transaction coordinator lists it. */
export interface TransactionListing {
  readonly transactionalId: string;
  /** `Ongoing`, `PrepareCommit`, `CompleteCommit`, `CompleteAbort`, `Empty`, … */
  readonly state: string;
  readonly producerId: number;
}

/**
 * @param brokers bootstrap servers, `host:port,…`
 * @throws Error with Java's output when the listing fails
 */
export async function listTransactions(brokers: string): Promise<TransactionListing[]> {
  const java = javaExecutable();
  const source = path.join(repoRoot, 'scripts', 'java', 'ListTransactions.java');
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(
      java,
      ['-cp', path.join(kafkaPaths.lib, '*'), source, brokers],
      { cwd: repoRoot, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, out, err) => (error ? reject(new Error(`listTransactions failed: ${error.message}\n${err}`)) : resolve(out)),
    ),
  );
  return stdout
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((fields) => fields.length === 3)
    .map(([transactionalId, state, producerId]) => ({ transactionalId: transactionalId!, state: state!, producerId: Number(producerId) }));
}
