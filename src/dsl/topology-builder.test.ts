import { describe, expect, it } from 'vitest';
import { TopologyError } from '../errors.js';
import { sink, isSinkSpec } from './sink.js';
import { topology, topologyDefinitionOf } from './topology-builder.js';

const identity = (record: { value: unknown }) => record.value;

describe('topology builder', () => {
  it('records each source → process → branch chain as the user wrote it, in order', () => {
    const retry = { maxAttempts: 4 };
    const built = topology({ applicationId: 'orders', processingGuarantee: 'exactly_once' })
      .source('orders', 'json', { name: 'orders-in' })
      .process('enrich', identity, { retry })
      .branch({ success: sink('orders.out'), dlq: sink('orders.dlq') })
      .source('payments', { key: 'string', value: 'buffer' })
      .process('settle', identity)
      .branch({ success: sink('payments.out') });
    const definition = topologyDefinitionOf(built)!;
    expect(definition.options).toEqual({ applicationId: 'orders', processingGuarantee: 'exactly_once' });
    expect(definition.subtopologies.map((s) => [s.sourceTopic, s.sourceName, s.processorName])).toEqual([
      ['orders', 'orders-in', 'enrich'],
      ['payments', undefined, 'settle'],
    ]);
    expect(definition.subtopologies[0]!.processOptions).toEqual({ retry });
    expect(definition.subtopologies[1]!.sourceSerdes).toEqual({ key: 'string', value: 'buffer' });
    expect(definition.subtopologies[1]!.processOptions).toEqual({});
  });

  it('takes a bare application id as the options', () => {
    expect(topologyDefinitionOf(topology('app'))!.options).toEqual({ applicationId: 'app' });
  });

  it('finds the definition behind every builder object of the chain, and nothing behind other values', () => {
    const root = topology('app');
    const source = root.source('in');
    const processor = source.process('p', identity);
    for (const builder of [root, source, processor]) expect(topologyDefinitionOf(builder)).toBe(topologyDefinitionOf(root));
    for (const value of [undefined, null, 42, 'topology', {}, { subtopologies: [] }]) expect(topologyDefinitionOf(value)).toBeUndefined();
  });

  it('.source().branch() without a processor is a TopologyError naming the source, not a TypeError', () => {
    const source = topology('app').source('orders', 'json');
    const branch = () => (source.branch as unknown as (spec: unknown) => unknown)({ success: sink('out') });
    expect(branch).toThrow(TopologyError);
    expect(branch).toThrow(/node 'orders': \.branch\(\) needs a processor before it: \.source\(topic\)\.process\('name', fn\)/);
    const named = topology('app').source('orders', 'json', { name: 'orders-in' });
    expect(() => (named.branch as unknown as (spec: unknown) => unknown)({})).toThrow(/node 'orders-in'/);
  });
});

describe('sink', () => {
  it('is a frozen spec with its topic and options, recognised by isSinkSpec', () => {
    const spec = sink('orders.out', { name: 'to-out', partitions: 6, value: 'string' });
    expect(spec).toMatchObject({ topic: 'orders.out', name: 'to-out', partitions: 6, value: 'string' });
    expect(Object.isFrozen(spec)).toBe(true);
    expect(isSinkSpec(spec)).toBe(true);
    expect(() => {
      (spec as { topic: string }).topic = 'elsewhere';
    }).toThrow(TypeError);
  });

  it('is not confused with a look-alike object', () => {
    for (const value of [{ topic: 'x' }, 'x', null, undefined]) expect(isSinkSpec(value)).toBe(false);
  });
});
