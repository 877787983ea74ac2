#!/usr/bin/env node
// `npm run package`: a production build (`node esbuild.js --production`) packaged by @vscode/vsce into
// out/context-lens-<version>.vsix (dependencies are bundled, so --no-dependencies; .vscodeignore
// decides the contents). The build runs in a staging folder, out/vsix-stage/, so packaging never
// rewrites dist/ under a test tier that is running the built CLI or server at the same time.
// Also exports the staleness check the end-to-end tier and `npm start` use to repackage only when an
// input changed.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './code-server.mjs';

function manifest() {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
}

/** Absolute path of the .vsix for the current package.json version (a platform's: `<name>-<target>-<version>.vsix`). */
export function vsixPath(target) {
  const { name, version } = manifest();
  return join(REPO_ROOT, 'out', target ? `${name}-${target}-${version}.vsix` : `${name}-${version}.vsix`);
}

/**
 * BAML's runtime is a native module, one npm package per platform (@boundaryml/baml's optional
 * dependencies). A platform's .vsix (`vsce --target`) carries it as dist/baml/: @boundaryml/baml's
 * own files and that platform's binary beside them, where its loader looks first; the language
 * server requires it from there (src/node/bamlRuntime.ts) the first time a .baml file is rendered.
 * vsce leaves node_modules/ out of a package built with --no-dependencies, hence dist/. The
 * universal .vsix carries none (BAML files then get a finding that names the package).
 */
export const BAML_PLATFORMS = {
  'linux-x64': 'linux-x64-gnu',
  'linux-arm64': 'linux-arm64-gnu',
  'alpine-x64': 'linux-x64-musl',
  'alpine-arm64': 'linux-arm64-musl',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64-msvc',
  'win32-arm64': 'win32-arm64-msvc',
};

/** Copies @boundaryml/baml and the target's binary into the stage's dist/baml/. */
function stageBamlRuntime(stage, target) {
  const platform = BAML_PLATFORMS[target];
  if (!platform) throw new Error(`unknown --target ${target} (known: ${Object.keys(BAML_PLATFORMS).join(', ')})`);
  const from = join(REPO_ROOT, 'node_modules', '@boundaryml');
  const binary = join(from, `baml-${platform}`, `baml.${platform}.node`);
  for (const need of [join(from, 'baml', 'package.json'), binary]) {
    if (!existsSync(need)) {
      throw new Error(`${relative(REPO_ROOT, need)} is missing: for the ${target} package, npm pack @boundaryml/baml-${platform}@${manifest().devDependencies?.['@boundaryml/baml'] ?? ''} and unpack it into node_modules/@boundaryml/baml-${platform}`);
    }
  }
  const to = join(stage, 'dist', 'baml');
  cpSync(join(from, 'baml'), to, { recursive: true, dereference: true });
  cpSync(binary, join(to, `baml.${platform}.node`));
}

// Everything that can change the packaged bytes.
const INPUTS = ['src', 'media', 'schemas', 'syntaxes', 'docs', 'package.json', 'esbuild.js', '.vscodeignore', 'README.md', 'CHANGELOG.md', 'LICENSE'];

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted file shows up as a newer directory mtime
  for (const e of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, e)));
  return newest;
}

/** True when the .vsix is missing or older than any of its inputs (including language-configuration*.json). */
export function isVsixStale(out = vsixPath()) {
  if (!existsSync(out)) return true;
  const built = statSync(out).mtimeMs;
  const extra = readdirSync(REPO_ROOT).filter((f) => /^language-configuration.*\.json$/.test(f));
  return [...INPUTS, ...extra].some((p) => newestMtime(join(REPO_ROOT, p)) > built);
}

