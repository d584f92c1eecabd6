import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { addDescribeCommands } from './describe-command.js';
import { addDlqCommands } from './dlq/dlq-command.js';
import { EXIT } from '../host/report-error.js';
import { addRunCommand } from './run-command.js';
import { addStatusCommand } from './status-command.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The `weir` command line (commander). */
export function buildProgram(): Command {
  const program = new Command('weir')
    .description('Kafka Streams-style stream processing for TypeScript')
    .version(version)
    // One line and a hint after a usage error, not the whole help (inherited by every subcommand).
    .showHelpAfterError("(add --help to see the command's arguments and options)")
    .exitOverride();
  addRunCommand(program);
  addDescribeCommands(program);
  addStatusCommand(program);
  addDlqCommands(program);
  // A topology file may leave a handle open (a timer, a connection pool it created at import):
  // the commands that only load it end once their output is written, instead of hanging.
  program.hook('postAction', async (_program, action) => {
    if (LOAD_ONLY_COMMANDS.has(action.name())) await exitWhenWritten();
  });
  return program;
}

/** Commands that load a topology file and end: nothing of weir runs after their output. */
const LOAD_ONLY_COMMANDS = new Set(['describe', 'validate', 'status']);

/** Exits with `process.exitCode` once stdout and stderr have written what they hold. */
async function exitWhenWritten(): Promise<never> {
  for (const stream of [process.stdout, process.stderr]) await new Promise<void>((resolve) => stream.write('', () => resolve()));
  process.exit(process.exitCode ?? EXIT.ok);
}

/**
 * Runs the CLI; bad usage exits 2. A reader that closes stdout or stderr early (`weir status --format
 * json | head`) ends the command quietly, as `cat` would, rather than with an EPIPE stack.
 */
export async function main(argv: readonly string[]): Promise<void> {
  // stderr too: `weir … 2>&1 | head` closes both, and a note written after the output must not
  // turn a complete run into a crash.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
      throw error;
    });
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    throw error;
  }
}
