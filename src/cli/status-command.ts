import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { formatTable } from './dlq/dlq-table.js';
import { openDlqTool } from './dlq/dlq-tool.js';
import { loadTopology } from '../host/load-topology.js';
import { topologyLoadTimeoutMs } from './topology-load-timeout.js';
import { EXIT, exitCodeOf, reportError } from '../host/report-error.js';
import { readTopologyStatus, type ParkedStatus, type TopologyStatus } from './topology-status.js';

const FORMATS = ['table', 'json'] as const;
type StatusFormat = (typeof FORMATS)[number];

/** Flags of `weir status` (commander's camelCase names). */
interface StatusFlags {
  readonly format: string;
  readonly applicationId?: string;
  readonly brokers?: string;
  readonly client?: string;
  readonly verbose?: boolean;
}

/**
 * `weir status <topology> [--format table|json]`: one screen for an operator — the consumer
 * group's state and members (member id, client id, host, partitions), committed offset, end
 * offset and lag of every source and retry-tier partition, the records `retry.order: 'key'`
 * sources hold back (PARKED, from their changelogs) and changelogs no processor restores any
 * more, and the dead letters by error class and processor. It only reads (nothing is
 * committed). Exit codes: 0 (also when the group does not exist: that is reported plainly), 1
 * when Kafka fails, 2 for bad input (an unknown `--format`, a topology that does not load).
 */
export function addStatusCommand(program: Command): void {
  program
    .command('status')
    .description("show a topology's consumer group, members, lag per partition and dead letters by error class")
    .argument('<topology>', 'topology file')
    .option('--format <format>', 'table | json', 'table')
    .option('--application-id <id>', 'the application.id the workers run under [env WEIR_APPLICATION_ID]')
    .option('--brokers <list>', 'Kafka bootstrap servers, host:port,... [env KAFKA_BROKERS, default 127.0.0.1:9092]')
    .option('--client <name>', 'Kafka client: kafkajs | librdkafka [env WEIR_KAFKA_CLIENT, default kafkajs]')
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: StatusFlags) => {
      process.exitCode = await status(file, flags);
    });
}

async function status(file: string, flags: StatusFlags): Promise<number> {
  const verbose = flags.verbose === true;
  if (!(FORMATS as readonly string[]).includes(flags.format)) {
    reportError(new ConfigError('--format', `must be one of ${FORMATS.join(', ')} (got ${JSON.stringify(flags.format)})`), false);
    return EXIT.usage;
  }
  let tool;
  let topology;
  try {
    const applicationId = flags.applicationId ?? process.env['WEIR_APPLICATION_ID'];
    topology = await loadTopology(file, applicationId ? { applicationId } : {}, { timeoutMs: topologyLoadTimeoutMs() });
    tool = await openDlqTool(flags, process.env);
  } catch (error) {
    reportError(error, verbose);
    return exitCodeOf(error);
  }
  try {
    const report = await readTopologyStatus(topology, tool.client, tool.admin, () => tool.throwawayGroup('status'));
    const format = flags.format as StatusFormat;
    process.stdout.write(format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
    if (format === 'json' && !report.groupExists) process.stderr.write(`weir: ${noGroup(report)}\n`);
    return EXIT.ok;
  } catch (error) {
    reportError(error, verbose);
    return EXIT.failure;
  } finally {
    await tool.close();
  }
}

const noGroup = (s: TopologyStatus): string =>
  `consumer group '${s.applicationId}' does not exist: no worker of this topology has joined it yet (or its offsets expired)`;

/** The PARKED cell of a partition: its parked records, `-` when it keeps no key order, `error` when unreadable. */
const parkedCell = (p: ParkedStatus | null): string => (p === null ? '-' : 'error' in p ? 'error' : String(p.records));

function formatStatus(s: TopologyStatus): string {
  if (!s.groupExists) return `${noGroup(s)}\n`;
  const parked = s.totalParked === null ? '' : `, parked ${s.totalParked}`;
  // Records parked under a processor that no longer keeps key order: nobody processes them (listed below).
  const orphaned = s.orphanChangelogs.reduce((n, o) => n + o.records, 0);
  const unrestored = orphaned === 0 ? '' : `, ${orphaned} parked record(s) no processor restores`;
  const lines = [
    `consumer group ${s.applicationId}: ${s.state}, ${s.members.length} member(s), total lag ${s.totalLag}${parked}${unrestored}`,
    '',
  ];
  const withParked = s.totalParked !== null;
  lines.push(
    s.members.length === 0
      ? 'Members: none'
      : formatTable(
          ['MEMBER-ID', 'CLIENT-ID', 'HOST', 'PARTITIONS'],
          s.members.map((m) => [m.memberId, m.clientId, m.host, m.partitions.join(',') || '-']),
        ),
    '',
    formatTable(
      ['TOPIC', 'KIND', 'PARTITION', 'COMMITTED', 'END', 'LAG', ...(withParked ? ['PARKED'] : []), 'MEMBER-ID'],
      s.partitions.map((p) => [
        p.topic,
        p.kind,
        String(p.partition),
        p.committed === null ? '-' : String(p.committed),
        String(p.end),
        String(p.lag),
        ...(withParked ? [parkedCell(p.parked)] : []),
        p.memberId ?? '-',
      ]),
    ),
  );
  for (const p of s.partitions)
    if (p.parked !== null && 'error' in p.parked)
      lines.push('', `${p.topic}-${p.partition}: its parked records cannot be read back; its task does not start: ${p.parked.error}`);
  for (const o of s.orphanChangelogs)
    lines.push(
      '',
      `Parked records no processor restores: ${o.topic} holds ${o.records} record(s) of ${o.keys} key(s)` +
        (o.unreadable > 0 ? ` (and ${o.unreadable} partition(s) it cannot read back)` : '') +
        `. They are not processed: put retry order 'key' back on processor '${o.processor}' (under that name) until they are decided.`,
    );
  for (const d of s.deadLetters) {
    lines.push('');
    if (!d.exists) lines.push(`Dead letters in ${d.topic}: the topic does not exist yet`);
    else if (d.total === 0) lines.push(`Dead letters in ${d.topic}: none`);
    else {
      lines.push(`Dead letters in ${d.topic}: ${d.total}`);
      lines.push(
        formatTable(
          ['ERROR-CLASS', 'PROCESSOR', 'RECORDS'],
          d.counts.map((c) => [c.errorClass, c.processor, String(c.records)]),
        ),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
