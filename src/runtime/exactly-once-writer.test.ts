/**
 * ExactlyOnceWriter against a scripted transactional producer: which failures abort and
 * re-run, which reset the (stuck) producer and read the outcome back, and when the task is a
 * zombie. The broker side is a small fake: committed offsets change only on a commit.
 */
import { describe, expect, it } from 'vitest';
import { ProducerFencedError } from '../errors.js';
import type { OutputRecord, TopicPartitionOffset } from '../record/record-types.js';
import { ExactlyOnceWriter } from './exactly-once-writer.js';
import type { OffsetReader, TransactionalProducer } from './ports.js';
import { UnitOfWork } from './unit-of-work.js';

type Step = 'begin' | 'send' | 'sendOffsets' | 'commit' | 'abort' | 'reset';

/** One fault: fail `step` (before it takes effect, or after: the broker did it, the reply was lost). */
interface Fault {
  readonly step: Step;
  readonly error: unknown;
  readonly after?: boolean;
}

class ScriptedProducer implements TransactionalProducer, OffsetReader {
  readonly transactionalId = 'app-in-0';
  readonly calls: Step[] = [];
  readonly faults: Fault[] = [];
  /** The group's committed offset, as the broker has it, and its metadata. */
  committed: number | undefined;
  metadata: string | undefined;
  /** Outputs of committed transactions. */
  readonly visible: OutputRecord[] = [];
  private pending: { outputs: OutputRecord[]; offset?: number; metadata?: string } | null = null;

  begin = () => this.step('begin', () => void (this.pending = { outputs: [] }));
  send = (records: readonly OutputRecord[]) => this.step('send', () => this.pending!.outputs.push(...records));
  sendOffsets = (_group: string, offsets: readonly TopicPartitionOffset[]) =>
    this.step('sendOffsets', () => void Object.assign(this.pending!, { offset: offsets[0]!.offset, metadata: offsets[0]!.metadata }));
  commit = () =>
    this.step('commit', () => {
      this.visible.push(...this.pending!.outputs);
      this.committed = this.pending!.offset;
      this.metadata = this.pending!.metadata;
      this.pending = null;
    });
  abort = () => this.step('abort', () => void (this.pending = null));
  /** InitProducerId: the open transaction (if any) is aborted. */
  reset = () => this.step('reset', () => void (this.pending = null));
  committedOffset = async () => this.committed;
  committedPosition = async () => (this.committed === undefined ? undefined : { offset: this.committed, metadata: this.metadata });

  private async step(step: Step, effect: () => void): Promise<void> {
    this.calls.push(step);
    const i = this.faults.findIndex((f) => f.step === step);
    const fault = i >= 0 ? this.faults.splice(i, 1)[0] : undefined;
    if (fault && !fault.after) throw fault.error;
    effect();
    if (fault) throw fault.error;
  }
}

function unitOf(n: number): UnitOfWork {
  const unit = new UnitOfWork();
  for (let i = 0; i < n; i++) unit.add([{ topic: 'out', key: null, value: Buffer.from(String(i)), headers: {} }], null);
  return unit;
}

function setup(startOffset = 0) {
  const p = new ScriptedProducer();
  if (startOffset > 0) p.committed = startOffset;
  const writer = new ExactlyOnceWriter('in', 0, 'app', p, p, startOffset);
  return { p, writer };
}

const down = new Error('connection closed');

