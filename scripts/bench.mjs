#!/usr/bin/env node
// `npm run bench`: builds, then bundles every bench/*.ts module with esbuild and runs each one's
// `run()` in turn, in this process. Each bench prints its own table; this script writes the
// collected numbers to test-results/bench.json. Timings live here, never in tests.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const only = process.argv.slice(2);
const r = spawnSync(process.execPath, ['esbuild.js'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

const benches = readdirSync('bench')
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((name) => only.length === 0 || only.includes(name))
  .sort();

mkdirSync('.cache/bench', { recursive: true });
mkdirSync('test-results', { recursive: true });
// A partial run (`npm run bench -- tokens`) updates its own entries and keeps the others.
const resultsPath = 'test-results/bench.json';
const results = only.length && existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, 'utf8')) : {};
for (const name of benches) {
  const outfile = resolve('.cache/bench', `${name}.cjs`);
  await build({
    entryPoints: [join('bench', `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    // autocannon (bench/service.ts, the load generator of `ctxlens serve`) runs its workers from its own files.
    external: ['tiktoken', 'gpt-tokenizer', 'playwright-core', 'vscode', 'js-tiktoken', 'autocannon'],
    logLevel: 'warning',
  });
  console.log(`\n## bench/${name}\n`);
  const mod = await import(pathToFileURL(outfile).href);
  const started = Date.now();
  try {
    results[name] = await (mod.run ?? mod.default.run)();
  } catch (e) {
    console.error(`bench/${name} failed:`, e);
    results[name] = { error: String(e) };
  }
  console.log(`(bench/${name}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
writeFileSync(resultsPath, JSON.stringify(results, null, 2) + '\n');
console.log('\nwrote test-results/bench.json');
