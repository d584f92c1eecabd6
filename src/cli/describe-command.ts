import type { Command } from 'commander';
import { loadCompileOverrides } from '../config/compile-overrides.js';
import { ConfigError } from '../errors.js';
import type { CompileOverrides } from '../topology/compile.js';
import { describeTopology, type DescribeFormat } from '../topology/describe-topology.js';
import { loadTopology } from '../host/load-topology.js';
import { topologyLoadTimeoutMs } from './topology-load-timeout.js';
import { EXIT, exitCodeOf, reportError } from '../host/report-error.js';

const FORMATS: readonly DescribeFormat[] = ['text', 'json', 'mermaid'];

/** Flags of `weir describe` and `weir validate` (commander's camelCase names). */
interface TopologyFlags {
  readonly applicationId?: string;
  readonly guarantee?: string;
  readonly commitIntervalMs?: string;
  readonly verbose?: boolean;
}

/** What `weir run` would override of the topology file's own settings (flags over env). */
function overridesOf(flags: TopologyFlags): CompileOverrides {
  const { applicationId, guarantee, commitIntervalMs } = flags;
  return loadCompileOverrides({ applicationId, processingGuarantee: guarantee, commitIntervalMs }, process.env);
}

/** Adds the options that `weir run` also takes and that change the compiled topology. */
function withRunOverrides(command: Command, verb: string): Command {
  return command
    .option(
      '--application-id <id>',
      `${verb} under this application.id, as \`weir run --application-id\` runs it [env WEIR_APPLICATION_ID]`,
    )
    .option(
      '--guarantee <guarantee>',
      'processing.guarantee: at_least_once | exactly_once, as `weir run` takes it [env WEIR_PROCESSING_GUARANTEE]',
    )
    .option('--commit-interval-ms <ms>', 'commit.interval.ms, as `weir run` takes it [env WEIR_COMMIT_INTERVAL_MS]');
}

/**
 * `weir describe <topology>` prints the compiled topology (text like Kafka Streams'
 * TopologyDescription, JSON or Mermaid); `weir validate <topology>` only compiles it.
 * Both exit 2 naming the file, node and problem when it does not load or compile.
 */
export function addDescribeCommands(program: Command): void {
  withRunOverrides(
    program
      .command('describe')
      .description("print a topology's nodes and edges, retry and DLQ edges included")
      .argument('<topology>', 'topology file')
      .option('--format <format>', 'text | json | mermaid', 'text'),
    'describe',
  )
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: TopologyFlags & { format: string }) => {
      if (!FORMATS.includes(flags.format as DescribeFormat)) {
        reportError(new ConfigError('--format', `must be one of ${FORMATS.join(', ')} (got ${JSON.stringify(flags.format)})`), false);
        process.exitCode = EXIT.usage;
        return;
      }
      try {
        process.stdout.write(
          `${describeTopology(await loadTopology(file, overridesOf(flags), { timeoutMs: topologyLoadTimeoutMs() }), flags.format as DescribeFormat)}\n`,
        );
      } catch (error) {
        reportError(error, flags.verbose === true);
        process.exitCode = exitCodeOf(error);
      }
    });

  withRunOverrides(
    program
      .command('validate')
      .description('load and compile a topology file; exit 2 with the node and problem if it is invalid')
      .argument('<topology>', 'topology file'),
    'validate',
  )
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: TopologyFlags) => {
      try {
        const topology = await loadTopology(file, overridesOf(flags), { timeoutMs: topologyLoadTimeoutMs() });
        process.stdout.write(
          `${file}: ok (application.id ${topology.applicationId}, ${topology.subtopologies.size} sub-topolog${topology.subtopologies.size === 1 ? 'y' : 'ies'})\n`,
        );
      } catch (error) {
        reportError(error, flags.verbose === true);
        process.exitCode = exitCodeOf(error);
      }
    });
}