function run(label, args, cwd) {
  const r = spawnSync(process.execPath, args, { cwd, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${label} failed with exit code ${r.status}`);
}

// Copied into the stage as they are; everything else in the .vsix is built there.
const STAGE_COPIES = ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'NOTICE.md', '.vscodeignore', 'media', 'schemas', 'syntaxes'];

/**
 * Builds for production in out/vsix-stage and packages it; returns the .vsix path and its size in
 * bytes. `tag` gives the build a stage and an output folder of its own (out/<tag>/), for a caller
 * that may run beside another packaging of the same target (a test tier).
 */
export function packageExtension({ log = console.log, target, tag } = {}) {
  const t0 = Date.now();
  for (const f of ['README.md', 'LICENSE']) {
    if (!existsSync(join(REPO_ROOT, f))) throw new Error(`${f} is missing; vsce needs it to package`);
  }
  // A platform's stage is its own, so a platform package and the universal one never share a folder.
  const stage = join(REPO_ROOT, 'out', `${target ? `vsix-stage-${target}` : 'vsix-stage'}${tag ? `-${tag}` : ''}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  // esbuild.js builds relative to its working directory: links to the sources and dependencies let it
  // write dist/ inside the stage (esbuild resolves the links, so imports resolve from the repository).
  const links = ['src', 'node_modules'].map((d) => join(stage, d));
  for (const d of ['src', 'node_modules']) symlinkSync(join(REPO_ROOT, d), join(stage, d), 'dir');
  try {
    run('production build', [join(REPO_ROOT, 'esbuild.js'), '--production'], stage);
  } finally {
    for (const l of links) unlinkSync(l);
  }
  // The CLI bundle is the `ctxlens` command of the npm package, not part of the editor extension;
  // source maps would only appear if esbuild.js changed its production settings.
  // The CLI, the npm library and the service are for the npm package, not the editor.
  for (const f of ['cli.js', 'service.js', 'serviceWorker.js', 'lib']) rmSync(join(stage, 'dist', f), { recursive: true, force: true });
  for (const f of readdirSync(join(stage, 'dist'), { recursive: true })) {
    if (String(f).endsWith('.map')) rmSync(join(stage, 'dist', String(f)), { force: true });
  }
  const extra = readdirSync(REPO_ROOT).filter((f) => /^language-configuration.*\.json$/.test(f));
  // The documentation pages: diagnostics link into docs/rules.md, and the README links to the rest.
  const pages = readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  for (const f of [...STAGE_COPIES, ...extra, ...pages]) {
    if (existsSync(join(REPO_ROOT, f))) cpSync(join(REPO_ROOT, f), join(stage, f), { recursive: true });
  }
  if (target) stageBamlRuntime(stage, target);
  const { main } = manifest();
  if (main && !existsSync(join(stage, main))) {
    throw new Error(`package.json "main" is ${main} but the build did not produce it (does src/extension/main.ts exist?)`);
  }
  const out = tag ? join(REPO_ROOT, 'out', tag, basename(vsixPath(target))) : vsixPath(target);
  if (tag) mkdirSync(dirname(out), { recursive: true });
  run(
    'vsce package',
    [
      join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce'),
      'package',
      '--no-dependencies',
      // No repository URL (nothing is published from here); README images stay relative to the
      // package, which is where VS Code's extension page resolves them.
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      '--out',
      out,
      ...(target ? ['--target', target] : []),
    ],
    stage,
  );
  const bytes = statSync(out).size;
  log(`package: ${relative(REPO_ROOT, out)} ${(bytes / 1024).toFixed(1)} KB (${bytes} bytes) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { path: out, bytes };
}

/** Packages only when isVsixStale(); returns the .vsix path. */
export function ensureVsix({ log = console.log } = {}) {
  const out = vsixPath();
  if (!isVsixStale(out)) {
    log(`package: ${relative(REPO_ROOT, out)} is up to date`);
    return out;
  }
  return packageExtension({ log }).path;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    // `node scripts/package.mjs --target linux-x64`: that platform's .vsix, with BAML's runtime.
    const at = process.argv.indexOf('--target');
    packageExtension(at > 0 ? { target: process.argv[at + 1] } : {});
  } catch (err) {
    console.error(`package: ${err.message}`);
    process.exit(1);
  }
}
