// Bundles every entry point of Context Lens with esbuild, and (with --schema) writes the JSON
// Schema of *.context.yaml generated from the zod schema. Entries that do not exist yet are skipped
// so the build works at every stage of the tree.
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** @type {Array<import('esbuild').BuildOptions & { entry: string }>} */
const targets = [
  // @redis/client (the shared context store of `serve --store`, src/service/redisStore.ts) stays a
  // runtime dependency outside the bundles: it is required only when --store is given.
  { entry: 'src/cli/main.ts', outfile: 'dist/cli.js', platform: 'node', format: 'cjs', banner: { js: '#!/usr/bin/env node' }, external: ['@redis/client'] },
  { entry: 'src/server/main.ts', outfile: 'dist/server.js', platform: 'node', format: 'cjs' },
  { entry: 'src/extension/main.ts', outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode'] },
  { entry: 'src/webview/main.ts', outfile: 'dist/media/webview.js', platform: 'browser', format: 'iife' },
  // The npm library (docs/LIBRARY.md) as CommonJS and ES module bundles with every dependency
  // inside. The core's rank data loader looks for tokenizers/ next to `__dirname`; in dist/lib/
  // that is one folder up, so `__dirname` is defined as dist/ (and, in the ES module, made from
  // import.meta.url, with a `require` for the CommonJS code bundled in). No source maps: the
  // tarball ships no maps.
  {
    entry: 'src/lib/index.ts',
    outfile: 'dist/lib/index.cjs',
    platform: 'node',
    format: 'cjs',
    sourcemap: false,
    define: { __dirname: '__ctxlensDist' },
    banner: { js: 'var __ctxlensDist = require("node:path").join(__dirname, "..");' },
  },
  {
    entry: 'src/lib/index.ts',
    outfile: 'dist/lib/index.mjs',
    platform: 'node',
    format: 'esm',
    sourcemap: false,
    define: { __dirname: '__ctxlensDist' },
    banner: {
      js: [
        'import { createRequire as __ctxlensCreateRequire } from "node:module";',
        'import { fileURLToPath as __ctxlensFileURLToPath } from "node:url";',
        'import { dirname as __ctxlensDirname } from "node:path";',
        'const require = __ctxlensCreateRequire(import.meta.url);',
        'const __ctxlensDist = __ctxlensDirname(__ctxlensDirname(__ctxlensFileURLToPath(import.meta.url)));',
      ].join('\n'),
    },
  },
  // `ctxlens serve` on its own: node dist/service.js --port 0 --root prompts
  { entry: 'src/service/main.ts', outfile: 'dist/service.js', platform: 'node', format: 'cjs', external: ['@redis/client'] },
  // The service's worker thread (started by dist/cli.js serve and dist/service.js)
  { entry: 'src/service/worker.ts', outfile: 'dist/serviceWorker.js', platform: 'node', format: 'cjs' },
];

/** Newest modification time of the files under `dir` (ms), for the up-to-date check of generated files. */
function newest(dir) {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

/**
 * The library's declarations (dist/lib/types, `types` in package.json) with tsc, when a source or
 * tsconfig.lib.json changed since they were written: a full run takes seconds, so an unchanged
 * tree skips it.
 */
function writeLibraryTypes() {
  const marker = path.join(__dirname, 'dist/lib/types/src/lib/index.d.ts');
  const inputs = Math.max(newest(path.join(__dirname, 'src')), fs.statSync(path.join(__dirname, 'tsconfig.lib.json')).mtimeMs, fs.statSync(path.join(__dirname, 'package.json')).mtimeMs);
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= inputs) return;
  const r = require('node:child_process').spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.lib.json'], { cwd: __dirname, stdio: 'inherit' });
  // Type errors are `npm run typecheck`'s to report (tsc still writes the declarations); the
  // bundles do not depend on them, so they do not fail the build.
  if (r.status !== 0) console.warn('esbuild.js: tsc -p tsconfig.lib.json reported type errors; the declarations may be incomplete');
  if (!fs.existsSync(marker)) return;
  // tsc leaves an unchanged file alone; the marker's time is what the check above compares.
  const now = new Date();
  fs.utimesSync(marker, now, now);
}

async function writeSchema() {
  const out = path.join(__dirname, '.cache', 'schema-gen.js');
  await esbuild.build({ entryPoints: ['src/core/config/schema.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: out, logLevel: 'warning' });
  delete require.cache[out];
  const schema = require(out).contextConfigJsonSchema();
  fs.mkdirSync('schemas', { recursive: true });
  fs.writeFileSync('schemas/context.schema.json', JSON.stringify(schema, null, 2) + '\n');
  console.log('wrote schemas/context.schema.json');
}

/**
 * Vocabularies of the exact tokenizers as compact assets beside the bundles (src/core/tokens/
 * rankData.ts and families.ts read them). Converting the open-weight vocabularies (tens of MB of
 * tokenizer.json) takes seconds, so the result is kept in .cache/tokenizer-assets/<key>/, keyed by
 * the converter's bundled code and the versions of the packages the data comes from.
 */
async function writeTokenizerAssets() {
  const out = path.join(__dirname, '.cache', 'rank-assets.js');
  await esbuild.build({ entryPoints: ['src/core/tokens/assets.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: out, logLevel: 'warning' });
  delete require.cache[out];
  const mod = require(out);
  const hash = require('node:crypto').createHash('sha256').update(fs.readFileSync(out));
  for (const pkg of mod.ASSET_SOURCE_PACKAGES ?? []) {
    let version = 'missing';
    try {
      version = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', pkg, 'package.json'), 'utf8')).version;
    } catch {
      // not installed: the conversion below says so
    }
    hash.update(`\0${pkg}@${version}`);
  }
  const cached = path.join(__dirname, '.cache', 'tokenizer-assets', hash.digest('hex').slice(0, 16));
  let source = cached;
  let files = fs.existsSync(cached) ? fs.readdirSync(cached) : [];
  if (files.length === 0) {
    const assets = mod.rankAssets();
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.mkdirSync(tmp, { recursive: true });
    for (const [file, bytes] of Object.entries(assets)) fs.writeFileSync(path.join(tmp, file), bytes);
    files = Object.keys(assets);
    try {
      fs.renameSync(tmp, cached);
      // Older keys are assets of converters or packages no longer in the tree.
      const root = path.dirname(cached);
      for (const old of fs.readdirSync(root)) if (old !== path.basename(cached) && !old.endsWith('.tmp')) fs.rmSync(path.join(root, old), { recursive: true, force: true });
    } catch {
      source = tmp; // another build stored the same assets meanwhile: use ours, then drop them
    }
  }
  fs.mkdirSync('dist/tokenizers', { recursive: true });
  for (const file of files) fs.copyFileSync(path.join(source, file), path.join('dist/tokenizers', file));
  if (source !== cached) fs.rmSync(source, { recursive: true, force: true });
}

async function main() {
  if (process.argv.includes('--schema')) return writeSchema();
  if (fs.existsSync(path.join(__dirname, 'src/core/tokens/assets.ts'))) await writeTokenizerAssets();
  const builds = targets
    .filter((t) => fs.existsSync(path.join(__dirname, t.entry)))
    .map(({ entry, ...options }) => ({
      entryPoints: [entry],
      bundle: true,
      minify: production,
      sourcemap: !production,
      sourcesContent: false,
      target: options.platform === 'browser' ? 'chrome114' : 'node20',
      logLevel: 'warning',
      ...options,
    }));
  if (watch) {
    for (const b of builds) await (await esbuild.context(b)).watch();
    return;
  }
  await Promise.all(builds.map((b) => esbuild.build(b)));
  if (fs.existsSync('src/webview/style.css')) {
    fs.mkdirSync('dist/media', { recursive: true });
    fs.copyFileSync('src/webview/style.css', 'dist/media/webview.css');
  }
  if (fs.existsSync('dist/cli.js')) fs.chmodSync('dist/cli.js', 0o755);
  if (fs.existsSync(path.join(__dirname, 'src/lib/index.ts')) && fs.existsSync(path.join(__dirname, 'tsconfig.lib.json'))) writeLibraryTypes();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
