#!/usr/bin/env node
// weir's `postinstall`: makes the optional librdkafka client (`@confluentinc/kafka-javascript`,
// `weir run --client librdkafka`) usable on machines that reach only the npm registry.
//
// package.json blocks the package's own install script (`allowScripts`), which downloads a
// prebuilt binary from GitHub and otherwise builds librdkafka statically, downloading zlib —
// both fail without GitHub access. This runs that script itself with `CKJS_LINKING=dynamic`:
// it still tries the prebuilt download first, then builds the bundled librdkafka against the
// system's zlib and OpenSSL (2–3 minutes on 2 cores; needs a C/C++ toolchain, make and python3).
// It does nothing when the native module already loads.
//
// Outcome: under CI=true a client that does not load fails the install (exit 1); elsewhere this
// warns and exits 0 — kafkajs, the default client, needs no native build.
// Plain JavaScript on purpose: it runs before the project's own dependencies (tsx) may be there.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const PACKAGE = '@confluentinc/kafka-javascript';
const ci = /^(1|true)$/i.test(process.env.CI ?? '');
const require = createRequire(import.meta.url);

/** The package's folder, or undefined when npm did not install it (an optional dependency). */
function packageDir() {
  try {
    return path.dirname(require.resolve(`${PACKAGE}/package.json`));
  } catch {
    return undefined;
  }
}

/** Whether the package (and so its native module) loads, in a child process. */
function loads(dir) {
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(dir)})`], { encoding: 'utf8' });
  return { ok: probe.status === 0, error: (probe.stderr ?? '').trim().split('\n').slice(-3).join(' ') };
}

function done(problem) {
  if (problem === undefined) return;
  const message = `weir: ${PACKAGE} (the optional librdkafka client, --client librdkafka) is not usable: ${problem}`;
  if (ci) {
    console.error(`${message}\nweir: CI=true, so this fails the install.`);
    process.exit(1);
  }
  console.warn(`${message}\nweir: kafkajs (the default client) works without it. See README.md, "The librdkafka client".`);
}

function main() {
  const dir = packageDir();
  if (dir === undefined) return `npm did not install it (optional dependencies omitted, or unsupported platform)`;
  if (loads(dir).ok) return undefined;
  const started = Date.now();
  console.log(`weir: building ${PACKAGE} (librdkafka, dynamic linking against the system's zlib and OpenSSL); this takes a few minutes…`);
  // The package's own `install` script (node-pre-gyp: prebuilt download, else a build from the bundled source).
  const npm = process.env.npm_execpath;
  const [command, args] =
    npm !== undefined && existsSync(npm)
      ? [process.execPath, [npm, 'run', 'install', '--prefix', dir]]
      : ['npm', ['run', 'install', '--prefix', dir]];
  const build = spawnSync(command, args, {
    cwd: dir,
    env: { ...process.env, CKJS_LINKING: 'dynamic' },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  // The compiler's output is long: it goes to a log, and its end to the console on failure.
  const output = `${build.stdout ?? ''}${build.stderr ?? ''}`;
  const log = path.join(dir, 'build', 'weir-install.log');
  mkdirSync(path.dirname(log), { recursive: true });
  writeFileSync(log, output);
  if (build.status !== 0) {
    console.error(output.trim().split('\n').slice(-40).join('\n'));
    return `its build failed (exit ${build.status ?? build.signal}); the whole output is in ${log}`;
  }
  const after = loads(dir);
  if (!after.ok) return `it was built but does not load: ${after.error}`;
  console.log(`weir: ${PACKAGE} ready in ${Math.round((Date.now() - started) / 1000)} s (build output: ${log})`);
  return undefined;
}

done(main());
