import ms from 'ms';
import type { NodeDescription, EdgeDescription, TopologyDescription } from './topology-description.js';

function nodeLine(node: NodeDescription, tierCount = 0): string {
  switch (node.type) {
    case 'source':
      return `Source: ${node.name} (topics: [${node.topic}], key: ${node.serdes?.key}, value: ${node.serdes?.value})`;
    case 'processor': {
      const r = node.retry!;
      const b = r.backoff;
      const dedup = node.dedup ? `, dedup: ${node.dedup.store} ${node.dedup.ttlMs}ms` : '';
      const backoff = `backoff: ${b.initialMs}ms ×${b.multiplier} ≤ ${b.maxMs}ms, jitter: ${b.jitter}`;
      const reuse = r.maxAttempts - 1 > tierCount ? ', the last reused' : '';
      const how =
        r.order === 'key'
          ? `delays at the task: ${r.delaysMs !== undefined ? msList(r.delaysMs) : backoff}`
          : r.tiers === undefined
            ? backoff
            : r.tiers === 'explicit'
              ? `tiers: explicit${reuse}`
              : `tiers: from ${backoff}${reuse}`;
      const order = r.order === 'key' ? ', order: key' : '';
      const guards = r.mode === 'topics' ? `${order}, maxHops: ${r.maxHops}` : '';
      const c = node.chain;
      const step =
        c === undefined
          ? ''
          : `step ${c.position} of ${c.length}${c.inputSerdes ? `, input: key ${c.inputSerdes.key}, value ${c.inputSerdes.value}` : ''}, `;
      // One attempt: no retry, so no mode, backoff or tiers to show.
      const retry =
        r.maxAttempts === 1 ? 'retry: none (maxAttempts: 1)' : `retry: ${r.mode}, maxAttempts: ${r.maxAttempts}, ${how}${guards}`;
      return `Processor: ${node.name} (${step}${retry}, maxReplays: ${r.maxReplays}${dedup})`;
    }
    case 'sink':
      return `Sink: ${node.name} (topic: ${node.topic}${node.predicate ? ', when: predicate' : ''}${node.multicast ? ', multicast: every output' : ''})`;
    case 'retry-tier':
      return `Retry tier: ${node.name} (topic: ${node.topic}, delay: ${node.delayMs}ms)`;
    case 'parked':
      return (
        `Parked records: ${node.name} (changelog: ${node.topic}, compacted, maxParkedKeys: ${node.maxParkedKeys} per task; ` +
        "a failed record waits at its task, its key's later records behind it)"
      );
    case 'dead-letter':
      return `Dead-letter queue: ${node.name} (topic: ${node.topic})`;
  }
}

/** A share as a percentage, with as many decimals as it takes not to round a share below 1 up to 100 %. */
function percent(x: number): string {
  let digits = 1;
  while (x < 1 && digits < 12 && Number((x * 100).toFixed(digits)) >= 100) digits++;
  return `${(x * 100).toFixed(digits)} %`;
}

