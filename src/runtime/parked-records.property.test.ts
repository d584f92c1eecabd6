import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FRESH_HISTORY } from '../failure/retry-history.js';
import type { InputRecord, OutputRecord } from '../record/record-types.js';
import { propertyRuns } from '../testing/property-runs.js';
import { parkedChangelogRecord, parkedTombstone, readParkedChangelog } from './parked-changelog.js';
import { parkedKeyId, ParkedRecords, type ParkedRecord } from './parked-records.js';

/**
 * A model of one `order: 'key'` task over ParkedRecords and its changelog: records of a few keys
 * arrive in offset order, each succeeds or fails per attempt as its plan says; a failed record
 * parks its key, later records of a parked key follow it; due heads are attempted as the clock
 * moves. The work is cut into units: a unit commits (its changelog records and outputs become
 * visible) or aborts (the snapshot of its start comes back and it runs again), and a crash
 * rebuilds the task from the committed changelog alone.
 */
const CHANGELOG = { topic: 'app.step.parked', partition: 0 };
const RUNS = propertyRuns();

/** One input record: its key (null: no key) and, per attempt, whether it fails (past the plan it succeeds). */
interface Arrival {
  readonly key: string | null;
  readonly fails: readonly boolean[];
}
type Op =
  | { readonly kind: 'arrive'; readonly arrival: Arrival }
  | { readonly kind: 'tick'; readonly ms: number }
  | { readonly kind: 'attempt-due' };
interface Unit {
  readonly ops: readonly Op[];
  readonly end: 'commit' | 'abort' | 'crash';
}

const arrival: fc.Arbitrary<Arrival> = fc.record({
  key: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c') }, { weight: 1, arbitrary: fc.constant(null) }),
  fails: fc.array(fc.boolean(), { maxLength: 3 }),
});
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: arrival.map((a) => ({ kind: 'arrive' as const, arrival: a })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 300 }).map((ms) => ({ kind: 'tick' as const, ms })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'attempt-due' as const }) },
);
const units = fc.array(
  fc.record({ ops: fc.array(op, { maxLength: 8 }), end: fc.constantFrom<Unit['end']>('commit', 'commit', 'commit', 'abort', 'crash') }),
  { minLength: 1, maxLength: 12 },
);

