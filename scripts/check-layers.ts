/**
 * `npm run check:layers`: fails when production code in `src/` imports against weir's layering
 * (README.md, "How it is built": imports point down only; no two folders import each other). Each top-level
 * folder (or file) of `src/` has a rank; a file may import its own folder, or a folder of a
 * higher rank (lower in the stack). Siblings of one rank never import each other, so the folder
 * graph has no cycles. Test files (`*.test.ts`, `*.test-support.ts`) are left out.
 *
 * Exits 1 with one line per offending import, naming the file, the import and both layers.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './lib/repo-paths.js';

/** Top to bottom. A layer may import only layers below it. */
export const LAYERS: readonly (readonly string[])[] = [
  ['index'],
  ['cli'],
  ['host'],
  ['worker'],
  ['observability'],
  ['config'],
  ['kafkajs', 'librdkafka', 'testing'],
  ['kafka', 'dedup'],
  ['runtime'],
  ['topology'],
  ['failure'],
  ['dsl'],
  ['record'],
  ['errors'],
];

const rankOf = new Map(LAYERS.flatMap((names, rank) => names.map((name) => [name, rank] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return /\.ts$/.test(name) && !/\.test\.ts$|\.test-support\.ts$/.test(name) ? [file] : [];
  });
}

/** Every layering violation in `srcDir`, as `file: imports 'spec' (a → b)` lines. */
export function layerViolations(srcDir: string): string[] {
  const layerOf = (file: string): string =>
    path
      .relative(srcDir, file)
      .split(path.sep)[0]!
      .replace(/\.[jt]s$/, '');
  const problems: string[] = [];
  for (const file of sourceFiles(srcDir)) {
    const from = layerOf(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const spec = match[1]!;
      const target = path.resolve(path.dirname(file), spec);
      if (!target.startsWith(srcDir + path.sep)) continue;
      const to = layerOf(target);
      if (to === from) continue;
      const a = rankOf.get(from);
      const b = rankOf.get(to);
      const where = path.relative(repoRoot, file);
      if (a === undefined || b === undefined)
        problems.push(`${where}: '${a === undefined ? from : to}' is not a layer of scripts/check-layers.ts (add it to LAYERS)`);
      else if (b <= a) problems.push(`${where}: imports '${spec}' (${from} → ${to}: ${b === a ? 'siblings' : 'up the layers'})`);
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = layerViolations(path.join(repoRoot, 'src'));
  if (problems.length > 0) {
    console.error(
      `check-layers: ${problems.length} import(s) against the layering (top to bottom: ${LAYERS.map((l) => l.join(' | ')).join(' > ')}):`,
    );
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(`check-layers: src/ imports point down only (${LAYERS.map((l) => l.join(' | ')).join(' > ')})`);
}
