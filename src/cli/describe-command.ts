import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import type { CompileOverrides } from '../topology/compile.js';
import { describeTopology, type DescribeFormat } from '../topology/describe-topology.js';
import { loadTopology } from '../host/load-topology.js';
import { topologyLoadTimeoutMs } from './topology-load-timeout.js';
import { EXIT, exitCodeOf, reportError } from '../host/report-error.js';

const FORMATS: readonly DescribeFormat[] = ['text', 'json', 'mermaid'];

/** The application id `weir run` would use: `--application-id`, else WEIR_APPLICATION_ID. */
function overridesOf(flags: { applicationId?: string }): CompileOverrides {
  const applicationId = flags.applicationId ?? process.env['WEIR_APPLICATION_ID'];
  return applicationId ? { applicationId } : {};
}

/**
 * `weir describe <topology>` prints the compiled topology (text like Kafka Streams'
 * TopologyDescription, JSON or Mermaid); `weir validate <topology>` only compiles it.
 * Both exit 2 naming the file, node and problem when it does not load or compile.
 */
export function addDescribeCommands(program: Command): void {
  program
    .command('describe')
    .description("print a topology's nodes and edges, retry and DLQ edges included")
    .argument('<topology>', 'topology file')
    .option('--format <format>', 'text | json | mermaid', 'text')
    .option('--application-id <id>', 'describe under this application.id, as `weir run --application-id` runs it [env WEIR_APPLICATION_ID]')
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: { format: string; applicationId?: string; verbose?: boolean }) => {
      if (!FORMATS.includes(flags.format as DescribeFormat)) {
        reportError(new ConfigError('--format', `must be one of ${FORMATS.join(', ')} (got '${flags.format}')`), false);
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

  program
    .command('validate')
    .description('load and compile a topology file; exit 2 with the node and problem if it is invalid')
    .argument('<topology>', 'topology file')
    .option('--application-id <id>', 'validate under this application.id [env WEIR_APPLICATION_ID]')
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: { applicationId?: string; verbose?: boolean }) => {
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
