#!/usr/bin/env node
// Installs what the test tiers and the demo need beyond `npm ci`, idempotently and fast when all is
// present: Debian's chromium (webview and end-to-end tiers) and neovim (test/lsp/neovim.test.ts,
// installed along with chromium, so not for the demo), the native build tools code-server's
// install needs (libkrb5-dev, pkg-config, make, g++, python3), and the pinned code-server + Node 24 in
// .cache/code-server/ (see scripts/code-server.mjs), and Python's jinja2 as the oracle of the Jinja
// differential tests, and Debian's redis-server and nginx for the service's multi-replica test
// (test/service/replicas.test.ts: a shared context store behind a round-robin proxy). Called by `npm test` (scripts/test.mjs) and by
// `npm start` (without chromium). Usage: node scripts/prereqs.mjs [--no-chromium]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCodeServer, isCodeServerInstalled, pinnedVersions } from './code-server.mjs';

export const CHROMIUM = '/usr/bin/chromium';

function onPath(cmd) {
  return (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, cmd)));
}

/** Debian packages still missing for what is asked: chromium, neovim, redis-server and nginx, and the build tools if code-server must be built. */
export function missingAptPackages({ chromium = true, neovim = chromium, replicas = chromium, codeServerBuild = !isCodeServerInstalled() } = {}) {
  const missing = [];
  if (chromium && !existsSync(CHROMIUM)) missing.push('chromium');
  if (neovim && !onPath('nvim')) missing.push('neovim');
  if (replicas && !existsSync('/usr/bin/redis-server')) missing.push('redis-server');
  if (replicas && !existsSync('/usr/sbin/nginx')) missing.push('nginx');
  if (codeServerBuild) {
    if (!existsSync('/usr/include/krb5.h') && !existsSync('/usr/include/krb5/krb5.h')) missing.push('libkrb5-dev');
    if (!onPath('pkg-config')) missing.push('pkg-config');
    if (!onPath('make') || !onPath('g++')) missing.push('build-essential');
    if (!onPath('python3')) missing.push('python3');
  }
  return missing;
}

function aptInstall(pkgs, log) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    throw new Error(
      `missing system packages: ${pkgs.join(' ')}. Install them as root:\n  sudo apt-get update && sudo apt-get install -y ${pkgs.join(' ')}`,
    );
  }
  if (!onPath('apt-get')) throw new Error(`missing system packages ${pkgs.join(' ')} and no apt-get to install them`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Other processes (another test run, a person) may hold the dpkg lock: wait for it, bounded.
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  for (const args of [['update', ...lock], ['install', '-y', '--no-install-recommends', ...lock, ...pkgs]]) {
    log(`  $ apt-get ${args.join(' ')}`);
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) throw new Error(`apt-get ${args[0]} failed with exit code ${r.status}`);
  }
}

/** Whether python3 can import a module. */
export function pythonHas(mod) {
  return spawnSync('python3', ['-c', `import ${mod}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Ensures every prerequisite; returns what it did. `chromium: false` is for the demo, which needs
 * only code-server.
 */
export async function ensurePrereqs({ chromium = true, oracles = chromium, log = console.log } = {}) {
  const t0 = Date.now();
  const did = [];
  const missing = missingAptPackages({ chromium });
  if (missing.length) {
    log(`prereqs: installing system packages: ${missing.join(' ')}`);
    aptInstall(missing, log);
    did.push(`apt: ${missing.join(' ')}`);
  }
  // Few retries: on a machine whose packages come from a local index, each unreachable default
  // index costs every package five retries with backoff otherwise.
  const PIP = ['-m', 'pip', 'install', '--quiet', '--retries', '1', '--timeout', '30'];
  // Test oracles in Python: jinja2 (Prompty's renderer) from the machine's package index.
  if (oracles && !pythonHas('jinja2')) {
    log('prereqs: installing the Python oracle packages: jinja2==3.1.6');
    const r = spawnSync('python3', [...PIP, 'jinja2==3.1.6'], { stdio: 'inherit' });
    if (r.status !== 0 || !pythonHas('jinja2')) throw new Error('pip install jinja2 failed; the Jinja differential tests need it');
    did.push('pip: jinja2');
  }
  // The oracle of plain prompt files: langchain-core (test/oracle/plain-golden.test.ts). Its own
  // dependencies but langchain-protocol (not on the index; rendering does not need it), then the
  // package itself with --no-deps.
  if (oracles && !pythonHas('langchain_core.prompts')) {
    const deps = ['langsmith==0.14.0', 'tenacity==9.1.4', 'uuid-utils==0.17.1', 'httpx==0.28.1', 'pydantic>=2.7.4', 'jsonpatch', 'pyyaml', 'packaging', 'typing-extensions'];
    log(`prereqs: installing the Python oracle packages: langchain-core==1.6.5 (--no-deps) with ${deps.join(' ')}`);
    const d = spawnSync('python3', [...PIP, ...deps], { stdio: 'inherit' });
    const r = d.status === 0 ? spawnSync('python3', [...PIP, '--no-deps', 'langchain-core==1.6.5'], { stdio: 'inherit' }) : d;
    if (r.status !== 0 || !pythonHas('langchain_core.prompts')) throw new Error('pip install langchain-core failed; the plain-prompt golden suite needs it');
    did.push('pip: langchain-core');
  }
  // Test oracles of the tokenizer families: Hugging Face tokenizers and tiktoken (test/oracle/tokenizers.test.ts).
  if (oracles && !(pythonHas('tokenizers') && pythonHas('tiktoken'))) {
    log('prereqs: installing the Python oracle packages: tokenizers==0.23.2 tiktoken==0.14.0');
    const r = spawnSync('python3', [...PIP, 'tokenizers==0.23.2', 'tiktoken==0.14.0'], { stdio: 'inherit' });
    if (r.status !== 0 || !pythonHas('tokenizers') || !pythonHas('tiktoken')) throw new Error('pip install tokenizers tiktoken failed; the tokenizer oracle needs them');
    did.push('pip: tokenizers, tiktoken');
  }
  const { codeServer, node } = pinnedVersions();
  if (await ensureCodeServer({ log: (m) => log(`prereqs: ${m}`) })) did.push(`code-server ${codeServer} + node ${node}`);
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  log(did.length ? `prereqs: installed ${did.join('; ')} in ${secs} s` : `prereqs: all present (checked in ${secs} s)`);
  return did;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensurePrereqs({ chromium: !process.argv.includes('--no-chromium') }).catch((err) => {
    console.error(`prereqs: ${err.message}`);
    process.exit(1);
  });
}
