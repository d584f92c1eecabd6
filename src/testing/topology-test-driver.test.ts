import { describe, expect, it } from 'vitest';
import { sink, topology, WEIR_HEADERS, type ProcessingGuarantee, type ProcessorFn, type ProcessOptions } from '../index.js';
import { compile } from '../topology/compile.js';
import { plannedProcessor, type PlannedValue } from './failure-plan.js';
import { invariants } from './invariants.js';
import { TopologyTestDriver } from './topology-test-driver.js';

const T0 = Date.UTC(2024, 0, 1);

function build(fn: ProcessorFn<any, any, any>, options: ProcessOptions = {}, guarantee: ProcessingGuarantee = 'at_least_once') {
  return topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', { key: 'string', value: 'json' })
    .process('p', fn, options)
    .branch({ success: sink('out'), dlq: sink('dlq') });
}

const planned = (id: string, plan: PlannedValue['plan'], key = id) => ({ key, value: { id, plan } });

describe('TopologyTestDriver', () => {
  it('pipes records through the topology and reads them back deserialized, with their inputs', async () => {
    const driver = new TopologyTestDriver(build((r) => ({ doubled: (r.value as { n: number }).n * 2 })));
    const piped = await driver.pipeInput('in', [
      { key: 'a', value: { n: 1 }, headers: { trace: 't1' } },
      { key: 'b', value: { n: 2 } },
    ]);
    expect(piped.map((p) => [p.id, p.partition, p.offset])).toEqual([
      [0, 0, 0],
      [1, 0, 1],
    ]);
    const out = driver.readOutput('out');
    expect(out.map((o) => [o.key, o.value, o.input])).toEqual([
      ['a', { doubled: 2 }, 0],
      ['b', { doubled: 4 }, 1],
    ]);
    expect(out[0]!.headers['trace']).toBe('t1');
    expect(driver.committedOffset('in', 0)).toBeUndefined(); // at_least_once commits once per commit interval
    await driver.advanceTime(100);
    expect(driver.committedOffset('in', 0)).toBe(2);
    expect(driver.isSettled()).toBe(true);
  });

  it('under exactly_once shows outputs only once their transaction commits', async () => {
    const driver = new TopologyTestDriver(build((r) => r.value, {}, 'exactly_once'));
    await driver.pipeInput('in', { key: 'a', value: { n: 1 } });
    expect(driver.readOutput('out')).toEqual([]);
    await driver.advanceTime(100);
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ n: 1 }]);
    expect(driver.committedOffset('in', 0)).toBe(1);
  });

  it('runs a one-hour backoff schedule in virtual time, firing each retry exactly when due', async () => {
    const retry = { maxAttempts: 6, backoff: { initialMs: 60_000, multiplier: 2, maxMs: 3_600_000, jitter: 'none' as const } };
    const driver = new TopologyTestDriver(build(plannedProcessor(), { retry }));
    await driver.pipeInput('in', planned('poison', ['retriable', 'retriable', 'retriable', 'retriable', 'retriable', 'retriable']));
    await driver.advanceTime(2 * 3_600_000);
    const attempts = driver.history.records.map((e) => [e.attempt, e.outcome, e.atMs - T0]);
    // 1 min, 2 min, 4 min, 8 min, 16 min between attempts: the clock stopped at every due time.
    expect(attempts).toEqual([
      [1, 'retry', 0],
      [2, 'retry', 60_000],
      [3, 'retry', 180_000],
      [4, 'retry', 420_000],
      [5, 'retry', 900_000],
      [6, 'dead-letter', 1_860_000],
    ]);
    const [dead] = driver.deadLetters();
    expect([dead!.attempts, dead!.errorClass, dead!.lastFailureMs! - dead!.firstFailureMs!]).toEqual([6, 'PlannedFailure', 1_860_000]);
    expect(driver.now() - T0).toBe(2 * 3_600_000);
  });

  it('keeps a partition behind its blocked head record, and other partitions flowing', async () => {
    const retry = { maxAttempts: 3, backoff: { initialMs: 1_000, jitter: 'none' as const } };
    const driver = new TopologyTestDriver(build(plannedProcessor(), { retry }), { partitions: { in: 2 } });
    const piped = await driver.pipeInput('in', [
      { ...planned('slow', ['retriable'], 'k'), partition: 0 },
      { ...planned('behind', [], 'k'), partition: 0 },
      { ...planned('other', [], 'o'), partition: 1 },
    ]);
    expect(piped.map((p) => p.partition)).toEqual([0, 0, 1]);
    expect(driver.readOutput('out').map((o) => (o.value as { id: string }).id)).toEqual(['other']);
    await driver.advanceTime(999);
    expect(driver.readOutput('out')).toHaveLength(1);
    await driver.advanceTime(1);
    const ids = (key: string) =>
      driver
        .readOutput('out')
        .filter((o) => o.key === key)
        .map((o) => (o.value as { id: string }).id);
    expect([ids('k'), ids('o')]).toEqual([['slow', 'behind'], ['other']]);
  });

  it('consumes its own retry tiers and never processes a tier record before it is due', async () => {
    const retry = { mode: 'topics' as const, maxAttempts: 3, backoff: { initialMs: 5_000, multiplier: 2, jitter: 'none' as const } };
    const driver = new TopologyTestDriver(build(plannedProcessor(), { retry }));
    await driver.pipeInput('in', [planned('a', ['retriable', 'retriable']), planned('b', [])]);
    expect(driver.readOutput('out').map((o) => (o.value as { id: string }).id)).toEqual(['b']);
    expect(driver.readOutput('app.p.retry.0').map((o) => o.headers[WEIR_HEADERS.retryDueMs])).toEqual([String(T0 + 5_000)]);
    await driver.drain();
    const success = driver.history.records.find((e) => e.outcome === 'success' && e.topic === 'app.p.retry.1')!;
    expect([success.attempt, success.atMs - T0]).toEqual([3, 15_000]);
  });

  it('dead-letters bad bytes piped as a Buffer, and names a bad topic or partition', async () => {
    const driver = new TopologyTestDriver(build((r) => r.value));
    await driver.pipeInput('in', { key: 'x', value: Buffer.from('{not json') });
    const [dead] = driver.deadLetters();
    expect([dead!.errorClass, dead!.attempts, dead!.value, dead!.rawValue!.toString()]).toEqual([
      'DeserializationError',
      0,
      undefined,
      '{not json',
    ]);
    await expect(driver.pipeInput('nope', [{ value: 1 }])).rejects.toThrow(
      "pipeInput: 'nope' is not a source or retry-tier topic of this topology ('in')",
    );
    await expect(driver.pipeInput('in', [{ value: 1, partition: 3 }])).rejects.toThrow(
      "pipeInput('in') record 0: partition 3 does not exist (the topic has 1)",
    );
    expect(() => driver.readOutput('outt')).toThrow(/readOutput: 'outt' is not a/);
  });

  it('restarts a crashed task from the committed offset: at_least_once replays (duplicate), exactly_once does not', async () => {
    for (const guarantee of ['at_least_once', 'exactly_once'] as const) {
      const driver = new TopologyTestDriver(build((r) => r.value, {}, guarantee));
      driver.crashAt(guarantee === 'exactly_once' ? 'mid-transaction' : 'after-produce');
      await driver.pipeInput('in', [{ key: 'a', value: { n: 1 } }]);
      await driver.drain();
      expect(driver.history.restarts.map((r) => [r.from, r.to, r.reason])).toEqual([['in-0#1', 'in-0#2', 'crash']]);
      expect(driver.history.faults.map((f) => f.task)).toEqual(['in-0#1']);
      expect(driver.readOutput('out')).toHaveLength(guarantee === 'exactly_once' ? 1 : 2);
      expect(driver.readOutput('out', { isolation: 'read_uncommitted' })).toHaveLength(2);
      expect(driver.committedOffset('in', 0)).toBe(1);
    }
  });

  it('resumes a stalled task as a zombie after its partition moved on: it is fenced and writes nothing', async () => {
    const driver = new TopologyTestDriver(
      build((r) => r.value, {}, 'exactly_once'),
      { maxPollRecords: 1 },
    );
    await driver.pipeInput('in', { key: 'a', value: { n: 1 } });
    await driver.advanceTime(200); // committed at 100
    driver.stallAt('after-commit');
    // One record per poll: the commit (due) takes b, and c is still buffered when the task stalls.
    await driver.pipeInput('in', [
      { key: 'b', value: { n: 2 } },
      { key: 'c', value: { n: 3 } },
    ]);
    await driver.drain();
    expect(driver.history.restarts.map((r) => [r.from, r.to, r.reason])).toEqual([['in-0#1', 'in-0#2', 'stall']]);
    // The zombie woke up after its commit, processed c, and was fenced when it tried to commit.
    expect(driver.history.records.filter((e) => e.zombie).map((e) => [e.instance, e.offset, e.outcome])).toEqual([
      ['in-0#1', 2, 'success'],
    ]);
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(driver.readOutput('out', { isolation: 'read_uncommitted' })).toHaveLength(3);
    invariants.exactlyOnce(driver);
    expect(() => new TopologyTestDriver(build((r) => r.value)).stallAt('before-commit')).toThrow(
      'fault 0 (stall) needs processing.guarantee exactly_once',
    );
  });

  it('aborts a transaction and re-runs the batch: the aborted outputs stay invisible', async () => {
    const driver = new TopologyTestDriver(build((r) => r.value, {}, 'exactly_once'));
    driver.abortTransaction();
    await driver.pipeInput('in', [
      { key: 'a', value: { n: 1 } },
      { key: 'b', value: { n: 2 } },
    ]);
    await driver.drain();
    expect(driver.history.portErrors.map((e) => [e.port, (e.error as Error).name])).toEqual([['transaction', 'InjectedBrokerError']]);
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(driver.readOutput('out', { isolation: 'read_uncommitted' })).toHaveLength(4);
    expect(() => new TopologyTestDriver(build((r) => r.value)).abortTransaction()).toThrow(
      'fault 0 (abort-transaction) needs processing.guarantee exactly_once',
    );
  });

  it('moves partitions to new tasks on a rebalance: uncommitted work is redone', async () => {
    const driver = new TopologyTestDriver(build((r) => r.value));
    await driver.pipeInput('in', [{ key: 'a', value: { n: 1 } }]);
    await driver.rebalance();
    await driver.drain();
    expect(driver.readOutput('out')).toHaveLength(2); // produced, not committed, then replayed
    await driver.pipeInput('in', [{ key: 'b', value: { n: 2 } }]);
    await driver.rebalance({ topic: 'in', graceful: true });
    await driver.drain();
    expect(driver.readOutput('out')).toHaveLength(3); // a graceful rebalance commits first
    expect(driver.history.restarts.filter((r) => r.task === 'in-0').map((r) => r.to)).toEqual(['in-0#2', 'in-0#3']);
  });

  it('waits while the dedup store is down (onStoreError fail) and catches up when it is back', async () => {
    const dedup = { key: (r: { value: unknown }) => (r.value as { id: string }).id, ttlMs: 60_000, store: 'memory' as const };
    const driver = new TopologyTestDriver(build((r) => r.value, { dedup }));
    driver.setDedupStoreDown(true);
    await driver.pipeInput('in', [
      { key: 'a', value: { id: 'x' } },
      { key: 'a', value: { id: 'x' } },
    ]);
    await driver.advanceTime(10_000);
    expect(driver.readOutput('out')).toEqual([]);
    expect(driver.history.portErrors.every((e) => e.port === 'dedup')).toBe(true);
    await expect(driver.drain({ maxMs: 60_000 })).rejects.toThrow(
      /drain: tasks did not settle within 60000 ms of virtual time: in-0#1 waits \(port-retry\)/,
    );
    driver.setDedupStoreDown(false);
    await driver.drain();
    expect(driver.readOutput('out').map((o) => o.value)).toEqual([{ id: 'x' }]);
    expect(driver.history.records.map((e) => e.outcome)).toEqual(['success', 'duplicate']);
  });

  it('applies poll-triggered faults from a schedule', async () => {
    const dedup = {
      key: (r: { value: unknown }) => (r.value as { id: string }).id,
      ttlMs: 60_000,
      store: 'memory' as const,
      onStoreError: 'skip-dedup' as const,
    };
    const driver = new TopologyTestDriver(
      build((r) => r.value, { dedup }),
      {
        faults: [
          { kind: 'dedup-store-down', atPoll: 1, forPolls: 1 },
          { kind: 'rebalance', atPoll: 2 },
        ],
      },
    );
    await driver.pipeInput('in', [
      { key: 'a', value: { id: 'x' } },
      { key: 'a', value: { id: 'x' } },
    ]);
    await driver.drain();
    expect(driver.history.faults.map((f) => f.fault.kind)).toEqual(['dedup-store-down', 'rebalance']);
    expect(driver.history.dedupSkipped).toBeGreaterThanOrEqual(2); // both records claimed without the store
    // The second record is a duplicate within the unit; the non-graceful rebalance replays the
    // uncommitted unit (at_least_once), whose key the store never confirmed.
    expect(driver.history.records.map((e) => `${e.instance}:${e.outcome}`)).toEqual([
      'in-0#1:success',
      'in-0#1:duplicate',
      'in-0#2:success',
      'in-0#2:duplicate',
    ]);
    expect(driver.readOutput('out')).toHaveLength(2);
    expect(driver.pendingFaults).toBe(0);
    expect(() => driver.schedule([{ kind: 'crash', point: 'before-produce', nth: 0 }])).toThrow(
      'fault 0 (crash): nth must be an integer ≥ 1 (got 0)',
    );
  });

  it('closes its tasks like a worker shutdown: flush and commit', async () => {
    const driver = new TopologyTestDriver(build((r) => r.value, {}, 'exactly_once'));
    await driver.pipeInput('in', [{ key: 'a', value: { n: 1 } }]);
    await driver.close();
    expect(driver.readOutput('out')).toHaveLength(1);
    expect(driver.taskStatus().every((s) => s.next.kind === 'closed')).toBe(true);
  });

  it('also accepts a compiled topology and rejects anything else', async () => {
    const compiled = new TopologyTestDriver(
      compile(
        build((r) => r.value),
        { applicationId: 'compiled' },
      ),
    );
    await compiled.pipeInput('in', { key: 'a', value: 1 });
    await compiled.drain();
    expect([compiled.topology.applicationId, compiled.readOutput('out').length, compiled.committedOffset('in', 0)]).toEqual([
      'compiled',
      1,
      1,
    ]);
    expect(() => new TopologyTestDriver({} as never)).toThrow('TopologyTestDriver: expected a topology built with topology(...) from weir');
    expect(
      () =>
        new TopologyTestDriver(
          build((r) => r.value),
          { partitions: { nope: 2 } },
        ),
    ).toThrow("partitions given for 'nope', which is not a source topic (sources: in)");
  });
});
