import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sink, topology, type ProcessingGuarantee } from '../index.js';
import { ManualClock, propertyRuns, TopologyTestDriver } from '../testing/index.js';

const RUNS = propertyRuns(100);
const TIMEOUT_MS = Math.max(30_000, RUNS * 50);

/**
 * Commits on time with slow processors: a task flushes and commits once its commit interval is
 * due, even in the middle of a poll (up to `maxPollRecords`, 500, records). On the ManualClock,
 * a processor that takes `costMs` per record (it moves the clock) under either guarantee: while
 * records are processed, the committed offset advances at least once every 3 × commit interval
 * — it is due at most one record (`costMs` ≤ 2 × interval) after the interval has passed.
 */
describe('PartitionTask commits on time (TopologyTestDriver)', () => {
  it(
    'the committed offset advances at least once every 3 × commit interval while records are processed',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<ProcessingGuarantee>('at_least_once', 'exactly_once'),
          fc
            .integer({ min: 10, max: 500 })
            .chain((intervalMs) => fc.record({ intervalMs: fc.constant(intervalMs), costMs: fc.integer({ min: 1, max: 2 * intervalMs }) })),
          fc.integer({ min: 1, max: 400 }),
          fc.integer({ min: 1, max: 2 }),
          async (guarantee, { intervalMs, costMs }, count, partitions) => {
            const clock = new ManualClock();
            const slow = topology({ applicationId: 'slow', processingGuarantee: guarantee, commitIntervalMs: intervalMs })
              .source('in', 'json')
              .process('slow', (record) => {
                clock.advance(costMs);
                return record.value;
              })
              .branch({ success: sink('out'), dlq: sink('dlq') });
            const driver = new TopologyTestDriver(slow, { clock, partitions });
            await driver.pipeInput(
              'in',
              Array.from({ length: count }, (_, n) => ({ key: `k${n}`, value: { n } })),
            );
            await driver.drain();

            const { records, flushes } = driver.history;
            for (let p = 0; p < partitions; p++) {
              const processed = records.filter((e) => e.partition === p);
              if (processed.length === 0) continue;
              const commits = flushes.filter((f) => f.partition === p && f.committedOffset !== undefined).map((f) => f.atMs);
              const start = processed[0]!.atMs;
              // Every moment a record is processed, at least 3 intervals into the run, follows a commit by at most 3 intervals.
              for (const event of processed) {
                if (event.atMs - start < 3 * intervalMs) continue;
                const last = commits.filter((t) => t <= event.atMs).at(-1);
                expect(last, `partition ${p}: no commit before the record @${event.offset} at +${event.atMs - start} ms`).toBeDefined();
                expect(event.atMs - last!, `partition ${p}, record @${event.offset}`).toBeLessThanOrEqual(3 * intervalMs);
              }
              expect(driver.committedOffset('in', p)).toBe(processed.at(-1)!.offset + 1);
            }
            expect(driver.readOutput('out')).toHaveLength(count);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
