import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology, type BranchSpec } from '../dsl/topology-builder.js';
import { NoMatchingBranchError, SerializationError } from '../errors.js';
import type { InputRecord } from '../record/record-types.js';
import { compile } from '../topology/compile.js';
import { routeOutputs } from './route-outputs.js';
import { subtopologyView } from './subtopology-view.js';

const viewOf = (branch: BranchSpec) =>
  subtopologyView(
    compile(
      topology('app')
        .source('in', 'json')
        .process('p', (r) => r.value)
        .branch(branch),
    ).subtopologies.get(0)!,
  );

const raw: InputRecord = {
  topic: 'in',
  partition: 0,
  offset: 7,
  timestamp: 1_000,
  key: Buffer.from('k'),
  value: Buffer.from('{}'),
  headers: { trace: 't', 'weir.attempts': '2' },
};
const record = { key: 'k', value: {}, headers: { trace: 't' }, topic: 'in', partition: 0, offset: 7, timestamp: 1_000 };
const text = (b: Buffer | null) => b?.toString('utf8');

describe('routeOutputs', () => {
  it('multicast: every output to every sink, output by output, each serialized with its sink’s serdes', () => {
    const view = viewOf({ success: { all: [sink('a'), sink('b', { value: 'string' })] } });
    const routed = routeOutputs(view, raw, record, [{ key: 'k2', value: 'x', headers: { h: '1' } }], 'y');
    expect(Array.isArray(routed)).toBe(true);
    const out = routed as Exclude<typeof routed, { error: unknown }>;
    expect(out.map((o) => [o.topic, text(o.key), text(o.value)])).toEqual([
      ['a', 'k2', '"x"'],
      ['b', 'k2', 'x'],
      ['a', 'k', '"y"'],
      ['b', 'k', 'y'],
    ]);
    expect(out[1]!.headers).toEqual({ trace: 't', h: '1' });
    expect(out[3]!.headers).toEqual({ trace: 't' });
    expect(out.every((o) => o.timestamp === 1_000)).toBe(true);
  });

  it('multicast: a sink that cannot serialize an output fails the whole record (no copy is written)', () => {
    const view = viewOf({ success: { all: [sink('a'), sink('b', { value: 'buffer' })] } });
    const routed = routeOutputs(view, raw, record, undefined, { not: 'a buffer' });
    expect(routed).toMatchObject({ error: expect.any(SerializationError) });
  });

  it('multicast and first-match: a filter (nothing returned, nothing forwarded) writes nothing', () => {
    expect(routeOutputs(viewOf({ success: { all: ['a', 'b'] } }), raw, record, [], undefined)).toEqual([]);
    expect(routeOutputs(viewOf({ success: 'a' }), raw, record, undefined, undefined)).toEqual([]);
  });

  it('first-match: the first route whose predicate holds takes each output; none holding is an error', () => {
    const view = viewOf({
      success: [
        { when: (o) => o.value === 1, to: 'one' },
        { when: (o) => o.value === 2, to: 'two' },
      ],
    });
    const routed = routeOutputs(view, raw, record, [{ value: 2 }], 1);
    expect((routed as Array<{ topic: string }>).map((o) => o.topic)).toEqual(['two', 'one']);
    expect(routeOutputs(view, raw, record, undefined, 3)).toMatchObject({ error: expect.any(NoMatchingBranchError) });
  });
});
