#!/usr/bin/env node
// `npm test`: builds the project, makes sure the prerequisites of every test tier are installed
// (see scripts/prereqs.mjs), then runs all tiers with vitest. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// A fresh clone has no node_modules: install the locked dependencies first (also when the lockfile
// changed since the last install), so `npm test` alone is enough on a new machine.
const installed = 'node_modules/.package-lock.json';
if (!existsSync(installed) || statSync('package-lock.json').mtimeMs > statSync(installed).mtimeMs) {
  console.log('test: installing the locked npm dependencies (npm ci)');
  run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['ci', '--no-audit', '--no-fund']);
}

run(process.execPath, ['esbuild.js']);
// Static checks first: the types, and the lint rules that keep the layers apart.
run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.', '--noEmit']);
run(process.execPath, ['node_modules/eslint/bin/eslint.js', 'src']);
if (existsSync('scripts/prereqs.mjs')) run(process.execPath, ['scripts/prereqs.mjs']);
run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)]);
