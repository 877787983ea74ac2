/**
 * A test-only extension that runs the integration suite inside the extension host it is installed
 * into (code-server's, where @vscode/test-electron cannot download a desktop VS Code). It does
 * nothing unless two environment variables, inherited from the code-server process by its
 * extension host, are set:
 *   CONTEXT_LENS_SUITE          absolute path of the compiled suite's index.js (exports runWithResults)
 *   CONTEXT_LENS_SUITE_RESULTS  absolute path of the JSON file to write the results to
 * The results file is written once, atomically (temp file + rename), with
 * { passed, failed, pending, total, durationMs, tests, failures, vscodeVersion } or { error } when the
 * suite could not run. Bundled by test/electron/build.mjs into the runner's .vsix.
 */
import { renameSync, writeFileSync } from 'node:fs';
import * as vscode from 'vscode';

interface SuiteModule {
  runWithResults(opts?: { grep?: string }): Promise<Record<string, unknown>>;
}

function write(path: string, data: Record<string, unknown>): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ ...data, vscodeVersion: vscode.version, at: new Date().toISOString() }, null, 2) + '\n');
  renameSync(tmp, path);
}

export function activate(): void {
  const suitePath = process.env.CONTEXT_LENS_SUITE;
  const out = process.env.CONTEXT_LENS_SUITE_RESULTS;
  if (!suitePath || !out) return;
  // Run after activate() returns, so the extension host finishes starting the other extensions.
  setTimeout(() => {
    void (async () => {
      try {
        // A plain require of a file outside this extension: the suite and its Mocha come from the
        // repository's build, not from the .vsix.
        const suite = require(suitePath) as SuiteModule;
        const results = await suite.runWithResults({ grep: process.env.CONTEXT_LENS_SUITE_GREP || undefined });
        write(out, results);
      } catch (err) {
        write(out, { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    })();
  }, 0);
}

export function deactivate(): void {}