/** The indented lines under a processor: retry arithmetic and outage guards. */
function processorDetails(node: NodeDescription): string[] {
  const lines: string[] = [];
  const a = node.retryArithmetic;
  if (a !== undefined) {
    const attempts = node.retry?.maxAttempts ?? 1;
    if (a.retryDelaysMs.length > 0) {
      const ranges = a.retryDelaysMs.map(
        (d) =>
          `#${d.retry}${d.throughRetry === undefined ? '' : `–#${d.throughRetry}`} ${d.minMs === d.maxMs ? `${d.minMs}` : `${d.minMs}–${d.maxMs}`}ms`,
      );
      lines.push(`retry delays: ${ranges.join(', ')}`);
      const note = a.attemptsBounded ? ' (attempts at their timeout)' : ' (plus the attempts themselves)';
      const worst = a.worstCaseToDeadLetterMs;
      const readable = worst >= 60_000 ? ` (about ${ms(worst, { long: true })})` : '';
      lines.push(`worst case from first failure to the DLQ: ${worst}ms${readable}${note}`);
    }
    // With one attempt the odds are p itself: nothing to show.
    if (attempts > 1) {
      const odds = a.successProbability.map((s) => `${percent(s.probability)} at p=${s.p}`).join(', ');
      lines.push(`P(success within ${attempts} attempts): ${odds}`);
    }
  }
  const cb = node.circuitBreaker;
  if (cb !== undefined)
    lines.push(
      `circuit breaker: opens at ${percent(cb.failureRateThreshold)} retriable failures of ≥ ${cb.minimumCalls} calls in ${cb.windowMs}ms; ` +
        `open ${cb.openMs}ms${cb.maxOpenMs > cb.openMs ? ` (doubling, ≤ ${cb.maxOpenMs}ms)` : ''}; ${cb.halfOpenCalls} half-open probe${cb.halfOpenCalls === 1 ? '' : 's'}`,
    );
  const ride = node.outageRideOut;
  if (ride !== undefined) {
    const min = ride.minOutageToDeadLetterMs;
    lines.push(
      `outages ridden out: up to ${min}ms${min >= 60_000 ? ` (about ${ms(min, { long: true })})` : ''} from the breaker opening ` +
        `(a longer one dead-letters the record taking every probe, at failed probe ${ride.deadLetterProbe})`,
    );
    if (ride.caveat !== undefined) lines.push(`warning: ${ride.caveat}`);
  }
  if (node.retryBudget !== undefined)
    lines.push(`retry budget: ${node.retryBudget.ratio} × first attempts + ${node.retryBudget.minPerSecond}/s, over 10 s`);
  if (node.timeoutMs !== undefined) lines.push(`attempt timeout: ${node.timeoutMs}ms`);
  return lines;
}

/** `1000ms, 10000ms`. */
export function msList(delaysMs: readonly number[]): string {
  return delaysMs.map((ms) => `${ms}ms`).join(', ');
}

function edgeLabel(edge: EdgeDescription): string {
  if (edge.kind === 'record') return edge.to;
  if (edge.kind === 'retry' && edge.from === edge.to) return `${edge.to} (retry in place, backoff from ${edge.delayMs}ms)`;
  if (edge.kind === 'retry' && edge.delaysMs !== undefined) return `${edge.to} (retry at the task after ${msList(edge.delaysMs)})`;
  if (edge.kind === 'retry') return `${edge.to} (retry after ${edge.delayMs}ms)`;
  if (edge.multicast) return `${edge.to} (success, all)`;
  return `${edge.to} (${edge.kind})`;
}

/** The `weir describe --format text` output: like Kafka Streams' `TopologyDescription.toString()`. */
export function describeText(d: TopologyDescription): string {
  const lines = [
    `Topology: ${d.applicationId} (processing.guarantee: ${d.processingGuarantee}, commit.interval.ms: ${d.commitIntervalMs})`,
  ];
  for (const sub of d.subtopologies) {
    lines.push(`  Sub-topology: ${sub.id}`);
    for (const node of sub.nodes) {
      // A processor's own tiers: the targets of its retry edges that are tier nodes.
      const tierNodes = new Set(sub.nodes.filter((n) => n.type === 'retry-tier').map((n) => n.name));
      const tiers = sub.edges.filter((e) => e.kind === 'retry' && e.from === node.name && tierNodes.has(e.to)).length;
      lines.push(`    ${nodeLine(node, tiers)}`);
      if (node.type === 'processor') for (const detail of processorDetails(node)) lines.push(`      ${detail}`);
      const out = sub.edges.filter((e) => e.from === node.name);
      const into = sub.edges.filter((e) => e.to === node.name && e.from !== node.name);
      if (out.length > 0) lines.push(`      --> ${out.map(edgeLabel).join(', ')}`);
      if (into.length > 0) lines.push(`      <-- ${into.map((e) => e.from).join(', ')}`);
    }
  }
  return lines.join('\n');
}
