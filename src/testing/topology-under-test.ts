import { topologyDefinitionOf, type TopologyBuilder } from '../dsl/topology-builder.js';
import { compile, type CompileOverrides } from '../topology/compile.js';
import type { CompiledTopology } from '../topology/compiled-topology.js';

/**
 * The topology a {@link TopologyTestDriver} runs: a builder (what a topology file
 * default-exports), compiled with `overrides`, or a topology compiled already.
 *
 * @throws TopologyError when the builder does not compile; TypeError when `topology` is neither
 */
export function topologyUnderTest(topology: TopologyBuilder | CompiledTopology, overrides: CompileOverrides | undefined): CompiledTopology {
  return topologyDefinitionOf(topology) !== undefined ? compile(topology, overrides) : asCompiled(topology);
}

function asCompiled(topology: unknown): CompiledTopology {
  const t = topology as Partial<CompiledTopology> | null;
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.applicationId !== 'string' ||
    t.topicRoutes === undefined ||
    t.subtopologies === undefined
  ) {
    throw new TypeError('TopologyTestDriver: expected a topology built with topology(...) from weir, or one compiled with compile()');
  }
  return t as CompiledTopology;
}
