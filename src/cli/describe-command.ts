import type { Command } from 'commander';
import { describeTopology, type DescribeFormat } from '../topology/describe-topology.js';
import { loadTopology } from './load-topology.js';
import { EXIT, exitCodeOf, reportError } from './report-error.js';

const FORMATS: readonly DescribeFormat[] = ['text', 'json', 'mermaid'];

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
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: { format: string; verbose?: boolean }) => {
      if (!FORMATS.includes(flags.format as DescribeFormat)) {
        reportError(new Error(`--format must be one of ${FORMATS.join(', ')} (got '${flags.format}')`), false);
        process.exitCode = EXIT.usage;
        return;
      }
      try {
        process.stdout.write(`${describeTopology(await loadTopology(file), flags.format as DescribeFormat)}\n`);
      } catch (error) {
        reportError(error, flags.verbose === true);
        process.exitCode = exitCodeOf(error);
      }
    });

  program
    .command('validate')
    .description('load and compile a topology file; exit 2 with the node and problem if it is invalid')
    .argument('<topology>', 'topology file')
    .option('--verbose', 'print stack traces of errors')
    .action(async (file: string, flags: { verbose?: boolean }) => {
      try {
        const topology = await loadTopology(file);
        process.stdout.write(`${file}: ok (application.id ${topology.applicationId}, ${topology.subtopologies.size} sub-topolog${topology.subtopologies.size === 1 ? 'y' : 'ies'})\n`);
      } catch (error) {
        reportError(error, flags.verbose === true);
        process.exitCode = exitCodeOf(error);
      }
    });
}
