/**
 * Language server and extension benchmarks, measured the way an editor experiences them:
 * - edit latency over LSP against the built server (dist/server.js): a one-character edit in a
 *   20 KB template whose fixture is 1 MB, until the diagnostics for that version are published and
 *   until the refreshed code lenses are returned (debounce set to 0, so only analysis counts);
 * - a hover on the template while a 5 MB fixture is being opened;
 * - the server's resident memory with every file of examples/ open;
 * - `activate()` of dist/extension.js, loaded with a minimal fake `vscode` module (timing only).
 * Targets (issue 4): edit p95 < 16 ms, RSS < 150 MB, activate < 50 ms.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CodeLensRequest, HoverRequest } from 'vscode-languageserver-protocol/node';
import { LspClient, REPO, ensureBuilt, positionOf } from '../test/lsp/harness';

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const round = (x: number): number => Math.round(x * 100) / 100;

const PROSE =
  'Answer with the facts in the material below and cite the id of every passage you rely on. If passages disagree, say so and name both. Keep answers short, concrete and polite; never invent an API, a price or a date. ';

export function benchWorkspace(): { dir: string; template: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-bench-'));
  mkdirSync(path.join(dir, 'fixtures'));
  let system = '';
  while (system.length < 10_000) system += PROSE + '\n';
  let user = '';
  while (user.length < 10_000) user += PROSE.toUpperCase() + '\n';
  const template = [
    '---',
    'model: gpt-4o',
    'context: bench.context.yaml',
    '---',
    '{{role "system"}}',
    system,
    '{{policy}}',
    '',
    '{{#role "user"}}',
    user,
    '{{evidence}}',
    '',
    '<notes>',
    '{{notes}}',
    '</notes>',
    '',
    '<question>',
    '{{question}}',
    '</question>',
    '{{/role}}',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'bench.prompt'), template);
  writeFileSync(
    path.join(dir, 'bench.context.yaml'),
    [
      'model: gpt-4o',
      'window: 128000',
      'output: 4000',
      'margin: 2000',
      'overhead: { message: 3, request: 3, item: 8 }',
      'slots:',
      '  policy:   { kind: policy, trust: trusted, required: true, budget: 2000 }',
      '  evidence: { kind: evidence, trust: untrusted, budget: 100000, priority: 2, label: EVIDENCE, pack: skip, order: edges }',
      '  notes:    { kind: memory, trust: untrusted, budget: 2000 }',
      '  question: { kind: user, trust: untrusted, required: true, budget: 500 }',
      'fixtures: [fixtures/*.fixture.yaml]',
      '',
    ].join('\n'),
  );
  const parts = ['template: ../bench.prompt', 'slots:', '  policy: Refunds above $500 need a supervisor.', '  notes: Prefers email.', '  question: Does SDK 4.2 retry after a 429?', '  evidence:'];
  let size = parts.join('\n').length;
  for (let i = 0; size < 1024 * 1024; i++) {
    const item = [
      `    - id: ev_${i}`,
      `      source: kb/doc-${i % 500}`,
      `      relevance: ${((i * 37) % 100) / 100}`,
      `      text: "Passage ${i}: the client retries idempotent requests up to ${i % 7} times with exponential backoff and jitter; non-idempotent POST requests are retried only with an idempotency key, per release ${i % 13}."`,
    ].join('\n');
    parts.push(item);
    size += item.length + 1;
  }
  writeFileSync(path.join(dir, 'fixtures', 'big.fixture.yaml'), parts.join('\n') + '\n');
  return { dir, template: path.join(dir, 'bench.prompt') };
}

async function editLatency(): Promise<Record<string, number>> {
  const { dir, template } = benchWorkspace();
  const client = await LspClient.start({ workspace: dir, initializationOptions: { debounceMs: 0 } });
  try {
    const uri = await client.open(template);
    const t0 = performance.now();
    await client.session.nextDiagnostics(uri, 0, undefined, 120_000);
    const firstMs = performance.now() - t0;
    const anchor = client.text(uri).indexOf('PASSAGE YOU RELY ON') + 4;
    const diag: number[] = [];
    const lens: number[] = [];
    // Each edit re-analyses the whole template with its 1 MB fixture: a few dozen samples are enough.
    const WARMUP = 3;
    const N = 25;
    for (let i = 0; i < WARMUP + N; i++) {
      const before = client.session.diagnosticsCount(uri);
      const start = performance.now();
      // Alternately type and delete one character, as a user would.
      const v = i % 2 === 0 ? await client.edit(uri, anchor, anchor, 'x') : await client.edit(uri, anchor, anchor + 1, '');
      await client.session.nextDiagnostics(uri, before, (p) => p.version === v, 60_000);
      const published = performance.now();
      const lenses = await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } });
      const refreshed = performance.now();
      if (!lenses?.length) throw new Error('no lenses');
      if (i >= WARMUP) {
        diag.push(published - start);
        lens.push(refreshed - start);
      }
    }
    // A hover on the template while a 5 MB fixture is being opened beside it.
    const hugeFile = path.join(dir, 'fixtures', 'huge.fixture.yaml');
    const big = readFileSync(path.join(dir, 'fixtures', 'big.fixture.yaml'), 'utf8');
    writeFileSync(hugeFile, big.repeat(5));
    // Timed from the moment the 5 MB didOpen is written: the server is still reading it.
    await client.open(hugeFile);
    const hs = performance.now();
    const hover = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: positionOf(client.text(uri), '{{question}}', 3) });
    const hoverMs = performance.now() - hs;
    if (!hover) throw new Error('no hover');
    const out = {
      first_analysis_ms: round(firstMs),
      edit_to_diagnostics_p50_ms: round(percentile(diag, 50)),
      edit_to_diagnostics_p95_ms: round(percentile(diag, 95)),
      edit_to_lenses_p50_ms: round(percentile(lens, 50)),
      edit_to_lenses_p95_ms: round(percentile(lens, 95)),
      hover_while_opening_5mb_fixture_ms: round(hoverMs),
      template_kb: round(statSync(template).size / 1024),
      fixture_kb: round(statSync(path.join(dir, 'fixtures', 'big.fixture.yaml')).size / 1024),
    };
    return out;
  } finally {
    await client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else if (/\.(prompt|prompty)$|\.context\.ya?ml$|\.fixture\.(ya?ml|json)$/.test(e)) out.push(p);
  }
  return out.sort();
}

function rssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: round(kb('VmRSS') / 1024), peak: round(kb('VmHWM') / 1024) };
}

async function examplesMemory(): Promise<Record<string, number>> {
  const examples = path.join(REPO, 'examples');
  const client = await LspClient.start({ workspace: examples });
  try {
    const files = filesUnder(examples);
    for (const f of files) {
      const uri = await client.open(f);
      await client.session.nextDiagnostics(uri, 0, undefined, 120_000);
      await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } });
    }
    const m = rssMb(client.session.proc.pid!);
    return { examples_files_open: files.length, server_rss_mb: m.rss, server_peak_rss_mb: m.peak };
  } finally {
    await client.stop();
  }
}

/**
 * A stand-in for the `vscode` module, good enough for `activate()` to run: every property is a
 * callable that returns another stand-in, with real values where the client library reads them.
 */
