#!/usr/bin/env node
// `npm test`: builds the project, makes sure the prerequisites of every test tier are installed
// (see scripts/prereqs.mjs), then runs all tiers with vitest. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

run(process.execPath, ['esbuild.js']);
// Static checks first: the types, and the lint rules that keep the layers apart.
run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.', '--noEmit']);
run(process.execPath, ['node_modules/eslint/bin/eslint.js', 'src']);
if (existsSync('scripts/prereqs.mjs')) run(process.execPath, ['scripts/prereqs.mjs']);
run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)]);
