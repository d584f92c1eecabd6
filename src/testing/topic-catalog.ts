import type { ChainStep, CompiledTopology, Subtopology } from '../topology/compiled-topology.js';
import type { TopicSerdes } from './test-records.js';
import { TestDriverError } from '../errors.js';

/** What a topic is to the topology. */
export type TopicRole = 'source' | 'retry-tier' | 'sink' | 'dead-letter' | 'changelog';

/** A topic of the topology: its role, serdes, partitions and sub-topology. */
export interface TopicInfo {
  readonly topic: string;
  readonly role: TopicRole;
  readonly partitions: number;
  /** Serdes to read the topic's records with (the sink's, else the source's). */
  readonly serdes: TopicSerdes;
  readonly subtopology: Subtopology;
  /**
   * The chain step the topic belongs to: a source, its first step; a retry tier or DLQ, the step
   * whose tier or DLQ it is; a sink, the last step.
   */
  readonly step: ChainStep;
}

/**
 * The topics of a compiled topology as the TopologyTestDriver creates them, the way the
 * worker's `ensureTopics` does: sources with the partitions asked for (default 1); sinks,
 * DLQs and retry tiers with their node's partitions, else the source's; the parked-records
 * changelog of an `order: 'key'` chain with the source's.
 */
export class TopicCatalog {
  private readonly topics = new Map<string, TopicInfo>();

  /**
   * @param partitions partitions of every source topic, or per source topic (default 1)
   * @throws RangeError when a partition count is not an integer ≥ 1, or names a topic that is
   *   not a source
   */
  constructor(topology: CompiledTopology, partitions: number | Readonly<Record<string, number>> = 1) {
    const sources = topology.subtopologies.toArray();
    const countOf = (topic: string): number => {
      const n = typeof partitions === 'number' ? partitions : (partitions[topic] ?? 1);
      if (!Number.isInteger(n) || n < 1)
        throw new RangeError(`TopologyTestDriver: partitions of '${topic}' must be an integer ≥ 1 (got ${n})`);
      return n;
    };
    if (typeof partitions === 'object') {
      for (const topic of Object.keys(partitions)) {
        if (!sources.some((s) => s.source.topic === topic))
          throw new RangeError(
            `TopologyTestDriver: partitions given for '${topic}', which is not a source topic (sources: ${sources.map((s) => s.source.topic).join(', ')})`,
          );
      }
    }
    const inputSerdes = (step: ChainStep): TopicSerdes => ({ key: step.inputKeySerde, value: step.inputValueSerde });
    for (const sub of sources) {
      const n = countOf(sub.source.topic);
      const first = sub.steps.get(0)!;
      this.add({ topic: sub.source.topic, role: 'source', partitions: n, serdes: inputSerdes(first), subtopology: sub, step: first });
      for (const step of sub.steps)
        for (const tier of step.retryTiers)
          this.add({ topic: tier.topic, role: 'retry-tier', partitions: n, serdes: inputSerdes(step), subtopology: sub, step });
      if (sub.parkedTopic !== null)
        this.add({ topic: sub.parkedTopic, role: 'changelog', partitions: n, serdes: inputSerdes(first), subtopology: sub, step: first });
    }
    for (const sub of sources) {
      const n = countOf(sub.source.topic);
      const last = sub.steps.get(-1)!;
      for (const s of sub.sinks)
        this.add({
          topic: s.topic,
          role: 'sink',
          partitions: s.partitions ?? n,
          serdes: { key: s.keySerde, value: s.valueSerde },
          subtopology: sub,
          step: last,
        });
      for (const step of sub.steps)
        this.add({
          topic: step.deadLetter.topic,
          role: 'dead-letter',
          partitions: step.deadLetter.partitions ?? n,
          serdes: inputSerdes(step),
          subtopology: sub,
          step,
        });
    }
  }

  private add(info: TopicInfo): void {
    if (!this.topics.has(info.topic)) this.topics.set(info.topic, info);
  }

  /** Every topic, sources and tiers first. */
  all(): TopicInfo[] {
    return [...this.topics.values()];
  }

  get(topic: string): TopicInfo | undefined {
    return this.topics.get(topic);
  }

  /**
   * The chain step of an event or a copy: the step named `processor` in the sub-topology of
   * `topic`, else the topic's own step (see {@link TopicInfo.step}).
   */
  stepOf(topic: string, processor?: string): ChainStep | undefined {
    const info = this.topics.get(topic);
    if (info === undefined) return undefined;
    if (processor === undefined || processor === '') return info.step;
    return info.subtopology.steps.find((s) => s.processor.name === processor) ?? info.step;
  }

  /** Topics with a role, in topology order. */
  withRole(role: TopicRole): TopicInfo[] {
    return this.all().filter((t) => t.role === role);
  }

  /**
   * @throws Error naming the topic and listing the topology's topics when it is not one of them
   */
  require(topic: string, roles: readonly TopicRole[], what: string): TopicInfo {
    const info = this.topics.get(topic);
    if (info !== undefined && roles.includes(info.role)) return info;
    const known = this.all()
      .filter((t) => roles.includes(t.role))
      .map((t) => `'${t.topic}'`);
    throw new TestDriverError(
      `${what}: '${topic}' is not a ${roles.join(' or ')} topic of this topology (${known.length > 0 ? known.join(', ') : 'none'})`,
    );
  }
}
