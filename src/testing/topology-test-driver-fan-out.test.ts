import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee, type ProcessorFn } from '../index.js';
import { invariants } from './invariants.js';
import { TopologyTestDriver } from './topology-test-driver.js';

function fanOut(fn: ProcessorFn<any, any, any>, guarantee: ProcessingGuarantee) {
  return topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', { key: 'string', value: 'json' })
    .process('p', fn)
    .branch({ success: { all: [sink('a'), sink('b', { value: 'buffer' })] }, dlq: sink('dlq') });
}

/** Passes the value on; `b` takes buffers only, so a value `{ bad: true }` cannot be written there. */
const toBoth: ProcessorFn<any, any, any> = (r) => ((r.value as { bad?: boolean }).bad ? r.value : Buffer.from(JSON.stringify(r.value)));

describe('TopologyTestDriver: multicast success branch', () => {
  it('writes every output to every sink; a copy that cannot be written dead-letters the record, with no copy anywhere', async () => {
    const driver = new TopologyTestDriver(fanOut(toBoth, 'at_least_once'));
    await driver.pipeInput('in', [
      { key: 'x', value: { n: 1 } },
      { key: 'y', value: { bad: true } },
      { key: 'z', value: { n: 3 } },
    ]);
    await driver.drain();
    expect(driver.readOutput('a').map((o) => [o.key, o.input])).toEqual([
      ['x', 0],
      ['z', 2],
    ]);
    expect(driver.readOutput('b').map((o) => [o.key, o.input])).toEqual([
      ['x', 0],
      ['z', 2],
    ]);
    expect(driver.deadLetters().map((d) => [d.key, d.errorClass])).toEqual([['y', 'SerializationError']]);
    invariants.all(driver);
  });

  it('under exactly_once, puts all copies in the transaction of the input offset: an aborted one leaves none visible', async () => {
    const driver = new TopologyTestDriver(fanOut(toBoth, 'exactly_once'));
    driver.abortTransaction();
    driver.crashAt('before-commit', 2);
    await driver.pipeInput('in', [
      { key: 'x', value: { n: 1 } },
      { key: 'z', value: { n: 2 } },
    ]);
    expect(driver.readOutput('a')).toEqual([]);
    expect(driver.readOutput('b')).toEqual([]);
    await driver.drain();
    expect(driver.pendingFaults).toBe(0);
    expect(driver.readOutput('a').map((o) => o.input)).toEqual([0, 1]);
    expect(driver.readOutput('b').map((o) => o.input)).toEqual([0, 1]);
    // The aborted and the crashed transactions' copies are in the log, invisible to read_committed.
    expect(driver.readOutput('a', { isolation: 'read_uncommitted' }).length).toBeGreaterThan(2);
    expect(driver.readOutput('b', { isolation: 'read_uncommitted' }).length).toBeGreaterThan(2);
    expect(driver.committedOffset('in', 0)).toBe(2);
    invariants.exactlyOnce(driver);
  });
});
