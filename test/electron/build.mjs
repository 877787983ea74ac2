#!/usr/bin/env node
// Compiles the VS Code integration suite (test/electron/) into .cache/electron-suite/ (git-ignored):
//   suite/*.js     one file per source file, not bundled: index.js (Mocha entry with run()) and the
//                  *.test.js files it globs; `vscode` and `mocha` are required at run time (the
//                  extension host provides `vscode`, Mocha comes from the repository's node_modules)
//   runTest.js     the @vscode/test-electron launcher of `npm run test:electron`
//   runner/        the test-only runner extension (main.js bundled, package.json, LICENSE, README.md)
// and, with --runner-vsix (or packageRunner()), packs runner/ into
// .cache/electron-suite/context-lens-suite-runner.vsix with @vscode/vsce.
// Usage: node test/electron/build.mjs [--runner-vsix]
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(HERE, '..', '..');
export const SUITE_OUT = join(REPO_ROOT, '.cache', 'electron-suite');
export const SUITE_INDEX = join(SUITE_OUT, 'suite', 'index.js');
export const RUNNER_DIR = join(SUITE_OUT, 'runner');
export const RUNNER_VSIX = join(SUITE_OUT, 'context-lens-suite-runner.vsix');

const require = createRequire(import.meta.url);

/** Compiles the suite, the launcher and the runner extension; returns the number of suite files. */
export async function buildSuite({ log = () => {} } = {}) {
  const esbuild = require('esbuild');
  const t0 = Date.now();
  const suiteSrc = join(HERE, 'suite');
  const sources = readdirSync(suiteSrc).filter((f) => f.endsWith('.ts')).map((f) => join(suiteSrc, f));
  rmSync(join(SUITE_OUT, 'suite'), { recursive: true, force: true });
  const common = { platform: 'node', format: 'cjs', target: 'node20', sourcemap: 'inline', sourcesContent: false, logLevel: 'warning' };
  await esbuild.build({ ...common, entryPoints: sources, outdir: join(SUITE_OUT, 'suite'), bundle: false });
  await esbuild.build({ ...common, entryPoints: [join(HERE, 'runTest.ts')], outfile: join(SUITE_OUT, 'runTest.js'), bundle: false });
  mkdirSync(RUNNER_DIR, { recursive: true });
  await esbuild.build({
    ...common,
    entryPoints: [join(HERE, 'runner', 'main.ts')],
    outfile: join(RUNNER_DIR, 'main.js'),
    bundle: true,
    external: ['vscode'],
    sourcemap: false,
  });
  copyFileSync(join(HERE, 'runner', 'package.json'), join(RUNNER_DIR, 'package.json'));
  copyFileSync(join(REPO_ROOT, 'LICENSE'), join(RUNNER_DIR, 'LICENSE'));
  writeFileSync(
    join(RUNNER_DIR, 'README.md'),
    '# Context Lens suite runner\n\nTest-only extension built by test/electron/build.mjs: it runs the integration suite named by `CONTEXT_LENS_SUITE` and writes the results to `CONTEXT_LENS_SUITE_RESULTS`.\n',
  );
  log(`electron suite: compiled ${sources.length} files into ${SUITE_OUT} in ${Date.now() - t0} ms`);
  return sources.length;
}

/** Packs the runner extension into RUNNER_VSIX with vsce (after buildSuite); returns its path. */
export function packageRunner({ log = () => {} } = {}) {
  if (!existsSync(join(RUNNER_DIR, 'main.js'))) throw new Error('run buildSuite() first');
  rmSync(RUNNER_VSIX, { force: true });
  const vsce = join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  const r = spawnSync(
    process.execPath,
    [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', RUNNER_VSIX],
    { cwd: RUNNER_DIR, encoding: 'utf8', timeout: 120_000 },
  );
  if (r.status !== 0 || !existsSync(RUNNER_VSIX)) {
    throw new Error(`vsce package of the runner failed (exit ${r.status}):\n${r.stdout ?? ''}${r.stderr ?? ''}`);
  }
  log(`electron suite: packed ${RUNNER_VSIX} (${statSync(RUNNER_VSIX).size} bytes)`);
  return RUNNER_VSIX;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const log = (m) => console.log(m);
  buildSuite({ log })
    .then(() => {
      if (process.argv.includes('--runner-vsix')) packageRunner({ log });
    })
    .catch((err) => {
      console.error(`electron suite: ${err.stack ?? err.message}`);
      process.exit(1);
    });
}