function fakeVscode(): unknown {
  const make = (name: string): unknown => {
    const fn = function () {
      return make(`${name}()`);
    };
    const assigned = new Map<PropertyKey, unknown>();
    return new Proxy(fn, {
      set(_t, k, v) {
        assigned.set(k, v);
        return true;
      },
      get(_t, k) {
        if (assigned.has(k)) return assigned.get(k);
        if (k === 'then') return undefined;
        if (k === Symbol.toPrimitive) return () => name;
        if (k === Symbol.iterator) return function* () {};
        if (k === 'length') return 0;
        return make(`${name}.${String(k)}`);
      },
      // show*Message and friends return promises in VS Code; callers chain `.then` on them.
      apply: () => (/Message$|QuickPick$|InputBox$/.test(name) ? Promise.resolve(undefined) : make(`${name}()`)),
      construct: () => make(`new ${name}`) as object,
    });
  };
  // Every top-level name of the API (bundles copy the module's own keys when they import it).
  const dts = readFileSync(path.join(REPO, 'node_modules', '@types', 'vscode', 'index.d.ts'), 'utf8');
  const base: Record<string, unknown> = {};
  for (const m of dts.matchAll(/^\texport (?:namespace|class|enum|function|const|let) (\w+)/gm)) base[m[1]] = make(m[1]);
  class Uri {
    constructor(readonly fsPath: string) {}
    static file(p: string): Uri {
      return new Uri(p);
    }
    static parse(s: string): Uri {
      return new Uri(s);
    }
    static joinPath(u: Uri, ...parts: string[]): Uri {
      return new Uri(path.join(u.fsPath, ...parts));
    }
    get path(): string {
      return this.fsPath;
    }
    toString(): string {
      return `file://${this.fsPath}`;
    }
  }
  const overrides: Record<string, unknown> = {
    version: '1.91.0',
    Uri,
    extensions: { getExtension: () => undefined, all: [] },
    env: { language: 'en', appName: 'bench', machineId: 'bench', sessionId: 'bench' },
  };
  return { ...base, ...overrides };
}

