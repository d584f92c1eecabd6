/**
 * One timed run of one contestant on a workload's input topic: its own sink topic and consumer
 * group, timed from its "started" line (it has joined the group) until the run is done (see
 * sink-progress.ts), then stopped, its sink counted, and its topics, group and scratch folder
 * removed. A failure is returned as an outcome, never thrown: one broken run does not end the
 * benchmark.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import { createTopics } from '../scripts/lib/topic-io.js';
import { timeRun } from './bench-tools.js';
import type { ContestantProcess } from './contestant-process.js';
import type { Contestant, Prerequisites } from './contestants.js';
import type { RunOutcome } from './report.js';
import { countCommittedRecords, doneCondition, highWatermarkSum } from './sink-progress.js';

/** Where and how much one run processes. */
export interface RunTarget {
  readonly brokers: string;
  readonly source: string;
  readonly partitions: number;
  /** Input records (the source's end offsets summed). */
  readonly records: number;
  /** Unique prefix of this run's sink topic and group. */
  readonly name: string;
  readonly rep: number;
  /** Count the sink read_committed after an exactly_once run. */
  readonly verify: boolean;
  /** Longest timed window, ms. */
  readonly timeoutMs: number;
  /** The local broker's process, to measure its CPU over the window too (absent: a remote broker). */
  readonly brokerPid?: number;
}

/**
 * Runs `contestant` once on `target`.
 *
 * @returns the measurement and the sink's record count, or the failure
 */
export async function runOnce(kafka: Kafka, contestant: Contestant, prerequisites: Prerequisites, target: RunTarget): Promise<RunOutcome> {
  const group = target.name;
  const sink = `${target.name}.out`;
  const admin = kafka.admin();
  await admin.connect();
  const scratchDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-'));
  let proc: ContestantProcess | undefined;
  try {
    const topics = [sink, ...(contestant.ownTopics?.({ sink }) ?? [])];
    await createTopics(
      admin,
      topics.map((topic) => ({ topic, partitions: target.partitions })),
    );
    proc = contestant.start(
      { brokers: target.brokers, source: target.source, sink, group, scratchDir, partitions: target.partitions },
      prerequisites,
    );
    await proc.started;
    const m = await timeRun(
      proc.child,
      target.records,
      doneCondition(admin, contestant.guarantee, { source: target.source, sink, group }, target.records),
      contestant.name,
      target.timeoutMs,
      target.brokerPid,
    );
    await proc.stop();
    const sinkRecords =
      contestant.guarantee === 'at_least_once'
        ? await highWatermarkSum(admin, sink)
        : target.verify
          ? await countCommittedRecords(kafka, sink, 120_000)
          : undefined;
    return { ok: true, rep: target.rep, m, ...(sinkRecords === undefined ? {} : { sinkRecords }) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`bench: ${contestant.name} failed: ${message}${proc ? `\n--- its last output ---\n${proc.outputTail()}\n---` : ''}`);
    return { ok: false, rep: target.rep, error: message };
  } finally {
    await proc?.stop().catch(() => undefined);
    await admin.deleteGroups([group]).catch(() => undefined);
    // The sink, and whatever else the contestant created under its name (weir's DLQ topic).
    const own = await admin.listTopics().then(
      (all) => all.filter((t) => t.startsWith(`${target.name}.`)),
      () => [sink],
    );
    await admin.deleteTopics({ topics: own }).catch(() => undefined);
    await admin.disconnect();
    await rm(scratchDir, { recursive: true, force: true });
  }
}
