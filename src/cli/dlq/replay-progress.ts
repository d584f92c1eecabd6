import cliProgress from 'cli-progress';

/** Running counts of a replay. */
export interface ReplayCounts {
  /** DLQ records read. */
  readonly scanned: number;
  /** Records re-published (dry run: that would be). */
  readonly replayed: number;
  /** Records refused (replay limit, no original topic, missing target). */
  readonly refused: number;
  /** Records the filters left out. */
  readonly skipped: number;
}

/**
 * Shows a replay's progress on stderr. Progress is measured in offsets of the DLQ topic, as
 * its total is: transaction markers hold offsets too, so records alone would stop short of it.
 */
export interface ReplayProgress {
  /** @param offsets the offsets passed so far (`ReplayPosition.passed()`), at most the total */
  update(counts: ReplayCounts, offsets: number): void;
  /** Final update; removes the bar's timers. `offsets` is the total when the read reached the end of its ranges. */
  stop(counts: ReplayCounts, offsets: number): void;
}

/** Options of {@link createReplayProgress}. */
export interface ReplayProgressOptions {
  readonly label: string;
  /** DLQ offsets to pass (the plan's ranges: records and transaction markers). */
  readonly total: number;
  readonly stream?: NodeJS.WriteStream;
  /** Plain lines at most this often, ms (default 2 000). */
  readonly plainIntervalMs?: number;
  /** A dry run: counts say "would replay". */
  readonly dryRun?: boolean;
}

const payload = (c: ReplayCounts) => ({ scanned: c.scanned, replayed: c.replayed, refused: c.refused, skipped: c.skipped });

function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${Math.ceil(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
}

/**
 * A progress bar with counts and ETA (cli-progress) when the stream is a terminal; otherwise
 * (CI, pipes, logs) a plain line every few seconds and one at the end.
 */
export function createReplayProgress(options: ReplayProgressOptions): ReplayProgress {
  const stream = options.stream ?? process.stderr;
  const replayed = options.dryRun ? 'would replay' : 'replayed';
  if (stream.isTTY === true) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${options.label} |{bar}| {percentage}% | {value}/{total} offsets | scanned {scanned} | ${replayed} {replayed} | refused {refused} | skipped {skipped} | ETA {eta_formatted}`,
        stream,
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(options.total, 0, payload({ scanned: 0, replayed: 0, refused: 0, skipped: 0 }));
    return {
      update: (c, offsets) => bar.update(offsets, payload(c)),
      stop: (c, offsets) => {
        bar.update(offsets, payload(c));
        bar.stop();
      },
    };
  }
  const started = Date.now();
  const interval = options.plainIntervalMs ?? 2_000;
  let lastLineAt = 0;
  let lastLine = '';
  const line = (c: ReplayCounts, offsets: number): void => {
    const elapsed = (Date.now() - started) / 1000;
    const eta = offsets === 0 ? Number.NaN : (elapsed / offsets) * (options.total - offsets);
    const pct = options.total === 0 ? 100 : Math.floor((offsets / options.total) * 100);
    const text = `${options.label}: ${offsets}/${options.total} offsets (${pct}%), scanned ${c.scanned}, ${replayed} ${c.replayed}, refused ${c.refused}, skipped ${c.skipped}, ETA ${offsets >= options.total ? '0s' : formatEta(eta)}\n`;
    // The last line is not printed twice (a replay done by its first update, then its stop).
    if (text === lastLine) return;
    lastLine = text;
    stream.write(text);
  };
  return {
    update: (c, offsets) => {
      if (Date.now() - lastLineAt < interval) return;
      lastLineAt = Date.now();
      line(c, offsets);
    },
    stop: line,
  };
}
