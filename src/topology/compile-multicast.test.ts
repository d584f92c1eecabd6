import { describe, expect, it } from 'vitest';
import { sink } from '../dsl/sink.js';
import { compile } from './compile.js';
import { one, problemOf } from './compile.test-support.js';

describe('compile: multicast success branch (success: { all })', () => {
  it('compiles every listed sink, in order, with routing "all" and its own serdes', () => {
    const compiled = compile(one({}, { success: { all: [sink('audit', { value: 'string' }), 'out'] }, dlq: 'dlq' }));
    const sub = compiled.subtopologies.get(0)!;
    expect(sub.successRouting).toBe('all');
    expect(sub.sinks.map((s) => [s.name, s.topic, s.valueSerde.name, s.when]).toArray()).toEqual([
      ['p-to-audit', 'audit', 'string', null],
      ['p-to-out', 'out', 'json', null],
    ]);
  });

  it('keeps a plain sink and a route list first-match', () => {
    expect(compile(one()).subtopologies.get(0)!.successRouting).toBe('first-match');
    expect(compile(one({}, { success: ['a'] })).subtopologies.get(0)!.successRouting).toBe('first-match');
  });

  it('rejects a sink that is the source topic, naming the sink and the processor', () => {
    const error = problemOf(one({}, { success: { all: ['out', sink('in')] } }));
    expect(error.message).toMatch(/node 'p-to-in': sink topic 'in' is the source topic of its own processor 'p' \(a loop\)/);
  });

  it('rejects a topic listed twice, naming the processor', () => {
    const error = problemOf(one({}, { success: { all: ['a', sink('a', { name: 'again' })] } }));
    expect(error).toMatchObject({ node: 'p' });
    expect(error.message).toMatch(/success: \{ all \} lists topic 'a' twice/);
  });

  it('a topic listed twice does not hide the problems of the other sinks, and its repeats add none', () => {
    const error = problemOf(one({}, { success: { all: ['a', 'a', sink('in'), 'a', 'bad topic!'] } }));
    expect(error.problems.map((p) => [p.node, p.problem.slice(0, 32)])).toEqual([
      ['p', "success: { all } lists topic 'a'"],
      ['p', "success: { all } lists topic 'a'"],
      ['p-to-in', "sink topic 'in' is the source to"],
      ['p-to-bad topic!', "topic name 'bad topic!' has char"],
    ]);
  });

  it('rejects an empty list, a sink that is also the DLQ, extra keys and a route with a predicate', () => {
    expect(problemOf(one({}, { success: { all: [] } })).message).toMatch(/node 'p': success.all must be a non-empty list/);
    expect(problemOf(one({}, { success: { all: ['a', 'dlq'] }, dlq: 'dlq' })).message).toMatch(
      /dead-letter topic 'dlq' is also a success sink of 'p'/,
    );
    expect(problemOf(one({}, { success: { all: ['a'], first: true } as never })).message).toMatch(
      /node 'p': unknown option 'first' in success: { all }/,
    );
    expect(problemOf(one({}, { success: { all: [{ when: () => true, to: 'a' }] } as never })).message).toMatch(
      /multicast sink 1 must be sink\('topic'\) or a topic name/,
    );
  });
});