/** The extension bundle as it is packaged (minified), built into .cache for the measurement. */
export function productionBundle(): string {
  const out = path.join(REPO, '.cache', 'bench', 'extension.min.js');
  const r = spawnSync(path.join(REPO, 'node_modules', '.bin', 'esbuild'), ['src/extension/main.ts', '--bundle', '--minify', '--platform=node', '--format=cjs', '--target=node20', '--external:vscode', `--outfile=${out}`, '--log-level=warning'], { cwd: REPO, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('production build of the extension failed');
  return out;
}

/**
 * Loads and activates a bundle in a fresh Node process (this file, run with
 * CTXLENS_ACTIVATE_CHILD), as VS Code's extension host does once per window; the median of a few
 * runs. A fresh process keeps the measurement cold and leaves no half-started client behind.
 */
function activationCold(bundle: string, label: string, runs = 5): Record<string, number> {
  const samples: Array<Record<string, number>> = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, [__filename], { env: { ...process.env, CTXLENS_ACTIVATE_CHILD: bundle }, encoding: 'utf8', timeout: 60_000 });
    const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
    if (!line) throw new Error(`activation run failed: ${r.stderr}`);
    samples.push(JSON.parse(line) as Record<string, number>);
  }
  const med = (k: string): number => round(percentile(samples.map((x) => x[k]), 50));
  return { [`${label}_load_ms`]: med('load'), [`${label}_activate_ms`]: med('activate'), [`${label}_bundle_kb`]: round(statSync(bundle).size / 1024) };
}

if (process.env.CTXLENS_ACTIVATE_CHILD && require.main === module) {
  // The fake client's start fails in the background (there is no server); that is expected here.
  process.on('unhandledRejection', () => undefined);
  void activation(process.env.CTXLENS_ACTIVATE_CHILD, 'x').then((r) => {
    process.stdout.write(JSON.stringify({ load: r.x_load_ms, activate: r.x_activate_ms }) + '\n');
    process.exit(0);
  });
}

export async function activation(bundle: string, label: string): Promise<Record<string, number>> {
  const fake = fakeVscode();
  const M = Module as unknown as { _resolveFilename: (req: string, ...rest: unknown[]) => string; _cache: Record<string, unknown> };
  const original = M._resolveFilename;
  const FAKE = '\0fake-vscode';
  M._resolveFilename = function (request: string, ...rest: unknown[]) {
    if (request === 'vscode') return FAKE;
    return original.call(this, request, ...rest);
  };
  M._cache[FAKE] = { id: FAKE, filename: FAKE, loaded: true, exports: fake };
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-ext-'));
  try {
    const t0 = performance.now();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ext = require(bundle) as { activate(ctx: unknown): void; deactivate(): Promise<void> };
    const loaded = performance.now();
    const subscriptions: Array<{ dispose(): void }> = [];
    const context = {
      subscriptions,
      extensionPath: dir,
      extensionUri: { fsPath: dir, path: dir, toString: () => `file://${dir}` },
      // A server path that does not exist: only activate() is timed, the server is not started.
      asAbsolutePath: (rel: string) => path.join(dir, rel),
      workspaceState: { get: () => undefined, update: async () => undefined },
      globalState: { get: () => undefined, update: async () => undefined },
    };
    const a0 = performance.now();
    ext.activate(context);
    const activated = performance.now();
    // Let the deferred client creation run, then stop it.
    await new Promise((r) => setImmediate(r));
    await Promise.race([ext.deactivate().catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
    return { [`${label}_load_ms`]: round(loaded - t0), [`${label}_activate_ms`]: round(activated - a0), [`${label}_bundle_kb`]: round(statSync(bundle).size / 1024) };
  } finally {
    M._resolveFilename = original;
    delete M._cache[FAKE];
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<Record<string, unknown>> {
  ensureBuilt();
  const results: Record<string, unknown> = {};
  Object.assign(results, await editLatency());
  Object.assign(results, await examplesMemory());
  // The packaged (minified) bundle first, loaded cold, then the development build.
  Object.assign(results, activationCold(productionBundle(), 'extension_min'));
  Object.assign(results, activationCold(path.join(REPO, 'dist', 'extension.js'), 'extension_dev'));
  const targets = [
    ['edit_to_diagnostics_p95_ms', 16],
    ['edit_to_lenses_p95_ms', 16],
    ['server_rss_mb', 150],
    ['extension_min_activate_ms', 50],
  ] as const;
  console.log('| measure | value | target |');
  console.log('|---|---:|---:|');
  for (const [k, v] of Object.entries(results)) {
    const t = targets.find(([name]) => name === k);
    console.log(`| ${k} | ${String(v)} | ${t ? `< ${t[1]}${Number(v) < t[1] ? ' ✓' : ' ✗'}` : ''} |`);
  }
  return results;
}
