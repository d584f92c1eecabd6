/** Options of an {@link InstanceConflictGuard}. Times in ms. */
export interface InstanceConflictGuardOptions {
  /** A worker fenced this soon after it started took an id another worker runs with. */
  readonly youngForMs: number;
  /** A worker fenced this often within `windowMs` shares its id with another running worker. */
  readonly maxFences: number;
  readonly windowMs: number;
}

/** What a worker does when its static member was fenced. */
export type FenceVerdict = 'rejoin' | 'conflict';

/**
 * Decides what a static member (`group.instance.id`) does when the group coordinator fences it
 * — another consumer joined with the same id and took its place (KIP-345: the newest wins).
 * Kafka has no way to ask whether the other one is a restart of this worker or a second worker
 * started by mistake, so weir tells them apart by age:
 *
 * - a worker fenced soon after it first joined (within `youngForMs`; before it joined, after
 *   it started) joined with an id that a running worker had: it is the mistake, and stops with
 *   a `GroupInstanceConflictError`;
 * - an older worker rejoins, which fences the newcomer in turn (and the newcomer, being young,
 *   stops); a restarted worker whose predecessor is dead is never fenced at all;
 * - a worker fenced `maxFences` times within `windowMs` stops too: two old workers (one had
 *   stalled past the other's start) would otherwise take the id from each other forever.
 *
 * Two workers started with the same id within `youngForMs` of each other are both young: the
 * one fenced first — the earlier — stops, and the later keeps the id.
 */
export class InstanceConflictGuard {
  private readonly fences: number[] = [];
  /** When the worker first joined its group (epoch ms): its age in the group counts from there. */
  private joinedAtMs: number | undefined;

  /**
   * The guard of a worker started at `startedAtMs` (epoch ms), sized to its group timings (ms).
   * The newcomer is fenced back within about a heartbeat and a rejoin; the incumbent, fenced
   * first, must be older than that to rejoin rather than stop (one restarted that recently may
   * take itself for the newcomer: it stops, and the newcomer keeps the id). So `youngForMs` is
   * the smaller of two session timeouts and three heartbeats + 10 s; three fences in 10 minutes
   * are a conflict.
   */
  static forGroupTimings(
    startedAtMs: number,
    timings: { readonly sessionTimeoutMs: number; readonly heartbeatIntervalMs: number },
  ): InstanceConflictGuard {
    return new InstanceConflictGuard(startedAtMs, {
      youngForMs: Math.min(2 * timings.sessionTimeoutMs, 3 * timings.heartbeatIntervalMs + 10_000),
      maxFences: 3,
      windowMs: 600_000,
    });
  }

  constructor(
    private readonly startedAtMs: number,
    private readonly options: InstanceConflictGuardOptions,
  ) {}

  /**
   * The member joined its group (an assignment) at `nowMs`. Only the first join counts: the
   * worker's age is measured from it rather than from its start, so a slow start (loading the
   * topology, connecting, a long join on a loaded machine) does not use up the newcomer's
   * window before it even took the id.
   */
  joined(nowMs: number): void {
    this.joinedAtMs ??= nowMs;
  }

  /** The member was fenced at `nowMs`. */
  fenced(nowMs: number): FenceVerdict {
    if (nowMs - (this.joinedAtMs ?? this.startedAtMs) < this.options.youngForMs) return 'conflict';
    this.fences.push(nowMs);
    while (this.fences.length > 0 && nowMs - this.fences[0]! > this.options.windowMs) this.fences.shift();
    return this.fences.length >= this.options.maxFences ? 'conflict' : 'rejoin';
  }
}
