import { ClientMismatchError, ConfigError, GroupInstanceConflictError, TopologyError, TopologyLoadError, WeirError } from '../errors.js';

/** Exit codes of the weir CLI. */
export const EXIT = Object.freeze({
  ok: 0,
  /** A runtime failure (a server unreachable, a missing source topic, a shutdown that timed out). */
  failure: 1,
  /**
   * Bad input: a bad flag or config value (a `group.instance.id` another worker runs with, a
   * `--client` other than the one the group's members run), or a topology file that does not
   * load or compile.
   */
  usage: 2,
});

/** The exit code for an error: 2 for bad input (config, topology), 1 for everything else. */
export function exitCodeOf(error: unknown): number {
  return error instanceof ConfigError ||
    error instanceof TopologyError ||
    error instanceof TopologyLoadError ||
    error instanceof GroupInstanceConflictError ||
    error instanceof ClientMismatchError
    ? EXIT.usage
    : EXIT.failure;
}

/**
 * Prints an error for a person: `weir: <message>` (with the error code for weir errors), and
 * the stack only when `verbose`.
 */
export function reportError(
  error: unknown,
  verbose: boolean,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): void {
  const message = error instanceof Error ? error.message : String(error);
  // The code goes at the end of the first line: a message that lists problems line by line
  // would otherwise end with it, as if it belonged to the last problem.
  const code = error instanceof WeirError ? ` [${error.code}]` : '';
  const newline = message.indexOf('\n');
  write(newline < 0 ? `weir: ${message}${code}` : `weir: ${message.slice(0, newline)}${code}${message.slice(newline)}`);
  if (verbose && error instanceof Error) {
    write(error.stack ?? '');
    if (error.cause instanceof Error) write(`caused by: ${error.cause.stack ?? error.cause.message}`);
  } else if (!(error instanceof WeirError)) {
    write('(run with --verbose for the stack trace)');
  }
}
