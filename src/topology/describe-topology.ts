import { describeText, msList } from './describe-text.js';
import type { CompiledTopology } from './compiled-topology.js';
import { topologyDescription, type EdgeDescription, type TopologyDescription } from './topology-description.js';

export { topologyDescription } from './topology-description.js';
export type { EdgeDescription, NodeDescription, TopologyDescription } from './topology-description.js';

/** Output formats of {@link describeTopology}. */
export type DescribeFormat = 'text' | 'json' | 'mermaid';

/** A self-loop is a blocking retry (backoff from delayMs); an edge to a tier waits delayMs; one to the parked node, each of its delays in turn. */
function retryEdgeLabel(edge: EdgeDescription): string {
  if (edge.from === edge.to) return `retry in place, backoff from ${edge.delayMs}ms`;
  return edge.delaysMs !== undefined ? `retry at the task ${msList(edge.delaysMs)}` : `retry ${edge.delayMs}ms`;
}

function describeMermaid(d: TopologyDescription): string {
  const lines = ['flowchart LR'];
  for (const sub of d.subtopologies) {
    const ids = new Map(sub.nodes.map((n, i) => [n.name, `s${sub.id}n${i}`]));
    const label = (text: string): string => text.replace(/"/g, '#quot;');
    lines.push(`  subgraph sub${sub.id}["Sub-topology ${sub.id}"]`);
    for (const node of sub.nodes) {
      const id = ids.get(node.name)!;
      if (node.type === 'processor') lines.push(`    ${id}["${label(node.name)}"]`);
      else if (node.type === 'retry-tier') lines.push(`    ${id}[("${label(`${node.topic} (${node.delayMs}ms)`)}")]`);
      else if (node.type === 'parked') lines.push(`    ${id}[("${label(`${node.topic} (parked, key order)`)}")]`);
      else lines.push(`    ${id}[("${label(node.topic ?? node.name)}")]`);
    }
    for (const edge of sub.edges) {
      const from = ids.get(edge.from)!;
      const to = ids.get(edge.to)!;
      if (edge.kind === 'record') lines.push(`    ${from} --> ${to}`);
      else if (edge.kind === 'retry') lines.push(`    ${from} -.->|"${retryEdgeLabel(edge)}"| ${to}`);
      else if (edge.multicast) lines.push(`    ${from} ==>|"success (all)"| ${to}`);
      else lines.push(`    ${from} -->|${edge.kind}| ${to}`);
    }
    lines.push('  end');
  }
  return lines.join('\n');
}

/**
 * Describes a compiled topology: `'text'` like Kafka Streams' `TopologyDescription.toString()`,
 * `'json'` (a {@link TopologyDescription}), or a `'mermaid'` flowchart. Retry and DLQ edges
 * are shown in all three.
 */
export function describeTopology(topology: CompiledTopology, format: DescribeFormat = 'text'): string {
  const d = topologyDescription(topology);
  if (format === 'json') return JSON.stringify(d, null, 2);
  if (format === 'mermaid') return describeMermaid(d);
  return describeText(d);
}
