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
results.load_average = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
summary(results);
writeFileSync(resultsPath, JSON.stringify(results, null, 2) + '\n');
console.log('\nwrote test-results/bench.json');

/**
 * The performance table of the project (one row per measure, with its target), from this run's
 * results and, for benches not run this time, the last recorded ones in test-results/bench.json.
 */
function summary(r) {
  const at = (o, ...path) => path.reduce((x, k) => (x == null ? undefined : x[k]), o);
  const n = (x, digits = 1) => (typeof x === 'number' && !Number.isNaN(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits }) : '–');
  const ok = (met) => (met === undefined ? '' : met ? 'met' : 'not met');
  const lsp = r.lsp ?? {};
  const lib = r.library;
  const svc = at(r, 'service', 'assembled_varied');
  const svc2 = at(r, 'service', 'assembled_varied_workers2');
  const cold = (tk) => at(r, 'assembly', tk, '10000', 'cold_ms');
  const rows = [
    ['edit → published diagnostics, 20 KB template + 1 MB fixture', `p50 ${n(lsp.edit_to_diagnostics_p50_ms)} / p95 ${n(lsp.edit_to_diagnostics_p95_ms)} ms`, 'p95 ≤ 16 ms', lsp.edit_to_diagnostics_p95_ms === undefined ? undefined : lsp.edit_to_diagnostics_p95_ms <= 16],
    ['edit → lenses, same', `p50 ${n(lsp.edit_to_lenses_p50_ms)} / p95 ${n(lsp.edit_to_lenses_p95_ms)} ms`, 'p95 ≤ 16 ms', lsp.edit_to_lenses_p95_ms === undefined ? undefined : lsp.edit_to_lenses_p95_ms <= 16],
    ['edit → lenses, a plain prompt file composed with three others + 1 MB fixture', `p50 ${n(at(r, 'plain', 'edit_to_lenses_p50_ms'))} / p95 ${n(at(r, 'plain', 'edit_to_lenses_p95_ms'))} ms`, 'p95 ≤ 16 ms', at(r, 'plain', 'edit_to_lenses_p95_ms') === undefined ? undefined : r.plain.edit_to_lenses_p95_ms <= 16],
    ['first analysis on open, same files', `${n(lsp.first_analysis_ms, 0)} ms`, '≤ 300 ms', lsp.first_analysis_ms === undefined ? undefined : lsp.first_analysis_ms <= 300],
    ['cold assembly, 10,000 evidence items (o200k / chars4)', `${n(cold('o200k_base'), 0)} / ${n(cold('chars4'), 0)} ms`, '≤ 100 ms', cold('chars4') === undefined ? undefined : Math.max(cold('chars4'), cold('o200k_base') ?? 0) <= 100],
    ['`ctxlens check`, 1,000 templates + configs + fixtures', `${n(at(r, 'check', 'medianMs') / 1000, 2)} s`, '≤ 2 s', at(r, 'check', 'medianMs') === undefined ? undefined : r.check.medianMs <= 2000],
    ['hostile-workspace scan, peak RSS', `${n(lsp.hostile_scan_peak_rss_mb, 0)} MB`, '≤ 200 MB', lsp.hostile_scan_peak_rss_mb === undefined ? undefined : lsp.hostile_scan_peak_rss_mb <= 200],
    ['`ctxlens serve`, 200 different requests of 50 candidates, 8 connections, `--workers 1` / `2` (one thread in process)', svc ? `${n(svc.requests_per_s, 0)}/s, p99 ${n(svc.p99_ms)} ms / ${n(svc2?.requests_per_s, 0)}/s, p99 ${n(svc2?.p99_ms)} ms (${n(at(r, 'service', 'in_process_answer', 'per_s'), 0)}/s)` : '–', '≥ 1,000/s, p99 ≤ 20 ms', svc ? [svc, svc2 ?? svc].some((x) => x.requests_per_s >= 1000 && x.p99_ms <= 20) : undefined],
    ['library `assemble()`, 50 fresh evidence items, in process', lib ? `${n(lib.fresh.library.mean_ms, 2)} ms mean` : '–', '≤ 1 ms', lib ? lib.fresh.library.mean_ms <= 1 : undefined],
    ['side by side: `assemble()` / dotprompt compiled render, 50 fresh items', lib ? `${n(lib.fresh.library.mean_ms, 2)} / ${n(lib.fresh.dotprompt.mean_ms, 3)} ms = ${n(lib.fresh.ratio, 2)}×` : '–', '≤ 2×', lib ? lib.fresh.ratio <= 2 : undefined],
    ['side by side, items recur (50 of a store of 200)', lib ? `${n(lib.recurring.library.mean_ms, 2)} / ${n(lib.recurring.dotprompt.mean_ms, 3)} ms = ${n(lib.recurring.ratio, 2)}×` : '–', '< 1×', lib ? lib.recurring.ratio < 1 : undefined],
    ['"what loads" for a file, 20,000 files / 200 instruction files: cold in process / `ctxlens agents` (with the workspace checks)', at(r, 'agents', 'cold_ms') === undefined ? '–' : `${n(r.agents.cold_ms, 0)} / ${n(r.agents.cli_cold_ms, 0)} ms`, '≤ 1 s', at(r, 'agents', 'met', 'cold')],
    ['"what loads", warm (the server\'s host, files known)', at(r, 'agents', 'warm_p50_ms') === undefined ? '–' : `p50 ${n(r.agents.warm_p50_ms)} / p95 ${n(r.agents.warm_p95_ms)} ms`, '≤ 50 ms', at(r, 'agents', 'met', 'warm')],
    ['instruction-file lenses, 1 MB file: first / after an edit', at(r, 'agents', 'lens_1mb_first_ms') === undefined ? '–' : `${n(r.agents.lens_1mb_first_ms, 0)} / p50 ${n(r.agents.lens_1mb_edit_p50_ms, 0)} ms`, '', undefined],
    ['BAML: edit → lenses, 20-function project (BAML\'s runtime renders)', at(r, 'baml', 'edit_to_lenses_p95_ms') === undefined ? '–' : `p50 ${n(r.baml.edit_to_lenses_p50_ms)} / p95 ${n(r.baml.edit_to_lenses_p95_ms)} ms (fromFiles ${n(r.baml.from_files_ms)} ms)`, 'p95 ≤ 50 ms', at(r, 'baml', 'edit_to_lenses_p95_ms') === undefined ? undefined : r.baml.edit_to_lenses_p95_ms <= 50],
    ['BAML: `assemble()` / `buildRequestSync`, 50 items', at(r, 'baml', 'assemble_over_runtime') === undefined ? '–' : `${n(r.baml.assemble_50_items_ms, 2)} / ${n(r.baml.build_request_sync_50_items_ms, 2)} ms = ${n(r.baml.assemble_over_runtime, 2)}×`, '≤ 2×', at(r, 'baml', 'assemble_over_runtime') === undefined ? undefined : r.baml.assemble_over_runtime <= 2],
    ['.vsix size', at(r, 'vsix', 'bytes') === undefined ? '–' : `${n(r.vsix.bytes / 1024 / 1024, 2)} MB`, '< 10 MB', at(r, 'vsix', 'met')],
  ];
  console.log(`\n## summary (load average ${r.load_average})\n`);
  console.log('| measure | now | target | |');
  console.log('|---|---:|---:|---|');
  for (const [name, value, target, met] of rows) console.log(`| ${name} | ${value} | ${target} | ${ok(met)} |`);
}
