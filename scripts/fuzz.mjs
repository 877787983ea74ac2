#!/usr/bin/env node
// `npm run fuzz`: the property-based fuzz suite of test/fuzz with a long budget. The same
// properties `npm test` runs for about a minute, here for `--seconds N` in all (default 600),
// split among them in the proportions of test/fuzz/harness.ts, one property after another.
// Prints per property the inputs run, inputs per second, the slowest input, known issues hit and
// failures with their shrunk counterexamples, and writes test-results/fuzz.json.
//
//   npm run fuzz                              10 minutes, a fresh random seed
//   npm run fuzz -- --seconds 120 --seed 42   2 minutes, seed 42 (prints the seed either way)
//   npm run fuzz -- --seconds 60 parsers      only test/fuzz/parsers.test.ts
//
// A failure is reproduced with the FUZZ_REPLAY command it prints, or with FUZZ_SEED=<seed>.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function usage(message) {
  if (message) console.error(`fuzz: ${message}`);
  console.error('usage: npm run fuzz -- [--seconds N] [--seed S] [file filter...]');
  process.exit(2);
}

const args = process.argv.slice(2);
let seconds = 600;
let seed;
const filters = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--seconds' || a === '--seed') {
    const v = args[++i];
    if (v === undefined) usage(`${a} needs a value`);
    if (a === '--seconds') {
      seconds = Number(v);
      if (!(seconds > 0)) usage(`--seconds must be a positive number, got '${v}'`);
    } else {
      seed = Number(v);
      if (!Number.isInteger(seed)) usage(`--seed must be an integer, got '${v}'`);
    }
  } else if (a === '--help' || a === '-h') usage();
  else if (a.startsWith('-')) usage(`unknown option '${a}'`);
  else filters.push(a);
}
// A fresh seed unless one is given: a long run is for inputs `npm test` has not tried.
if (seed === undefined) seed = (Math.random() * 2 ** 31) | 0;

const reportDir = mkdtempSync(join(tmpdir(), 'ctxlens-fuzz-report-'));
console.log(`fuzz: ${seconds} s in all, FUZZ_SEED=${seed}${filters.length ? `, files matching ${filters.join(' ')}` : ''}`);
const started = Date.now();
const files = filters.length ? filters.map((f) => (f.includes('/') ? f : `test/fuzz/${f}`)) : ['test/fuzz'];
const r = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...files, '--no-file-parallelism', '--reporter=dot'], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, FUZZ_SECONDS: String(seconds), FUZZ_SEED: String(seed), FUZZ_REPORT_DIR: reportDir },
});

const records = [];
for (const f of existsSync(reportDir) ? readdirSync(reportDir) : []) {
  for (const line of readFileSync(join(reportDir, f), 'utf8').split('\n')) if (line.trim()) records.push(JSON.parse(line));
}
rmSync(reportDir, { recursive: true, force: true });
records.sort((a, b) => a.property.localeCompare(b.property));

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`\n${pad('property', 30)} ${lpad('inputs', 8)} ${lpad('inputs/s', 9)} ${lpad('seconds', 8)} ${lpad('slowest ms', 10)}  result`);
for (const x of records) {
  const known = x.known ? ` known: ${Object.entries(x.known).map(([k, n]) => `${k} ×${n}`).join(', ')}` : '';
  const result = x.failed ? 'FAILED' : x.belowMinimum ? `ok (below ${x.minRuns} inputs)` : 'ok';
  console.log(`${pad(x.property, 30)} ${lpad(x.inputs, 8)} ${lpad(x.inputsPerSecond, 9)} ${lpad((x.elapsedMs / 1000).toFixed(1), 8)} ${lpad(x.slowestMs, 10)}  ${result}${known}`);
}
const failures = records.filter((x) => x.failed);
for (const x of failures) {
  console.log(`\n${x.property} failed after ${x.inputs} inputs (seed ${x.seed}, ${x.shrinks} shrinks)`);
  console.log(`  counterexample: ${(x.counterexample ?? '').slice(0, 4000)}`);
  if (x.replay) console.log(`  replay: ${x.replay}`);
  console.log(`  error: ${(x.error ?? '').split('\n').slice(0, 6).join('\n         ')}`);
}

mkdirSync('test-results', { recursive: true });
const report = {
  version: 1,
  seed,
  seconds,
  elapsedSeconds: Math.round((Date.now() - started) / 100) / 10,
  node: process.version,
  inputs: records.reduce((n, x) => n + x.inputs, 0),
  failures: failures.length,
  properties: records,
};
writeFileSync('test-results/fuzz.json', JSON.stringify(report, null, 2) + '\n');
console.log(`\nfuzz: ${report.inputs} inputs, ${failures.length} failing propert${failures.length === 1 ? 'y' : 'ies'}, FUZZ_SEED=${seed}; test-results/fuzz.json`);
process.exit(failures.length || r.status !== 0 ? 1 : 0);
