/** Why the stream threads could not start (or a thread's worker gave up): what `weir run` exits with and prints. */
export class StreamThreadsStartError extends Error {
  /**
   * @param exitCode the process's exit code: 2 bad input, 1 otherwise
   * @param lines what `weir run` prints for the error
   */
  constructor(
    readonly exitCode: number,
    readonly lines: readonly string[],
  ) {
    super(lines[0] ?? 'a stream thread could not start');
  }
}
