#!/usr/bin/env node
// `npm start`, the README's demo: builds and packages the extension, then opens examples/ with it
// loaded — in desktop VS Code when a `code` command exists, otherwise in the browser VS Code of the
// end-to-end tier (code-server on 127.0.0.1:8080, or $PORT, or the next free port), printing the URL and
// staying in the foreground until Ctrl+C. `--browser` forces the browser workbench.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { REPO_ROOT, createProfile, firstFreePort, installExtension, startCodeServer } from './code-server.mjs';
import { ensureVsix } from './package.mjs';
import { ensurePrereqs } from './prereqs.mjs';

const log = (m) => console.log(`start: ${m}`);

function findOnPath(cmd) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}

/** Desktop VS Code's CLI; code-server's own remote `code` helper (inside its terminals) does not count. */
function desktopCode() {
  if (process.argv.includes('--browser') || process.env.CONTEXT_LENS_BROWSER) return undefined;
  const code = findOnPath('code');
  if (!code || /code-server|remote-cli/.test(code)) return undefined;
  return code;
}

async function main() {
  const t0 = Date.now();
  if (!existsSync(join(REPO_ROOT, 'node_modules', 'esbuild'))) {
    log('installing dependencies (npm ci)');
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('npm ci failed');
  }
  const vsix = ensureVsix({ log });
  const examples = join(REPO_ROOT, 'examples');
  const workspace = existsSync(examples) ? examples : REPO_ROOT;
  if (workspace !== examples) log('examples/ does not exist yet; opening the repository instead');

  const code = desktopCode();
  if (code) {
    // --extensionDevelopmentPath runs the extension from dist/ of this repository (the .vsix is
    // staged elsewhere), so build it here too.
    const b = spawnSync(process.execPath, ['esbuild.js'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (b.status !== 0) throw new Error('build failed');
    log(`opening ${relative(REPO_ROOT, workspace) || '.'} in desktop VS Code (${code}) with the extension from this repository`);
    const r = spawnSync(code, [`--extensionDevelopmentPath=${REPO_ROOT}`, workspace], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`${code} exited with ${r.status}`);
    log(`to install it for good: code --install-extension ${relative(REPO_ROOT, vsix)}`);
    return;
  }

  await ensurePrereqs({ chromium: false, log });
  // A profile kept between runs, so the demo remembers layout and open editors like a real install.
  const profile = createProfile({ root: join(REPO_ROOT, '.cache', 'demo') });
  installExtension(profile, vsix);
  const port = await firstFreePort(Number(process.env.PORT) || 8080);
  const server = await startCodeServer({ profile, port, workspace });
  const url = server.folderUrl(workspace);
  console.log(`\nContext Lens demo ready in ${((Date.now() - t0) / 1000).toFixed(1)} s:\n\n  ${url}\n`);
  console.log(`(code-server log: ${relative(REPO_ROOT, profile.logFile)}; Ctrl+C stops it)`);

  let stopping = false;
  const stop = async (sig) => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping code-server`);
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const { code: exitCode, signal } = await server.exited;
  if (!stopping) {
    console.error(`start: code-server exited (${signal ?? exitCode}); see ${profile.logFile}`);
    process.exit(typeof exitCode === 'number' && exitCode !== 0 ? exitCode : 1);
  }
}

main().catch((err) => {
  console.error(`start: ${err.message}`);
  process.exit(1);
});
