/**
 * The VS Code integration suite (test/electron/suite/, the one `npm run test:electron` runs in a
 * desktop VS Code) run inside code-server's extension host, where no desktop VS Code can be
 * downloaded: the suite is compiled into .cache/electron-suite/, a test-only runner extension is
 * packed as a .vsix and installed next to the packaged Context Lens .vsix, code-server is started
 * with the suite's path and a results path in its environment, and headless Chromium opens the
 * examples workspace (the extension host starts only when a window connects). The runner runs
 * Mocha there against the real `vscode` API and writes the counts and failures to the results file.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUITE_INDEX, buildSuite, packageRunner } from '../electron/build.mjs';
import { ARTIFACTS_DIR, hostVsixTarget, poll, screenshot, startWorkbench } from './harness';
import type { Workbench } from './harness';

/** Tests the suite holds today; fewer passing means tests went missing or were skipped. */
const MIN_PASSED = 17;

interface SuiteResults {
  passed: number;
  failed: number;
  pending: number;
  total: number;
  durationMs: number;
  vscodeVersion: string;
  tests: Array<{ title: string; state: string; durationMs: number }>;
  failures: Array<{ title: string; message: string; stack?: string }>;
  error?: string;
}

/** The newest extension host log of the profile, to explain a run that never reported. */
function extHostLogTail(userDataDir: string, chars = 4000): string {
  const logs: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 6 || !existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (/exthost.*\.log$|remoteexthost.*\.log$/i.test(e.name)) logs.push(p);
    }
  };
  walk(join(userDataDir, 'logs'), 0);
  const newest = logs.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  return newest ? `${newest}:\n${readFileSync(newest, 'utf8').slice(-chars)}` : '(no extension host log)';
}

describe('the VS Code integration suite in code-server\'s extension host', () => {
  let wb: Workbench | undefined;
  let resultsDir: string;
  let resultsFile: string;
  const t0 = Date.now();
  const log = (m: string): void => void process.stderr.write(`[electron-suite] ${m} (+${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);

  beforeAll(async () => {
    await buildSuite({ log });
    const runnerVsix: string = packageRunner({ log });
    resultsDir = mkdtempSync(join(tmpdir(), 'context-lens-suite-'));
    resultsFile = join(resultsDir, 'results.json');
    const target = hostVsixTarget();
    wb = await startWorkbench({
      // This machine's platform .vsix, with BAML's runtime: examples/baml-rag is then as clean as
      // ctxlens check finds it (the universal .vsix reports the runtime missing there).
      ...(target ? { target } : {}),
      extraExtensions: [runnerVsix],
      env: { CONTEXT_LENS_SUITE: SUITE_INDEX, CONTEXT_LENS_SUITE_RESULTS: resultsFile },
    });
    log('workbench open; the runner starts the suite once the extension host is up');
  }, 600_000);

  afterAll(async () => {
    await wb?.close();
    if (resultsDir) rmSync(resultsDir, { recursive: true, force: true });
  }, 60_000);

  it(`runs every test of the suite against the vscode API: 0 failures, at least ${MIN_PASSED} passed`, async () => {
    const w = wb!;
    let results: SuiteResults;
    try {
      results = await poll(
        'the suite runner to write its results',
        () => {
          if (!existsSync(resultsFile)) return undefined;
          return JSON.parse(readFileSync(resultsFile, 'utf8')) as SuiteResults;
        },
        { timeoutMs: 300_000, intervalMs: 1_000 },
      );
    } catch (err) {
      await screenshot(w.page, 'electron-suite-timeout').catch(() => undefined);
      throw new Error(`${(err as Error).message}\n${extHostLogTail(w.server.profile.userDataDir)}`);
    }
    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    copyFileSync(resultsFile, join(ARTIFACTS_DIR, 'electron-suite.json'));
    log(`suite: ${results.passed} passed, ${results.failed} failed, ${results.pending} pending in ${results.durationMs} ms (VS Code ${results.vscodeVersion})`);
    expect(results.error, 'the suite could not run').toBeUndefined();
    const failures = results.failures.map((f) => `${f.title}: ${f.message}`);
    expect(failures).toEqual([]);
    expect(results.failed).toBe(0);
    expect(results.pending).toBe(0);
    expect(results.passed).toBeGreaterThanOrEqual(MIN_PASSED);
    // It really ran in the workbench's VS Code, not in some other host.
    expect(results.vscodeVersion).toMatch(/^1\.\d+\.\d+/);
    for (const name of ['activation', 'diagnostics', 'code lenses', 'hovers', 'restart']) {
      expect(results.tests.some((t) => t.title.includes(name) && t.state === 'passed'), `a passed test of "${name}"`).toBe(true);
    }
  }, 330_000);
});