describe('ExactlyOnceWriter', () => {
  it('writes outputs and offsets in one transaction: begin → send → sendOffsets → commit', async () => {
    const { p, writer } = setup();
    expect(await writer.write(unitOf(2), 2, true)).toEqual({ kind: 'durable', committed: true });
    expect(p.calls).toEqual(['begin', 'send', 'sendOffsets', 'commit']);
    expect(p.visible).toHaveLength(2);
    expect(writer.committedOffset).toBe(2);
  });

  it('does nothing before the commit interval is due', async () => {
    const { p, writer } = setup();
    expect(await writer.write(unitOf(2), 2, false)).toEqual({ kind: 'deferred' });
    expect(p.calls).toEqual([]);
  });

  it('aborts a transaction whose send failed and has the task re-run the unit', async () => {
    const { p, writer } = setup();
    p.faults.push({ step: 'send', error: down });
    expect(await writer.write(unitOf(2), 2, true)).toMatchObject({ kind: 'rewind', error: down });
    expect(p.calls).toEqual(['begin', 'send', 'abort']);
    expect(await writer.write(unitOf(2), 2, true)).toEqual({ kind: 'durable', committed: true });
    expect(p.visible).toHaveLength(2);
  });

  it('resets a producer stuck in ABORTING, reads the offset back and re-runs the unit', async () => {
    const { p, writer } = setup(5);
    p.faults.push({ step: 'sendOffsets', error: down }, { step: 'abort', error: down });
    expect(await writer.write(unitOf(1), 6, true)).toMatchObject({ kind: 'rewind' });
    expect(p.calls).toEqual(['begin', 'send', 'sendOffsets', 'abort', 'reset']);
    expect(p.visible).toEqual([]);
  });

  it('resets a producer whose begin failed (stuck after an earlier failure)', async () => {
    const { p, writer } = setup();
    p.faults.push({ step: 'begin', error: new Error('Transaction state exception: Invalid state transition COMMITTING → TRANSACTING') });
    expect(await writer.write(unitOf(1), 1, true)).toMatchObject({ kind: 'rewind' });
    expect(p.calls).toEqual(['begin', 'reset']);
  });

  it('resolves a commit whose reply was lost as committed when the offset reads back as the transaction’s', async () => {
    const { p, writer } = setup();
    p.faults.push({ step: 'commit', error: down, after: true });
    expect(await writer.write(unitOf(3), 3, true)).toEqual({ kind: 'durable', committed: true });
    expect(p.calls).toEqual(['begin', 'send', 'sendOffsets', 'commit', 'reset']);
    expect(writer.committedOffset).toBe(3);
    expect(p.visible).toHaveLength(3);
  });

  it('resolves a failed commit as aborted when the offset reads back unchanged: re-run, nothing twice', async () => {
    const { p, writer } = setup();
    p.faults.push({ step: 'commit', error: down });
    expect(await writer.write(unitOf(3), 3, true)).toMatchObject({ kind: 'rewind' });
    expect(p.visible).toEqual([]);
    expect(await writer.write(unitOf(3), 3, true)).toEqual({ kind: 'durable', committed: true });
    expect(p.visible).toHaveLength(3);
  });

  describe("a unit that does not move the offset (order 'key': only parked records' outcomes)", () => {
    it('resolves a commit whose reply was lost as committed by its token (the offset metadata)', async () => {
      const { p, writer } = setup(5);
      p.faults.push({ step: 'commit', error: down, after: true });
      expect(await writer.write(unitOf(2), 5, true)).toEqual({ kind: 'durable', committed: true });
      expect(p.metadata).toMatch(/^weir:[0-9a-f]{8}:1$/);
      expect(p.visible).toHaveLength(2);
    });

    it('resolves a failed commit as aborted when the token read back is an earlier one: re-run, nothing twice', async () => {
      const { p, writer } = setup(4);
      expect(await writer.write(unitOf(1), 5, true)).toEqual({ kind: 'durable', committed: true });
      p.faults.push({ step: 'commit', error: down });
      expect(await writer.write(unitOf(2), 5, true)).toMatchObject({ kind: 'rewind' });
      expect(p.visible).toHaveLength(1);
      expect(await writer.write(unitOf(2), 5, true)).toEqual({ kind: 'durable', committed: true });
      expect(p.visible).toHaveLength(3);
    });
  });

  it('keeps a failed commit in doubt while the reset fails, and resolves it on the next write', async () => {
    const { p, writer } = setup();
    p.faults.push({ step: 'commit', error: down, after: true }, { step: 'reset', error: down });
    expect(await writer.write(unitOf(2), 2, true)).toEqual({ kind: 'failed', port: 'transaction', error: down });
    // The next write (the same unit: the task neither re-ran nor moved on) resolves the doubt first.
    expect(await writer.write(unitOf(2), 2, true)).toEqual({ kind: 'durable', committed: true });
    expect(p.calls.filter((c) => c === 'commit')).toHaveLength(1);
    expect(p.visible).toHaveLength(2);
  });

  it('closes as fenced when the offset reads back as another instance’s (this task is a zombie)', async () => {
    const { p, writer } = setup(10);
    p.faults.push({ step: 'commit', error: down });
    const realReset = p.reset;
    p.reset = async () => {
      await realReset();
      p.committed = 25; // the partition's new owner committed meanwhile
    };
    const result = await writer.write(unitOf(2), 12, true);
    expect(result).toMatchObject({ kind: 'fenced' });
    const error = result.kind === 'fenced' ? result.error : undefined;
    expect(error).toBeInstanceOf(ProducerFencedError);
    expect(String((error as Error).cause)).toMatch(/committed offset of in-0 is 25, not 10/);
  });

  it.each(['begin', 'send', 'sendOffsets', 'commit', 'abort'] as const)('closes as fenced when %s is fenced', async (step) => {
    const { p, writer } = setup();
    const fencedError = new ProducerFencedError('app-in-0');
    if (step === 'abort') p.faults.push({ step: 'send', error: down });
    p.faults.push({ step, error: fencedError });
    expect(await writer.write(unitOf(1), 1, true)).toEqual({ kind: 'fenced', error: fencedError });
    expect(p.calls).not.toContain('reset');
    expect(p.visible).toEqual([]);
  });
});
