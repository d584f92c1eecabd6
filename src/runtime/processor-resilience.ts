import { CircuitBreaker, type CircuitTransition } from '../failure/circuit-breaker.js';
import { RetryBudget } from '../failure/retry-budget.js';
import type { CompiledTopology, ProcessorNode, Subtopology } from '../topology/compiled-topology.js';

/**
 * The outage guards of one processor in one worker process — its circuit breaker and retry
 * budget (null when the processor has none) — shared by every task of the processor: its
 * source partitions and its retry tiers.
 */
export interface ProcessorResilience {
  readonly processor: string;
  readonly breaker: CircuitBreaker | null;
  readonly budget: RetryBudget | null;
}

/** The guards of a processor node, on their own (a task without a registry gets these). */
export function processorResilience(node: ProcessorNode, onTransition?: (t: CircuitTransition) => void): ProcessorResilience {
  return {
    processor: node.name,
    breaker: node.circuitBreaker === null ? null : new CircuitBreaker(node.name, node.circuitBreaker, onTransition),
    budget: node.retryBudget === null ? null : new RetryBudget(node.retryBudget),
  };
}

/**
 * One {@link ProcessorResilience} per processor of a topology: the scope of breakers and
 * budgets is the worker process (the TopologyTestDriver keeps one per driver).
 *
 * @example
 * const registry = new ResilienceRegistry(topology, (t) => logger.warn(t));
 * registry.forProcessor('enrich').breaker?.state; // 'closed'
 */
export class ResilienceRegistry {
  private readonly byProcessor = new Map<string, ProcessorResilience>();

  /** @param onTransition called on every circuit-breaker state change (metrics, logs, test history) */
  constructor(topology: CompiledTopology, onTransition?: (t: CircuitTransition) => void) {
    for (const sub of topology.subtopologies)
      for (const step of sub.steps) this.byProcessor.set(step.processor.name, processorResilience(step.processor, onTransition));
  }

  /** The guards of `processor`; `undefined` for a name the topology does not have. */
  forProcessor(processor: string): ProcessorResilience | undefined {
    return this.byProcessor.get(processor);
  }

  /** Every processor's guards. */
  all(): ProcessorResilience[] {
    return [...this.byProcessor.values()];
  }
}

/**
 * The guards of each step of `sub` for one task: the shared ones of `shared` (the process's
 * registry), else the task's own, made once per processor.
 */
export function resilienceOfSteps(
  sub: Subtopology,
  shared: Pick<ResilienceRegistry, 'forProcessor'> | undefined,
): (processor: string) => ProcessorResilience {
  const own = new Map<string, ProcessorResilience>();
  return (name) => {
    const found = shared?.forProcessor(name);
    if (found !== undefined) return found;
    let guards = own.get(name);
    if (guards === undefined) {
      const node = sub.steps.find((s) => s.processor.name === name)!.processor;
      own.set(name, (guards = processorResilience(node)));
    }
    return guards;
  };
}