/** Runs the units; returns what a read_committed reader sees: the decided offsets per key, and the task's parked state. */
function runModel(plan: readonly Unit[]) {
  let parked = new ParkedRecords();
  const committedChangelog: OutputRecord[] = [];
  /** key → offsets decided (success or dead letter) in committed units, in order. */
  const decided = new Map<string, number[]>();
  const fails = new Map<number, readonly boolean[]>();
  let nextOffset = 0;
  let now = 1_000;

  const keyOf = (a: Arrival): Buffer | null => (a.key === null ? null : Buffer.from(a.key));
  const record = (offset: number, a: Arrival): InputRecord => ({
    topic: 'in',
    partition: 0,
    offset,
    timestamp: offset,
    key: keyOf(a),
    value: offset % 5 === 0 ? null : Buffer.from(`v${offset}`),
    headers: { h: `h${offset}` },
  });

  const runUnit = (unit: Unit, firstOffset: number) => {
    const changes: OutputRecord[] = [];
    const outputs: Array<[string, number]> = [];
    let offset = firstOffset;
    /** The attempt of `r` (its `attempts`-th failure or not): decided, or parked again. */
    const attempt = (r: ParkedRecord) => {
      const attemptNo = r.history.attempts;
      const failsNow = fails.get(r.offset)?.[attemptNo] === true;
      if (!failsNow || attemptNo + 1 >= 3) {
        outputs.push([r.keyId, r.offset]);
        parked.resolve(r.keyId, r.offset);
        changes.push(parkedTombstone(CHANGELOG, r.offset));
        return;
      }
      const history = { ...r.history, attempts: attemptNo + 1, firstFailureMs: r.history.firstFailureMs ?? now };
      changes.push(parkedChangelogRecord(CHANGELOG, parked.reschedule(r.keyId, r.offset, history, now + 100 * (attemptNo + 1))));
    };
    for (const o of unit.ops) {
      if (o.kind === 'tick') now += o.ms;
      else if (o.kind === 'attempt-due') {
        const head = parked.due(now);
        if (head !== undefined) attempt(head);
      } else {
        const at = offset++;
        fails.set(at, o.arrival.fails);
        const raw = record(at, o.arrival);
        const keyId = parkedKeyId(raw);
        if (parked.isParked(keyId)) {
          const follower: ParkedRecord = { offset: at, keyId, step: 0, record: raw, history: FRESH_HISTORY, dueAt: undefined };
          parked.park(follower);
          changes.push(parkedChangelogRecord(CHANGELOG, follower));
        } else if (o.arrival.fails[0] === true) {
          const head: ParkedRecord = {
            offset: at,
            keyId,
            step: 0,
            record: raw,
            history: { ...FRESH_HISTORY, attempts: 1, firstFailureMs: now },
            dueAt: now + 100,
          };
          parked.park(head);
          changes.push(parkedChangelogRecord(CHANGELOG, head));
        } else outputs.push([keyId, at]);
      }
    }
    return { changes, outputs, offset };
  };

  for (const unit of plan) {
    const start = parked.snapshot();
    const startNow = now;
    let result = runUnit(unit, nextOffset);
    if (unit.end === 'abort') {
      // The transaction aborted: nothing of it is visible; the task restores the unit's start and runs it again.
      parked.restore(start);
      now = startNow;
      result = runUnit(unit, nextOffset);
    }
    if (unit.end === 'crash') {
      // Nothing of the unit committed; a new task rebuilds from the committed changelog and reads the unit's input again.
      parked = ParkedRecords.rebuild(readParkedChangelog(committedChangelog.map(toInput)));
      now = startNow;
      result = runUnit(unit, nextOffset);
    }
    committedChangelog.push(...result.changes);
    for (const [key, offset] of result.outputs) decided.set(key, [...(decided.get(key) ?? []), offset]);
    nextOffset = result.offset;
  }
  return { parked, committedChangelog, decided, arrivals: nextOffset };
}

let changelogOffset = 0;
function toInput(r: OutputRecord): InputRecord {
  return {
    topic: r.topic,
    partition: r.partition ?? 0,
    offset: changelogOffset++,
    timestamp: 0,
    key: r.key,
    value: r.value,
    headers: r.headers,
  };
}

const stateOf = (p: ParkedRecords) =>
  [...p.snapshot().entries()].map(([k, list]) => [k, list.toArray()] as const).sort((a, b) => a[0].localeCompare(b[0]));

describe('ParkedRecords with its changelog (property)', () => {
  it('decides every key’s records in offset order, and the committed changelog rebuilds the same parked state', () => {
    fc.assert(
      fc.property(units, (plan) => {
        const { parked, committedChangelog, decided } = runModel(plan);
        for (const [key, offsets] of decided) {
          expect(offsets, `key ${key}`).toEqual([...offsets].sort((a, b) => a - b));
          expect(new Set(offsets).size, `key ${key} decided twice`).toBe(offsets.length);
        }
        const rebuilt = ParkedRecords.rebuild(readParkedChangelog(committedChangelog.map(toInput)));
        expect(stateOf(rebuilt)).toEqual(stateOf(parked));
        expect([rebuilt.keys, rebuilt.records]).toEqual([parked.keys, parked.records]);
        expect(parked.records).toBe(stateOf(parked).reduce((n, [, list]) => n + list.length, 0));
      }),
      { numRuns: RUNS },
    );
  });

  it('decides each record once: what is not parked at the end was decided, in committed units only', () => {
    fc.assert(
      fc.property(units, (plan) => {
        const { parked, decided, arrivals } = runModel(plan);
        const decidedCount = [...decided.values()].reduce((n, o) => n + o.length, 0);
        expect(decidedCount + parked.records).toBe(arrivals);
      }),
      { numRuns: RUNS },
    );
  });
});
