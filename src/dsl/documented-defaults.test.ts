import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { circuitBreakerSchema, retryBudgetSchema, retrySchema } from './options-schema.js';

/** A file of the repository, its whitespace runs made one space (so a line break or `10 000` reads the same). */
const read = (path: string): string =>
  readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8').replace(/[\s\u00a0\u202f]+/g, ' ');

/** `10 000` → 10000. */
const numberOf = (text: string): number => Number(text.replace(/ /g, ''));

/**
 * The README's options table row of `option`: its field names and its "when given" defaults,
 * e.g. `| \`retryBudget: { ratio, minPerSecond }\` | off; when given: 0.2, 10 | …`.
 */
function readmeRow(readme: string, option: string): Record<string, number> {
  const row = new RegExp(`\\| \`${option}: \\{ ([^}]*) \\}\` \\| off; when given: ([^|]*) \\|`).exec(readme);
  if (row === null) throw new Error(`README.md has no options table row for ${option}`);
  const names = row[1]!.split(', ');
  const values = row[2]!.trim().split(', ').map(numberOf);
  expect(values).toHaveLength(names.length);
  return Object.fromEntries(names.map((name, i) => [name, values[i]!]));
}

describe('the defaults that README.md and docs/retry-and-dlq.md give are the schemas’ defaults', () => {
  const readme = read('README.md');

  it('circuitBreaker: every field in the table, in order, with its default', () => {
    expect(readmeRow(readme, 'circuitBreaker')).toEqual(circuitBreakerSchema.parse({}));
    expect(Object.keys(readmeRow(readme, 'circuitBreaker'))).toEqual(Object.keys(circuitBreakerSchema.parse({})));
  });

  it('retryBudget: every field in the table, in order, with its default', () => {
    expect(readmeRow(readme, 'retryBudget')).toEqual(retryBudgetSchema.parse({}));
    expect(Object.keys(readmeRow(readme, 'retryBudget'))).toEqual(Object.keys(retryBudgetSchema.parse({})));
  });

  it("retry: README's 'Defaults: 3 attempts, 500 ms × 2 up to 30 s, equal jitter, blocking'", () => {
    const line = /Defaults: (\d+) attempts, ([\d ]+) ms × (\d+) up to (\d+) s, (\w+) jitter, (\w+)\./.exec(readme);
    expect(line, 'README.md states the retry defaults').not.toBeNull();
    const [, maxAttempts, initialMs, multiplier, maxS, jitter, mode] = line!;
    const defaults = retrySchema.parse({});
    expect({
      maxAttempts: Number(maxAttempts),
      backoff: { initialMs: numberOf(initialMs!), multiplier: Number(multiplier), maxMs: Number(maxS) * 1_000, jitter },
      mode,
    }).toEqual({ maxAttempts: defaults.maxAttempts, backoff: defaults.backoff, mode: defaults.mode });
  });

  it('retry: the comments of the example in docs/retry-and-dlq.md', () => {
    const docs = read('docs/retry-and-dlq.md');
    const defaults = retrySchema.parse({});
    expect(/maxAttempts: \d+, \/\/ attempts in all, the first included \(default (\d+)\)/.exec(docs)?.[1]).toBe(
      String(defaults.maxAttempts),
    );
    expect(/mode: '\w+', \/\/ '(\w+)' \(default\)/.exec(docs)?.[1]).toBe(defaults.mode);
    expect(/maxReplays: \d+, \/\/ loop guard for `weir dlq replay`, default (\d+)/.exec(docs)?.[1]).toBe(String(defaults.maxReplays));
    expect(/\*\*`maxReplays`\*\* \(default (\d+)\)/.exec(docs)?.[1]).toBe(String(defaults.maxReplays));
  });
});
