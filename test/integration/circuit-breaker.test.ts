/**
 * Outages on the real broker: an HTTP dependency (served by this test) fails every call for
 * 20 s, then recovers. Two `weir run` workers read the same kind of input at the same time, one
 * with a circuit breaker on its processor and one without:
 * - with it, no record is dead-lettered, none is lost, the dependency is called during the
 *   outage at most as often as the breaker's options allow, and `weir_circuit_state` goes
 *   open (2), then closed (0);
 * - without it, records that would have succeeded after the outage are dead-lettered.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freePort, sumMetric } from '../../scripts/lib/free-port.js';
import { produce, readTopics, type ReadRecord } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { BREAKER } from './fixtures/dependency-options.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';

const FIXTURE = 'test/integration/fixtures/dependency-topology.ts';
const PARTITIONS = 3;
const RECORDS = 300;
const OUTAGE_MS = 20_000;

/** The dependency: answers 200, or 503 while down; counts the calls it got while down, per path. */
class Dependency {
  down = false;
  readonly callsWhileDown = new Map<string, number>();
  readonly calls = new Map<string, number>();
  private server: Server | undefined;

  async start(): Promise<number> {
    const port = await freePort();
    this.server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      this.calls.set(path, (this.calls.get(path) ?? 0) + 1);
      if (this.down) {
        this.callsWhileDown.set(path, (this.callsWhileDown.get(path) ?? 0) + 1);
        res.writeHead(503).end('down');
      } else res.writeHead(200).end('gold');
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    return port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * The most calls a breaker lets through during an outage of `outageMs` (all calls fail): the
 * `minimumCalls` failures that open it, a call in flight on each other partition when it opens,
 * and `halfOpenCalls` probes per half-open spell that starts before the outage ends (the open
 * wait doubles from `openMs` up to `maxOpenMs`). The breaker opens after the outage began, so
 * counting its spells from the outage's start over-counts.
 */
function callBound(partitions: number, outageMs: number): { bound: number; probes: number } {
  let probes = 0;
  for (let t = 0, wait: number = BREAKER.openMs; t + wait < outageMs; wait = Math.min(BREAKER.maxOpenMs, wait * 2)) {
    t += wait;
    probes += BREAKER.halfOpenCalls;
  }
  return { bound: BREAKER.minimumCalls + (partitions - 1) + probes, probes };
}

const fx = useIntegrationFixture('weir-it-circuit-breaker');

async function scrape(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  return response.text();
}

describe(onClient('weir run: a circuit breaker holds records through a dependency outage'), () => {
  it('dead-letters nothing and calls the dead dependency within its bound; without a breaker the same outage dead-letters records', async () => {
    const dependency = new Dependency();
    const dependencyPort = await dependency.start();
    fx.onTeardown(() => dependency.close());
    const run = randomBytes(3).toString('hex');
    const setups = (['on', 'off'] as const).map((breaker) => {
      const app = `weir-it-outage-${breaker}-${run}`;
      return { breaker, app, source: `${app}.in`, sink: `${app}.out`, dlq: `${app}.dlq` };
    });
    await fx.createTopics(setups.flatMap((s) => [s.source, s.sink, s.dlq].map((topic) => ({ topic, partitions: PARTITIONS }))));

    const metricsPort = await freePort();
    const workers = setups.map((s) =>
      fx.startWorker(FIXTURE, {
        args: ['--application-id', s.app, ...(s.breaker === 'on' ? ['--metrics-port', String(metricsPort)] : [])],
        env: {
          WEIR_TEST_SOURCE: s.source,
          WEIR_TEST_SINK: s.sink,
          WEIR_TEST_DLQ: s.dlq,
          WEIR_TEST_BREAKER: s.breaker,
          WEIR_TEST_DEPENDENCY_URL: `http://127.0.0.1:${dependencyPort}/${s.breaker}`,
        },
      }),
    );
    await Promise.all(
      workers.map((w) => w.waitForLog((l) => l.msg === 'partitions assigned' && (l['partitions'] as string[]).length > 0, 60_000)),
    );

    // The outage begins; the input arrives during it.
    dependency.down = true;
    const outageStart = Date.now();
    for (const s of setups) {
      await produce(
        fx.kafka,
        s.source,
        Array.from({ length: RECORDS }, (_, id) => ({ key: `k${id}`, value: JSON.stringify({ id }) })),
      );
    }
    const withBreaker = workers[0] as (typeof workers)[0];
    const opened = await withBreaker.waitForLog(
      (l) => l.level === 40 && String(l.msg).includes('circuit breaker') && String(l.msg).includes('opened'),
      15_000,
    );
    expect(opened['failureRate']).toBe(1);
    expect(String(opened['error'])).toContain('dependency answered 503');
    const openMetric = await waitFor(
      async () => (sumMetric(await scrape(metricsPort), 'weir_circuit_state', { processor: 'enrich' }) === 2 ? true : undefined),
      10_000,
      () => 'weir_circuit_state{processor="enrich"} never showed 2 (open)',
    );
    expect(openMetric).toBe(true);

    await waitFor(
      () => (Date.now() - outageStart >= OUTAGE_MS ? true : undefined),
      OUTAGE_MS + 5_000,
      () => 'the outage did not last',
    );
    dependency.down = false;
    const outageMs = Date.now() - outageStart;

    // Every input reaches its outcome once the dependency is back.
    const results = new Map<string, ReadRecord[]>();
    for (const s of setups) {
      const { records, complete } = await readTopics(fx.kafka, [s.sink, s.dlq], {
        until: (rs) => rs.length >= RECORDS,
        timeoutMs: 60_000,
      });
      expect(complete, `${s.app}: every input has an outcome`).toBe(true);
      results.set(s.breaker, records);
    }
    const ids = (records: readonly ReadRecord[], topic: string) =>
      new Set(records.filter((r) => r.topic === topic).map((r) => (JSON.parse(r.value?.toString() ?? '{}') as { id: number }).id));
    const [on, off] = setups as [(typeof setups)[0], (typeof setups)[0]];

    // With the breaker: all 300 in the sink, none in the DLQ, none lost.
    const onRecords = results.get('on') ?? [];
    expect(ids(onRecords, on.dlq).size).toBe(0);
    expect(ids(onRecords, on.sink).size).toBe(RECORDS);
    const { bound, probes } = callBound(PARTITIONS, outageMs);
    const callsWhileDown = dependency.callsWhileDown.get('/on') ?? 0;
    console.log(
      `[circuit-breaker] outage ${outageMs} ms: with a breaker ${callsWhileDown} calls to the dead dependency (bound ${bound}: ${BREAKER.minimumCalls} to open, ${PARTITIONS - 1} in flight, ${probes} probes), 0 dead letters; ` +
        `without: ${dependency.callsWhileDown.get('/off') ?? 0} calls, ${ids(results.get('off') ?? [], off.dlq).size} dead letters`,
    );
    expect(callsWhileDown).toBeGreaterThanOrEqual(BREAKER.minimumCalls);
    expect(callsWhileDown).toBeLessThanOrEqual(bound);

    // The breaker closed again, and the metric says so.
    const closedLine = await withBreaker.waitForLog((l) => l.level === 30 && String(l.msg).includes('closed after'), 15_000);
    const closed = await waitFor(
      async () => {
        const text = await scrape(metricsPort);
        return sumMetric(text, 'weir_circuit_state', { processor: 'enrich' }) === 0 ? text : undefined;
      },
      10_000,
      () => 'weir_circuit_state{processor="enrich"} never went back to 0 (closed)',
    );
    expect(sumMetric(closed, 'weir_circuit_transitions_total', { processor: 'enrich', to: 'open' })).toBeGreaterThanOrEqual(1);
    expect(sumMetric(closed, 'weir_circuit_transitions_total', { processor: 'enrich', to: 'closed' })).toBe(1);
    expect(sumMetric(closed, 'weir_records_total', { outcome: 'held' })).toBeGreaterThanOrEqual(BREAKER.minimumCalls);

    // The log: one `opened` warning for the whole outage, not one per failed probe (those are
    // summed once a minute, and this outage is shorter); the `closed` line counts them.
    const reopened = sumMetric(closed, 'weir_circuit_transitions_total', { processor: 'enrich', to: 'open' }) - 1;
    expect(reopened, 'failed probes during the outage').toBeGreaterThanOrEqual(1);
    expect(closedLine['failedProbes']).toBe(reopened);
    const openedLines = withBreaker.logs.filter((l) => l.level === 40 && String(l.msg).includes("circuit breaker of 'enrich' opened"));
    expect(openedLines).toHaveLength(1);

    // Without a breaker the same outage dead-letters records that would have succeeded a moment later.
    const offRecords = results.get('off') ?? [];
    const deadWithout = ids(offRecords, off.dlq);
    expect(deadWithout.size).toBeGreaterThan(0);
    expect(deadWithout.size + ids(offRecords, off.sink).size).toBe(RECORDS);
    expect(dependency.callsWhileDown.get('/off') ?? 0).toBeGreaterThan(bound);
    for (const r of offRecords.filter((x) => x.topic === off.dlq)) {
      expect(r.headers['weir.attempts']).toBe('5');
      expect(r.headers['weir.error.message']).toContain('dependency answered 503');
    }

    expect(await Promise.all(workers.map((w) => w.stop('SIGTERM')))).toEqual([0, 0]);
  });
});
