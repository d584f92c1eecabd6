import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layerViolations } from './check-layers.js';
import { repoRoot } from './lib/repo-paths.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'weir-layers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const src = mkdtempSync(path.join(tmp, 'src-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    writeFileSync(path.join(src, file), text);
  }
  return src;
}

describe('check-layers', () => {
  it('passes on weir’s own src/', () => {
    expect(layerViolations(path.join(repoRoot, 'src'))).toEqual([]);
  });

  it('names an import up the layers, an import between siblings and a folder it does not know', () => {
    const src = tree({
      'runtime/task.ts': "import { x } from '../worker/worker.js';\nexport const y = x;\n",
      'worker/worker.ts': 'export const x = 1;\n',
      'kafkajs/a.ts': "export { y } from '../librdkafka/b.js';\n",
      'librdkafka/b.ts': 'export const y = 2;\n',
      'shiny/c.ts': "import '../record/d.js';\n",
      'record/d.ts': 'export {};\n',
      'runtime/task.test.ts': "import { x } from '../worker/worker.js';\n",
    });
    const problems = layerViolations(src);
    expect(problems).toHaveLength(3);
    expect(problems.find((p) => p.includes('runtime/task.ts'))).toMatch(/runtime → worker: up the layers/);
    expect(problems.find((p) => p.includes('kafkajs/a.ts'))).toMatch(/kafkajs → librdkafka: siblings/);
    expect(problems.find((p) => p.includes('shiny/c.ts'))).toMatch(/'shiny' is not a layer/);
  });
});
