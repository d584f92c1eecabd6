import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');

/** The files whose code docs/testing.md may show; each runs in `npm test` (or is what it tests). */
const SOURCES = ['topologies/orders.property.test.ts', 'topologies/orders.ts', 'topologies/order-inputs.ts'];

describe('docs/testing.md', () => {
  const guide = read('docs/testing.md');
  const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\n$/, ''));

  it('shows only code that runs: every ts block is a verbatim excerpt of the guide’s test file or topology', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    const sources = SOURCES.map(read);
    const strays = blocks.filter((block) => !sources.some((source) => source.includes(block)));
    expect(strays, 'code blocks that are not in ' + SOURCES.join(' or ')).toEqual([]);
  });

  it('links the test file it walks through', () => {
    expect(guide).toContain('(../topologies/orders.property.test.ts)');
  });
});
