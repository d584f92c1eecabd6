/**
 * The built CLI as a user runs it: exit codes and messages for bad topology files and bad
 * config, describe's formats and what it says about outages, and a stop while loading.
 * (Running workers: cli-run.test.ts.)
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/repo-paths.js';
import { copyTopology as VALID, topologyFilesIn, weirCli as weir } from './support/cli-process.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-cli');
const tmp = fx.tempDir();
const topologyFile = topologyFilesIn(tmp);

describe(onClient('weir CLI'), () => {
  it('exits 2 naming the file for a missing file, a syntax error and a missing default export', async () => {
    const missing = await weir(['run', 'topologies/nope.ts']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('topologies/nope.ts: file not found');

    const broken = topologyFile('broken.ts', 'export default topology(\n');
    const syntax = await weir(['validate', broken]);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toContain(`${broken}: failed to load`);

    const noDefault = topologyFile('no-default.ts', 'export const x = 1;\n');
    const none = await weir(['describe', noDefault]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`${noDefault}: has no default export`);
  });

  it('says first that a .ts file was loaded as CommonJS, and how to make it an ES module', async () => {
    const dir = path.join(tmp, 'commonjs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "commonjs" }\n');
    const file = topologyFilesIn(dir)('cjs.ts', VALID('cjs', 'cjs-in'));
    const result = await weir(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: failed to load: it was loaded as CommonJS, but topology files are ES modules`);
    expect(result.stderr).toMatch(/name the file \.mts, or set "type": "module" in the package\.json of its folder \(Node: /);
  });

  it('exits 2 naming the file for a top-level await that never settles (Node alone exits 13 and says nothing)', async () => {
    const file = topologyFile('never-settles.ts', 'await new Promise(() => {});\nexport default 1;\n');
    for (const command of ['validate', 'run']) {
      const result = await weir([command, file]);
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toContain(`${file}: failed to load: its top-level await never settled`);
    }
  });

  it('validate gives up on a file still loading after WEIR_TOPOLOGY_LOAD_TIMEOUT_MS (a timer keeps its never-settling await alive)', async () => {
    const file = topologyFile('never-loads.ts', 'setInterval(() => {}, 1_000);\nawait new Promise(() => {});\nexport default 1;\n');
    const began = Date.now();
    const result = await weir(['validate', file], { WEIR_TOPOLOGY_LOAD_TIMEOUT_MS: '1000' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: failed to load: still loading after 1000 ms`);
    expect(Date.now() - began).toBeLessThan(30_000);
    const bad = await weir(['describe', file], { WEIR_TOPOLOGY_LOAD_TIMEOUT_MS: 'soon' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("invalid config 'WEIR_TOPOLOGY_LOAD_TIMEOUT_MS': must be a whole number of ms");
  });

  it('validate and describe end after printing even when the topology file leaves a handle open (a timer)', async () => {
    const file = topologyFile(
      'open-handle.ts',
      `import { topology, sink } from 'weir';\nsetInterval(() => {}, 1_000);\n` +
        `export default topology('cli-handle').source('in').process('p', (r) => r.value).branch({ success: sink('out') });\n`,
    );
    // Without the fix both hang until the helper's 60 s timeout kills them (exit 1 then).
    const validated = await weir(['validate', file]);
    expect(validated.code).toBe(0);
    expect(validated.stdout).toContain(`${file}: ok`);
    const described = await weir(['describe', file, '--format', 'json']);
    expect(described.code).toBe(0);
    expect(JSON.parse(described.stdout).applicationId).toBe('cli-handle');
  });

  it('exits 2 naming the file, the node and the problem for a topology that does not compile; the stack only with --verbose', async () => {
    const file = topologyFile(
      'bad-retry.ts',
      `import { topology } from 'weir';
export default topology('app').source('in').process('enrich', (r) => r.value, { retry: { maxAttempts: 3, backoff: { initialMs: 500, maxMs: 100 } } }).branch({ success: 'out' });
`,
    );
    const quiet = await weir(['run', file]);
    expect(quiet.code).toBe(2);
    expect(quiet.stderr).toContain(`${file}: node 'enrich': retry.backoff.maxMs (100) is less than retry.backoff.initialMs (500)`);
    expect(quiet.stderr).not.toMatch(/\n\s+at /);
    const verbose = await weir(['validate', file, '--verbose']);
    expect(verbose.code).toBe(2);
    expect(verbose.stderr).toMatch(/\n\s+at /);
  });

  it('run --help lists the exit codes', async () => {
    const help = await weir(['run', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes: 0 a clean shutdown .*; 1 .*--shutdown-timeout-ms; 2 a bad flag/);
  });

  it.each([
    [['dlq', 'inspect', '--nope'], "error: unknown option '--nope'"],
    [['dlq', 'replay'], "error: missing required argument 'dlq-topic'"],
    [['dlq', 'inspect', 'topic', '--format', 'xml'], '--format'],
  ])('weir %j: a usage error is one line and a hint, exit 2, not the whole help', async (args, problem) => {
    const result = await weir(args);
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toContain(problem);
    expect(lines.at(-1)).toBe("(add --help to see the command's arguments and options)");
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(result.stderr).not.toContain('Usage:');
  });

  it('a SIGTERM while the topology file is still loading ends in exit 0, not in death by the signal', async () => {
    const marker = path.join(tmp, `loading-${randomUUID().slice(0, 8)}`);
    const file = topologyFile(
      'slow-load.ts',
      `import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { topology, sink } from 'weir';
writeFileSync(${JSON.stringify(marker)}, 'loading');
await sleep(5_000);
export default topology('cli-slow').source('cli-slow-in', 'json').process('copy', (r) => r.value).branch({ success: sink('cli-slow-out') });
`,
    );
    const began = Date.now();
    const result = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      const child = execFile(process.execPath, [path.join(repoRoot, 'bin', 'weir.js'), 'run', file], { cwd: repoRoot, timeout: 60_000 });
      child.on('exit', (code, signal) => resolve({ code, signal }));
      // SIGTERM once the file is being loaded (it wrote its marker), well before its 5 s are up.
      const poll = setInterval(() => {
        if (existsSync(marker)) {
          clearInterval(poll);
          child.kill('SIGTERM');
        }
      }, 20);
    });
    expect(await result).toEqual({ code: 0, signal: null });
    expect(Date.now() - began).toBeLessThan(30_000);
  });

  it('reports every problem of a topology file in one run, each naming its node', async () => {
    const file = topologyFile(
      'two-mistakes.ts',
      `import { sink, topology } from 'weir';
export default topology('app')
  .source('orders')
  .process('parse', (r) => r.value, { retry: { maxAttempts: 0 } })
  .branch({ success: sink('orders') });
`,
    );
    const result = await weir(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: 2 problems: [WEIR_TOPOLOGY_INVALID]\n  node 'parse': retry.maxAttempts`);
    expect(result.stderr).toContain(
      "\n  node 'parse-to-orders': sink topic 'orders' is the source topic of its own processor 'parse' (a loop)",
    );
  });

  it('exits 2 naming the source for .source().branch() without a processor (a compile error, not a TypeError)', async () => {
    const file = topologyFile(
      'no-process.ts',
      `import { sink, topology } from 'weir';
export default topology('app').source('orders').branch({ success: sink('out') });
`,
    );
    const result = await weir(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: node 'orders': .branch() needs a processor before it`);
    expect(result.stderr).toContain('WEIR_TOPOLOGY_INVALID');
    expect(result.stderr).not.toContain('TypeError');
  });

  it.each([
    ['circuitBreaker: { failureRateThreshold: 1.5 }', 'circuitBreaker.failureRateThreshold must be a number in (0, 1] (got 1.5)'],
    ['circuitBreaker: { minimumCalls: 0 }', 'circuitBreaker.minimumCalls must be an integer ≥ 1 (got 0)'],
    ['circuitBreaker: { openMs: 9000, maxOpenMs: 1000 }', 'circuitBreaker.openMs (9000) is more than circuitBreaker.maxOpenMs (1000)'],
    ['timeoutMs: -5', 'timeoutMs must be a number of ms > 0, at most 2147483647 (about 24.8 days) (got -5)'],
    ['retryBudget: { ratio: -1 }', 'retryBudget.ratio must be a number ≥ 0 (got -1)'],
    [
      "retry: { backoff: { jitter: 'gauss' } }",
      'retry.backoff.jitter must be one of none, full, equal, additive, decorrelated (got "gauss")',
    ],
  ])('validate exits 2 naming the processor and the field for bad outage options: %s', async (options, problem) => {
    const file = topologyFile(
      `bad-outage-${options.replace(/[^a-z]/gi, '').slice(0, 24)}.ts`,
      `import { topology } from 'weir';
export default topology('app').source('in').process('enrich', (r) => r.value, { ${options} }).branch({ success: 'out' });
`,
    );
    const result = await weir(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}: node 'enrich': ${problem}`);
  });

  it('exits 2 naming the config key for a bad value', async () => {
    const file = topologyFile('ok.ts', VALID('cli-ok', 'cli-in'));
    const env = await weir(['run', file], { KAFKA_BROKERS: 'no-port-here' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("invalid config 'KAFKA_BROKERS'");
    const flag = await weir(['run', file, '--guarantee', 'twice']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("invalid config '--guarantee'");
    const unknown = await weir(['run', file, '--no-such-flag']);
    expect(unknown.code).toBe(2);
    // The flags of stream threads and the second client.
    for (const [args, flagName] of [
      [['--threads', '0'], '--threads'],
      [['--threads', '-1'], '--threads'],
      [['--threads', 'two'], '--threads'],
      [['--client', 'rdkafka'], '--client'],
      [['--client', 'librdkafka', '--group-instance-id', ''], '--group-instance-id'],
      [['--client', 'librdkafka', '--group-instance-id', 'a,a', '--threads', '2'], '--group-instance-id'],
    ] as const) {
      const bad = await weir(['run', file, ...args]);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr, args.join(' ')).toContain(`invalid config '${flagName}`);
    }
  });

  it('describes a topology as text, JSON and Mermaid, and rejects an unknown format', async () => {
    const text = await weir(['describe', 'topologies/orders.ts']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Processor: enrich (retry: blocking, maxAttempts: 5');
    const json = await weir(['describe', 'topologies/orders.ts', '--format', 'json']);
    expect(JSON.parse(json.stdout).subtopologies[0].edges).toContainEqual({ from: 'enrich', to: 'enrich-dlq', kind: 'dlq' });
    const mermaid = await weir(['describe', 'topologies/orders.ts', '--format', 'mermaid']);
    expect(mermaid.stdout).toMatch(/^flowchart LR/);
    expect(mermaid.stdout).toContain('-->|dlq|');
    const bad = await weir(['describe', 'topologies/orders.ts', '--format', 'svg']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("invalid config '--format': must be one of text, json, mermaid");
    expect(bad.stderr).not.toContain('--verbose');
  });

  it('describes and validates the topology as `weir run` would run it: --guarantee and --commit-interval-ms, or their env, override the file', async () => {
    const header = (stdout: string): string | undefined => stdout.split('\n')[0];
    expect(header((await weir(['describe', 'topologies/orders.ts'])).stdout)).toContain(
      'processing.guarantee: at_least_once, commit.interval.ms: 1000',
    );
    // exactly_once brings Kafka Streams' commit interval default with it (100 ms).
    expect(header((await weir(['describe', 'topologies/orders.ts', '--guarantee', 'exactly_once'])).stdout)).toContain(
      'processing.guarantee: exactly_once, commit.interval.ms: 100',
    );
    const fromEnv = await weir(['describe', 'topologies/orders.ts', '--format', 'json'], {
      WEIR_PROCESSING_GUARANTEE: 'exactly_once',
      WEIR_COMMIT_INTERVAL_MS: '250',
    });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ processingGuarantee: 'exactly_once', commitIntervalMs: 250 });
    // The flag wins over the environment, as with `weir run`.
    const flagWins = await weir(['describe', 'topologies/orders.ts', '--guarantee', 'at_least_once'], {
      WEIR_PROCESSING_GUARANTEE: 'exactly_once',
    });
    expect(header(flagWins.stdout)).toContain('processing.guarantee: at_least_once');
    for (const [args, env, name] of [
      [['--guarantee', 'exactly-once'], {}, '--guarantee'],
      [['--commit-interval-ms', '0'], {}, '--commit-interval-ms'],
      [[], { WEIR_PROCESSING_GUARANTEE: 'maybe' }, 'WEIR_PROCESSING_GUARANTEE'],
    ] as const) {
      for (const command of ['describe', 'validate']) {
        const bad = await weir([command, 'topologies/orders.ts', ...args], env);
        expect(bad.code, `${command} ${args.join(' ')}`).toBe(2);
        expect(bad.stderr).toContain(`invalid config '${name}'`);
      }
    }
  });

  it("describe says how long an outage a breaker rides out: the docs' example rides out a 2-minute outage (issue 23)", async () => {
    // The options exactly as docs/retry-and-dlq.md shows them, so the docs cannot drift back.
    const docs = readFileSync(path.join(repoRoot, 'docs', 'retry-and-dlq.md'), 'utf8');
    const options = /```ts\n\.process\('enrich', enrich, (\{[\s\S]*?\n\})\)\n```/.exec(docs)?.[1];
    expect(options, "docs/retry-and-dlq.md's breaker example").toBeDefined();
    const file = topologyFile(
      'breaker-example.ts',
      `import { topology, sink } from 'weir';\nconst enrich = (r: { value: unknown }) => r.value;\n` +
        `export default topology('cli-breaker').source('in', 'json').process('enrich', enrich, ${options}).branch({ success: sink('out') });\n`,
    );
    const text = await weir(['describe', file]);
    expect(text.code, text.stderr).toBe(0);
    const rideOut = /outages ridden out: up to (\d+)ms/.exec(text.stdout);
    expect(rideOut, text.stdout).not.toBeNull();
    expect(Number(rideOut![1])).toBeGreaterThan(2 * 60_000);
    expect(text.stdout).not.toContain('warning:');
    const json = JSON.parse((await weir(['describe', file, '--format', 'json'])).stdout);
    expect(json.subtopologies[0].nodes[1].outageRideOut.minOutageToDeadLetterMs).toBe(Number(rideOut![1]));

    // The defaults: minimumCalls 5 above maxAttempts 3, which describe warns about.
    const defaults = topologyFile(
      'breaker-defaults.ts',
      `import { topology, sink } from 'weir';\n` +
        `export default topology('cli-breaker').source('in', 'json').process('p', (r) => r.value, { circuitBreaker: {} }).branch({ success: sink('out') });\n`,
    );
    const warned = await weir(['describe', defaults]);
    expect(warned.stdout).toContain('warning: minimumCalls (5) is more than maxAttempts (3)');
  });
});
