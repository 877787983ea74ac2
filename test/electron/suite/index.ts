/**
 * Entry of the VS Code integration suite in the layout @vscode/test-electron expects: `run()` is
 * called inside the extension host (desktop VS Code via test/electron/runTest.ts, or code-server's
 * extension host via the runner extension in test/electron/runner/), loads every `*.test.js` beside
 * this file into Mocha (tdd ui) and rejects when a test fails. `runWithResults()` is the same run
 * returning the counts and failures, which the runner writes to a JSON file.
 * Compiled to .cache/electron-suite/ by test/electron/build.mjs.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

export interface SuiteTestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs: number;
}

export interface SuiteResults {
  passed: number;
  failed: number;
  pending: number;
  total: number;
  durationMs: number;
  tests: SuiteTestResult[];
  failures: Array<{ title: string; message: string; stack?: string }>;
}

export interface RunOptions {
  /** Only tests whose full title matches (Mocha's grep). */
  grep?: string;
  /** Per-test timeout in ms (default 60 s: the first analysis loads a tokenizer). */
  timeoutMs?: number;
}

/** The compiled test files of the suite: `*.test.js` in this folder, sorted for a stable order. */
export function testFiles(dir = __dirname): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => join(dir, f));
}

export function runWithResults(opts: RunOptions = {}): Promise<SuiteResults> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: opts.timeoutMs ?? 60_000, reporter: 'spec' });
  if (opts.grep) mocha.grep(opts.grep);
  const files = testFiles();
  if (files.length === 0) return Promise.reject(new Error(`no *.test.js files in ${__dirname}`));
  for (const f of files) mocha.addFile(f);
  const t0 = Date.now();
  const results: SuiteResults = { passed: 0, failed: 0, pending: 0, total: 0, durationMs: 0, tests: [], failures: [] };
  return new Promise((resolve, reject) => {
    try {
      const runner = mocha.run(() => {
        results.durationMs = Date.now() - t0;
        results.total = results.passed + results.failed + results.pending;
        resolve(results);
      });
      runner.on('pass', (t) => {
        results.passed++;
        results.tests.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration ?? 0 });
      });
      runner.on('pending', (t) => {
        results.pending++;
        results.tests.push({ title: t.fullTitle(), state: 'pending', durationMs: 0 });
      });
      // 'fail' also fires for failing hooks, which count as failures too.
      runner.on('fail', (t, err: Error) => {
        results.failed++;
        results.tests.push({ title: t.fullTitle(), state: 'failed', durationMs: t.duration ?? 0 });
        results.failures.push({ title: t.fullTitle(), message: err?.message ?? String(err), stack: err?.stack });
      });
    } catch (err) {
      reject(err);
    }
  });
}

/** What @vscode/test-electron calls: resolves when every test passed. */
export async function run(): Promise<void> {
  const r = await runWithResults({ grep: process.env.CONTEXT_LENS_SUITE_GREP || undefined });
  if (r.failed > 0) throw new Error(`${r.failed} of ${r.total} tests failed: ${r.failures.map((f) => f.title).join('; ')}`);
}
