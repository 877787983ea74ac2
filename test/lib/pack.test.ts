/**
 * The library as it ships: `npm pack` of the project gives a tarball that `npm install` puts into
 * an empty folder, where the quick start of docs/library.md (the README shows part of it) runs
 * with `node` alone, as an ES module and as CommonJS, printing exactly the output the doc shows — also with
 * js-tiktoken removed, so the tokenizer data can only come from the package. The declarations
 * type-check a consumer under both module resolutions TypeScript users have.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt } from '../service/harness';

const ROOT = resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; exports: Record<string, unknown>; types: string };
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The environment without an outer npm's `npm_*` variables (npm reads `npm_config_*` as its own config). */
const cleanEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

function npm(args: string[], cwd: string, timeout = 240_000) {
  const r = spawnSync(NPM, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** The quick-start blocks of docs/library.md: `<!-- quick-start:NAME -->` then a fenced block. */
function quickStart(): Record<string, string> {
  const doc = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8');
  const out: Record<string, string> = {};
  for (const m of doc.matchAll(/<!-- quick-start:([^ ]+) -->\n```[a-z]*\n([\s\S]*?)\n```/g)) out[m[1]] = m[2] + '\n';
  return out;
}

describe('npm pack: the library installs and runs its quick start with node alone', () => {
  let tmp: string;
  let files: string[];
  let app: string;
  const blocks = quickStart();

  beforeAll(() => {
    ensureCliBuilt();
    for (const f of ['dist/lib/index.mjs', 'dist/lib/index.cjs', manifest.types]) if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
    tmp = mkdtempSync(join(tmpdir(), 'ctxlens-libpack-'));
    // --ignore-scripts: packing must not rebuild dist/ under other tests that are using it.
    const packed = npm(['pack', '--pack-destination', tmp, '--json', '--ignore-scripts'], ROOT);
    if (packed.code !== 0) throw new Error(`npm pack failed (${packed.code}):\n${packed.stderr}`);
    const info = (JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0];
    files = info.files.map((f) => f.path).sort();
    app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'ctxlens-library-check', version: '1.0.0', private: true }, null, 2));
    const installed = npm(['install', '--no-audit', '--no-fund', '--prefer-offline', join(tmp, info.filename)], app);
    if (installed.code !== 0) throw new Error(`npm install failed (${installed.code}):\n${installed.stderr}`);
    for (const [name, text] of Object.entries(blocks)) {
      if (name === 'output') continue;
      mkdirSync(dirname(join(app, name)), { recursive: true });
      writeFileSync(join(app, name), text);
    }
  }, 300_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('docs/library.md has the quick start: two files, the example as ESM and CJS, its output', () => {
    expect(Object.keys(blocks).sort()).toEqual(['output', 'prompts/support.context.yaml', 'prompts/support.prompt', 'quickstart.cjs', 'quickstart.mjs']);
    // The two module flavours differ in the import line only.
    expect(blocks['quickstart.mjs'].split('\n').slice(1)).toEqual(blocks['quickstart.cjs'].split('\n').slice(1));
  });

  it('holds both bundles, the declarations and the tokenizer data, without maps or sources', () => {
    for (const f of ['dist/lib/index.mjs', 'dist/lib/index.cjs', 'dist/lib/types/src/lib/index.d.ts', 'dist/lib/types/src/core/types.d.ts', 'docs/library.md']) expect(files).toContain(f);
    for (const enc of ['o200k_base', 'cl100k_base']) expect(files).toContain(`dist/tokenizers/${enc}.ranks`);
    expect(files.filter((f) => f.endsWith('.map') || /^(src|test|bench|scripts|examples)\//.test(f))).toEqual([]);
    expect(manifest.exports['.']).toEqual({ types: './dist/lib/types/src/lib/index.d.ts', import: './dist/lib/index.mjs', require: './dist/lib/index.cjs' });
  });

  for (const file of ['quickstart.mjs', 'quickstart.cjs']) {
    it(`${file} prints the documented output`, () => {
      const r = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(blocks.output);
    });
  }

  it('counts with the tokenizer data inside the package (js-tiktoken removed)', () => {
    rmSync(join(app, 'node_modules', 'js-tiktoken'), { recursive: true, force: true });
    for (const file of ['quickstart.mjs', 'quickstart.cjs']) {
      const r = spawnSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(blocks.output);
    }
    const count = spawnSync(process.execPath, ['-e', "const { count } = require('context-lens'); process.stdout.write(JSON.stringify(count('hello world', { tokenizer: 'cl100k_base' })))"], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(count.stdout)).toEqual({ tokens: 2, tokenizer: 'cl100k_base', exact: true });
  });

  it('loads no editor or LSP code', () => {
    const r = spawnSync(process.execPath, ['-e', "require('context-lens'); const loaded = Object.keys(require.cache).filter((p) => /vscode|languageserver/.test(p)); process.stdout.write(JSON.stringify(loaded))"], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  for (const resolution of ['node16', 'bundler']) {
    it(`the declarations type-check a consumer (moduleResolution ${resolution})`, () => {
      const dir = join(app, `ts-${resolution}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'consumer.ts'),
        [
          "import { openWorkspace, fixtureFromValues, toProviderRequest, checkCitations, FixtureValueError, ContextLensError } from 'context-lens';",
          "import type { AssembleOutput, Trace, AnthropicMessagesBody, SelectionEntry } from 'context-lens';",
          "const ws = openWorkspace('prompts');",
          "const out: AssembleOutput = ws.assemble('support.prompt', { slots: { question: 'q' }, provider: 'anthropic', maxInputTokens: 1000 });",
          'const trace: Trace = out.trace;',
          'const body = out.request as AnthropicMessagesBody;',
          'const tokens: number = trace.input_tokens + body.max_tokens;',
          "const doc = fixtureFromValues('x', { a: 'b' });",
          "const again = toProviderRequest(out, 'gemini');",
          "const check = checkCitations({ citations: [{ claim_id: 'c', evidence_ids: ['ev_1'] }] }, trace);",
          'const ok: boolean = check.valid && doc.name === "x" && !!again;',
          'const entries: SelectionEntry[] = [];',
          'export { tokens, ok, entries, FixtureValueError, ContextLensError };',
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: resolution === 'node16' ? 'node16' : 'esnext', moduleResolution: resolution, skipLibCheck: true, types: [] }, files: ['consumer.ts'] }),
      );
      const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    });
  }
});
