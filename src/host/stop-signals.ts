import type { Logger } from 'pino';
import { EXIT } from './report-error.js';

/**
 * SIGINT and SIGTERM for `weir run`, watched from the moment the command starts — while the
 * topology file loads too, so a stop that comes early (a deploy rolled back, a supervisor that
 * gave up) still ends in exit 0 and not in death by the signal. The first signal asks for a
 * graceful shutdown (`first` settles with its name); a second one exits at once with exit code 1,
 * as most servers do.
 */
export class StopSignals {
  /** Settles with the first signal's name. */
  readonly first: Promise<string>;
  /** The first signal, once it came. */
  received: string | undefined;
  private logger: Pick<Logger, 'warn'> | undefined;
  private readonly handler: (signal: NodeJS.Signals) => void;

  constructor() {
    let resolve!: (signal: string) => void;
    this.first = new Promise((r) => (resolve = r));
    this.handler = (signal) => {
      if (this.received !== undefined) {
        if (this.logger) this.logger.warn({ signal }, 'second signal: exiting now, without a clean commit');
        else process.stderr.write(`weir: second ${signal}: exiting now\n`);
        process.exit(EXIT.failure);
      }
      this.received = signal;
      resolve(signal);
    };
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  /** Where the second signal's message goes once the worker's logger exists. */
  useLogger(logger: Pick<Logger, 'warn'>): void {
    this.logger = logger;
  }
}
