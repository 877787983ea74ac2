/**
 * The installable CLI: `npm pack` of the project gives a tarball (contents decided by .npmignore)
 * that `npm install <tarball>` puts into an empty folder, where `node_modules/.bin/ctxlens` works on
 * its own — away from the repository, with the tokenizer data it ships. `"private": true` stops
 * `npm publish`, not `npm pack`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The environment without an outer npm's `npm_*` variables (npm reads `npm_config_*` as its own
 * config, so an `npm test` around this would change what the inner npm does).
 */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

function npm(args: string[], cwd: string, timeout = 240_000) {
  const r = spawnSync(NPM, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

/** Planted findings of examples/README.md as `examples/<file>:<line> <rule>`, and its expected totals. */
function planted(): { rows: Array<{ file: string; line: number; rule: string; severity: string }>; errors: number; warnings: number } {
  const text = readFileSync(join(ROOT, 'examples/README.md'), 'utf8');
  const rows = [...text.matchAll(/^\| `([^`]+)` \| (\d+) \| `([a-z0-9-]+)` \| (error|warning|info|hint) \|/gm)].map((m) => ({
    file: `examples/${m[1]}`,
    line: Number(m[2]),
    rule: m[3]!,
    severity: m[4]!,
  }));
  return { rows, errors: rows.filter((r) => r.severity === 'error').length, warnings: rows.filter((r) => r.severity === 'warning').length };
}

describe('npm pack: an installable ctxlens tarball', () => {
  let tmp: string;
  let tarball: string;
  let files: string[];
  let app: string;
  let bin: string;
  const timings: Record<string, number> = {};

  beforeAll(() => {
    for (const f of ['dist/cli.js', 'dist/server.js', 'dist/tokenizers/o200k_base.ranks']) {
      if (!existsSync(join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
    }
    tmp = mkdtempSync(join(tmpdir(), 'ctxlens-pack-'));
    // --ignore-scripts: packing must not rebuild dist/ under other tests that are using it.
    let t = Date.now();
    const packed = npm(['pack', '--pack-destination', tmp, '--json', '--ignore-scripts'], ROOT);
    timings.pack = Date.now() - t;
    if (packed.code !== 0) throw new Error(`npm pack failed (${packed.code}):\n${packed.stderr}`);
    const info = (JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!;
    tarball = join(tmp, info.filename);
    files = info.files.map((f) => f.path).sort();

    app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'ctxlens-install-check', version: '1.0.0', private: true }, null, 2));
    t = Date.now();
    // Dependencies listed in package.json come from the registry (or npm's cache); the CLI itself is a bundle.
    const installed = npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], app);
    timings.install = Date.now() - t;
    if (installed.code !== 0) throw new Error(`npm install ${tarball} failed (${installed.code}):\n${installed.stderr}`);
    bin = join(app, 'node_modules', '.bin', 'ctxlens');
    process.stderr.write(`[pack] npm pack ${timings.pack} ms, npm install ${timings.install} ms, ${statSync(tarball).size} bytes\n`);
  }, 300_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('holds the CLI and server bundles with their tokenizer data, and no sources, tests or maps', () => {
    expect(tarball.endsWith(`${manifest.name}-${manifest.version}.tgz`)).toBe(true);
    for (const f of ['package.json', 'README.md', 'LICENSE', manifest.bin.ctxlens!, 'dist/server.js', 'schemas/context.schema.json', 'docs/rules.md']) expect(files).toContain(f);
    for (const enc of ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base']) expect(files).toContain(`dist/tokenizers/${enc}.ranks`);
    expect(files.filter((f) => /^(src|test|bench|scripts|examples|node_modules|\.cache|out)\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.map') || f.endsWith('.vsix'))).toEqual([]);
  });

  it('installs into an empty folder with a working node_modules/.bin/ctxlens', () => {
    expect(existsSync(bin)).toBe(true);
    const pkg = JSON.parse(readFileSync(join(app, 'node_modules', manifest.name, 'package.json'), 'utf8')) as { version: string };
    expect(pkg.version).toBe(manifest.version);
    // The bin runs directly (shebang and exec bit), not only as `node dist/cli.js`.
    const r = spawnSync(bin, ['--help'], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\s*ctxlens check \[paths\.\.\.\]/m);
  });

  it('`ctxlens check` on a copy of examples/ exits 1 with every planted finding', () => {
    const ws = join(tmp, 'ws');
    cpSync(join(ROOT, 'examples'), join(ws, 'examples'), { recursive: true });
    const text = spawnSync(bin, ['check', 'examples'], { cwd: ws, encoding: 'utf8', timeout: 120_000 });
    expect(text.status, text.stderr).toBe(1);
    const { rows, errors, warnings } = planted();
    for (const f of rows) expect(text.stdout).toMatch(new RegExp(`^${f.file.replace(/[.]/g, '\\.')}:${f.line}:\\d+ ${f.severity} ${f.rule} `, 'm'));
    // BAML's runtime is not a dependency of the package: installed without it, the BAML example
    // gets one finding per file that names the package to install, and nothing else.
    const baml = text.stdout.split('\n').filter((l) => l.startsWith('examples/baml-rag/'));
    expect(baml.length).toBeGreaterThan(0);
    for (const l of baml) expect(l).toMatch(/@boundaryml\/baml/);
    const json = spawnSync(bin, ['check', 'examples', '--format', 'json'], { cwd: ws, encoding: 'utf8', timeout: 120_000 });
    expect(json.status).toBe(1);
    const out = JSON.parse(json.stdout) as { files: Array<{ path: string; diagnostics: Array<{ severity: string }> }> };
    const count = (severity: string) => out.files.filter((f) => !f.path.startsWith('examples/baml-rag/')).reduce((n, f) => n + f.diagnostics.filter((d) => d.severity === severity).length, 0);
    expect({ errors: count('error'), warnings: count('warning') }).toEqual({ errors, warnings });
  });

  it('`ctxlens serve --store` loads its Redis client from the installed dependencies', async () => {
    // Nothing listens on port 1: the service starts, serves, and reports the store down.
    const proc = spawn(bin, ['serve', '--port', '0', '--root', join(ROOT, 'examples'), '--store', 'redis://127.0.0.1:1/0'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        let out = '';
        let err = '';
        const timer = setTimeout(() => reject(new Error(`no listening line within 30 s: ${err}`)), 30_000);
        proc.stderr!.on('data', (d) => (err += String(d)));
        proc.stdout!.on('data', (d) => {
          out += String(d);
          const m = /^listening on (\S+)\n/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolveUrl(m[1]!);
          }
        });
        proc.on('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
      });
      const health = (await (await fetch(`${url}/healthz`)).json()) as { store?: { kind: string } };
      expect(health.store?.kind).toBe('redis');
    } finally {
      proc.kill('SIGKILL');
    }
  }, 60_000);

  it('counts exactly with the tokenizer data inside the package', () => {
    // Without js-tiktoken (the source checkout's fallback) the count can only come from
    // dist/tokenizers/ of the tarball. "hello world" is 2 tokens in o200k_base (tiktoken).
    rmSync(join(app, 'node_modules', 'js-tiktoken'), { recursive: true, force: true });
    const r = spawnSync(bin, ['count', '--tokenizer', 'o200k_base', '--format', 'json', '-'], { cwd: app, input: 'hello world', encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { tokenizer: string; exact: boolean; total: number };
    expect(out).toMatchObject({ tokenizer: 'o200k_base', exact: true, total: 2 });
  });
});
