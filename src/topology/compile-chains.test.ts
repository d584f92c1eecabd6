import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { topology } from '../dsl/topology-builder.js';
import { compile } from './compile.js';
import { fn, problemOf } from './compile.test-support.js';
import { consumedTopics, producedTopics, routeOf } from './compiled-topology.js';

const topics = { retry: { mode: 'topics' as const, maxAttempts: 3 } };

describe('compile: processor chains', () => {
  it('compiles each step with its own options, DLQ and retry tiers, routing each tier to its step', () => {
    const compiled = compile(
      topology('app')
        .source('in', { key: 'string', value: 'string' })
        .process('parse', fn)
        .process('enrich', fn, { ...topics, timeoutMs: 50, dlq: 'enrich-dead', inputSerdes: 'buffer' })
        .branch({ success: 'out' }),
    );
    const sub = compiled.subtopologies.get(0)!;
    expect(sub.steps.map((s) => [s.index, s.processor.name, s.deadLetter.topic, s.retryTiers.size]).toArray()).toEqual([
      [0, 'parse', 'app.parse.dlq', 0],
      [1, 'enrich', 'enrich-dead', 2],
    ]);
    expect(sub.processor.name).toBe('parse');
    expect(sub.steps.get(1)!.processor.timeoutMs).toBe(50);
    expect(sub.steps.map((s) => [s.inputKeySerde.name, s.inputValueSerde.name]).toArray()).toEqual([
      ['string', 'string'],
      ['string', 'buffer'],
    ]);
    expect(consumedTopics(compiled)).toEqual(['in', 'app.enrich.retry.0', 'app.enrich.retry.1']);
    expect(routeOf(compiled, 'app.enrich.retry.1')).toMatchObject({ step: { index: 1 }, tier: { index: 1 } });
    expect(routeOf(compiled, 'in')).toMatchObject({ step: { index: 0 }, tier: null });
    expect(producedTopics(compiled).map((t) => t.topic)).toEqual([
      'out',
      'app.parse.dlq',
      'enrich-dead',
      'app.enrich.retry.0',
      'app.enrich.retry.1',
    ]);
    // A later step's input defaults to JSON values.
    const json = compile(topology('app').source('in', 'string').process('a', fn).process('b', fn).branch({ success: 'out' }));
    expect(json.subtopologies.get(0)!.steps.get(1)!.inputValueSerde.name).toBe('json');
  });

  describe('errors name the step', () => {
    it('a step after a terminal branch, from a kept builder or from the topology builder (plain JavaScript)', () => {
      const t = topology('app').source('in');
      const parse = t.process('parse', fn);
      parse.branch({ success: 'out' });
      parse.process('late', fn);
      expect(problemOf(t)).toMatchObject({ node: 'late' });
      expect(problemOf(t).message).toMatch(/step 'late' comes after the terminal branch\(\) of 'parse'/);
      const js = topology('app').source('in').process('parse', fn).branch({ success: 'out' }) as unknown as {
        process: (n: string, f: unknown) => unknown;
      };
      js.process('later', fn);
      expect(problemOf(js).message).toMatch(/node 'later': step 'later' comes after the terminal branch\(\) of 'parse'/);
    });

    it('a duplicate processor name in a chain, and a chain that forks', () => {
      expect(problemOf(topology('app').source('in').process('p', fn).process('p', fn).branch({ success: 'out' })).message).toMatch(
        /node 'p': duplicate node name: .*'p' is already the name of processor 'p'/,
      );
      // Names weir derives share the namespace, and the message says which node has the name.
      const topics = { retry: { mode: 'topics' } } as const;
      expect(
        problemOf(topology('app').source('in').process('x', fn, topics).process('x-retry-0', fn).branch({ success: 'out' })).message,
      ).toMatch(/node 'x-retry-0': duplicate node name: .*'x-retry-0' is already the node of retry tier 0 of processor 'x'/);
      expect(problemOf(topology('app').source('in').process('x', fn).process('x-dlq', fn).branch({ success: 'out' })).message).toMatch(
        /node 'x-dlq': duplicate node name: .*'x-dlq' is already the dead-letter node of processor 'x'/,
      );
      const t = topology('app').source('in');
      const a = t.process('a', fn);
      a.process('b', fn);
      a.process('c', fn).branch({ success: 'out' });
      expect(problemOf(t).message).toMatch(/node 'c': step 'c' is chained to 'a', which already has a next step/);
    });

    it('options that belong elsewhere: dedup after the first step, inputSerdes on the first, branch retry or dlq twice', () => {
      const dedup = { key: () => 'k', ttlMs: 1000 };
      expect(
        problemOf(topology('app').source('in').process('a', fn).process('b', fn, { dedup }).branch({ success: 'out' })).message,
      ).toMatch(/node 'b': dedup applies to source records/);
      expect(problemOf(topology('app').source('in').process('a', fn, { inputSerdes: 'json' }).branch({ success: 'out' })).message).toMatch(
        /node 'a': inputSerdes is for chain steps after the first/,
      );
      expect(
        problemOf(
          topology('app')
            .source('in')
            .process('a', fn)
            .process('b', fn)
            .branch({ success: 'out', retry: { maxAttempts: 2 } }),
        ).message,
      ).toMatch(/node 'b': branch\(\{ retry \}\) is for a single processor/);
      const misplaced = problemOf(
        topology('app')
          .source('in')
          .process('a', fn)
          .process('b', fn)
          .branch({ success: 'out', retry: { maxAttempts: 0 } }),
      ).message;
      expect(misplaced).toMatch(/node 'b': branch\(\{ retry \}\) is for a single processor/);
      expect(misplaced).toMatch(/in branch\(\{ retry \}\): .*maxAttempts/);
      expect(
        problemOf(topology('app').source('in').process('a', fn).process('b', fn, { dlq: 'x' }).branch({ success: 'out', dlq: 'y' }))
          .message,
      ).toMatch(/node 'b': dead-letter sink given twice/);
      expect(
        problemOf(
          topology('app')
            .source('in')
            .process('a', fn)
            .process('b', fn, { inputSerdes: 'nope' as never })
            .branch({ success: 'out' }),
        ).message,
      ).toMatch(/node 'b': unknown serde 'nope' for the input value/);
    });

    it('a step DLQ that is the source, a sink, or another step’s retry tier', () => {
      expect(
        problemOf(topology('app').source('in').process('a', fn, { dlq: 'in' }).process('b', fn).branch({ success: 'out' })).message,
      ).toMatch(/node 'a-dlq': dead-letter topic 'in' is the source topic of its own processor 'a'/);
      expect(
        problemOf(
          topology('app')
            .source('in')
            .process('a', fn, { dlq: sink('out') })
            .process('b', fn)
            .branch({ success: 'out' }),
        ).message,
      ).toMatch(/dead-letter topic 'out' is also a success sink of 'b'/);
      expect(
        problemOf(
          topology('app').source('in').process('a', fn, { dlq: 'app.b.retry.0' }).process('b', fn, topics).branch({ success: 'out' }),
        ).message,
      ).toMatch(/dead-letter topic 'app\.b\.retry\.0' is a retry tier topic of processor 'b'/);
    });
  });
});
