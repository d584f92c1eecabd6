/**
 * Paces `weir dlq replay --rate <records/s>`: how long to wait before sending the next
 * records so that, from the start, no more than `rate` records per second go out. Pure: the
 * caller passes the time and does the waiting.
 *
 * @example
 * const pacer = new ReplayPacer(100, Date.now());
 * await sleep(pacer.delayBefore(50, Date.now())); // then send 50 records
 */
export class ReplayPacer {
  private nextDueMs: number;

  /**
   * @param ratePerSecond records per second; `undefined` means as fast as the broker acks
   * @param startMs when replaying started, epoch ms
   * @throws RangeError for a rate that is not a positive finite number
   */
  constructor(
    private readonly ratePerSecond: number | undefined,
    startMs: number,
  ) {
    if (ratePerSecond !== undefined && !(Number.isFinite(ratePerSecond) && ratePerSecond > 0)) {
      throw new RangeError(`rate must be a positive number of records per second (got ${ratePerSecond})`);
    }
    this.nextDueMs = startMs;
  }

  /** Records to send per produce call: about ten calls a second, 1 to 500 records each. */
  get chunkSize(): number {
    if (this.ratePerSecond === undefined) return 500;
    return Math.max(1, Math.min(500, Math.floor(this.ratePerSecond / 10)));
  }

  /**
   * The wait in ms before sending `count` more records at `nowMs` (0 when they may go now),
   * and books their time. Time lost while the caller was slow is not made up later, so the
   * rate is never exceeded, not even in bursts.
   */
  delayBefore(count: number, nowMs: number): number {
    if (this.ratePerSecond === undefined) return 0;
    const sendAt = Math.max(nowMs, this.nextDueMs);
    this.nextDueMs = sendAt + (count * 1000) / this.ratePerSecond;
    return Math.ceil(sendAt - nowMs);
  }
}
