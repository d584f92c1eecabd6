import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee } from '../index.js';
import { applyFailurePlan, type FailurePlan } from './failure-plan.js';
import { invariants } from './invariants.js';
import { TopologyTestDriver } from './topology-test-driver.js';

interface Order {
  readonly id: string;
  readonly plan: FailurePlan;
}

function ordered(guarantee: ProcessingGuarantee, maxParkedKeys?: number) {
  return topology({ applicationId: 'app', processingGuarantee: guarantee, commitIntervalMs: 100 })
    .source('in', { key: 'string', value: 'json' })
    .process(
      'price',
      (record, ctx) => {
        const value = record.value as Order;
        applyFailurePlan(value.plan, ctx.attempt, value.id);
        return value.id;
      },
      {
        retry: {
          mode: 'topics',
          order: 'key',
          maxAttempts: 3,
          backoff: { initialMs: 1_000, multiplier: 1, jitter: 'none' },
          ...(maxParkedKeys ? { maxParkedKeys } : {}),
        },
      },
    )
    .branch({ success: sink('out') });
}

const inputs = [
  { key: 'a', value: { id: 'a0', plan: ['retriable', 'retriable'] } },
  { key: 'b', value: { id: 'b0', plan: [] } },
  { key: 'a', value: { id: 'a1', plan: [] } },
  { key: 'c', value: { id: 'c0', plan: ['non-retriable'] } },
  { key: 'a', value: { id: 'a2', plan: ['retriable'] } },
  { key: 'b', value: { id: 'b1', plan: [] } },
  { key: 'a', value: { id: 'a3', plan: [] } },
] as Array<{ key: string; value: Order }>;

describe("TopologyTestDriver: retry order 'key'", () => {
  for (const guarantee of ['at_least_once', 'exactly_once'] as const) {
    it(`${guarantee}: a failed record waits at its task and its key's later records wait behind it; other keys flow on`, async () => {
      const driver = new TopologyTestDriver(ordered(guarantee));
      await driver.pipeInput('in', inputs);
      await driver.drain();
      const out = driver.readOutput('out').map((o) => o.value as string);
      // b flows past a's parked records; a keeps its input order through two failures of a0 and one of a2.
      expect(out).toEqual(['b0', 'b1', 'a0', 'a1', 'a2', 'a3']);
      expect(driver.deadLetters().map((d) => d.key)).toEqual(['c']);
      expect(driver.catalog.withRole('retry-tier')).toEqual([]);
      // The changelog ends with every entry removed (a tombstone after each decided record).
      const changelog = driver.catalog.withRole('changelog')[0]!;
      expect(changelog.topic).toBe('app.price.parked');
      invariants.all(driver);
      invariants.perKeyOrder(driver);
    });
  }

  it('at maxParkedKeys the task takes no new record, even of another key, until a parked key is decided', async () => {
    const run = async (maxParkedKeys?: number) => {
      const driver = new TopologyTestDriver(ordered('at_least_once', maxParkedKeys));
      await driver.pipeInput('in', [
        { key: 'a', value: { id: 'a0', plan: ['retriable'] } },
        { key: 'b', value: { id: 'b0', plan: [] } },
      ]);
      await driver.drain();
      return driver.readOutput('out').map((o) => o.value as string);
    };
    expect(await run()).toEqual(['b0', 'a0']);
    expect(await run(1)).toEqual(['a0', 'b0']);
  });
});
