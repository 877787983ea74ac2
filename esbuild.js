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
  { entry: 'src/cli/main.ts', outfile: 'dist/cli.js', platform: 'node', format: 'cjs', banner: { js: '#!/usr/bin/env node' } },
  { entry: 'src/server/main.ts', outfile: 'dist/server.js', platform: 'node', format: 'cjs' },
  { entry: 'src/extension/main.ts', outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode'] },
  { entry: 'src/webview/main.ts', outfile: 'dist/media/webview.js', platform: 'browser', format: 'iife' },
];

async function writeSchema() {
  const out = path.join(__dirname, '.cache', 'schema-gen.js');
  await esbuild.build({ entryPoints: ['src/core/config/schema.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: out, logLevel: 'warning' });
  delete require.cache[out];
  const schema = require(out).contextConfigJsonSchema();
  fs.mkdirSync('schemas', { recursive: true });
  fs.writeFileSync('schemas/context.schema.json', JSON.stringify(schema, null, 2) + '\n');
  console.log('wrote schemas/context.schema.json');
}

/** Rank data of the exact tokenizers as compact assets beside the bundles (src/core/tokens/rankData.ts reads them). */
async function writeTokenizerAssets() {
  const out = path.join(__dirname, '.cache', 'rank-assets.js');
  await esbuild.build({ entryPoints: ['src/core/tokens/assets.ts'], bundle: true, platform: 'node', format: 'cjs', outfile: out, logLevel: 'warning' });
  delete require.cache[out];
  const assets = require(out).rankAssets();
  fs.mkdirSync('dist/tokenizers', { recursive: true });
  for (const [file, bytes] of Object.entries(assets)) fs.writeFileSync(path.join('dist/tokenizers', file), bytes);
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
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
