/**
 * Language server and extension benchmarks, measured the way an editor experiences them:
 * - edit latency over LSP against the built server (dist/server.js): a one-character edit in a
 *   20 KB template whose fixture is 1 MB (its evidence is in the request: about 120,000 tokens,
 *   trimmed to fit, so every edit re-renders and re-fits it), until the diagnostics for that version are published and
 *   until the refreshed code lenses are returned (debounce set to 0, so only analysis counts);
 * - a hover on the template while a 5 MB fixture is being opened;
 * - storms of 2,000 edits to an open config and to an open template (the bench workspace, default
 *   debounce): how long until the analyses of both documents describe the last edit, how many
 *   analyses ran, and how fast hovers were answered meanwhile;
 * - the peak memory of the workspace scan of a hostile folder: fixtures just under the full-analysis
 *   limit, each bound to a template, and fixtures over it;
 * - the server's resident memory with every file of examples/ open;
 * - `activate()` of dist/extension.js, loaded with a minimal fake `vscode` module (timing only).
 * Targets (issue 4): edit p95 < 16 ms, RSS < 150 MB, activate < 50 ms. Issue 12: first analysis
 * < 300 ms, a config storm drains within the template figures (2–5 s), the scan stays < 200 MB.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CodeLensRequest, DocumentSymbolRequest, HoverRequest } from 'vscode-languageserver-protocol/node';
import { LspClient, REPO, ensureBuilt, positionOf, uriOf } from '../test/lsp/harness';

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
    '{{role "user"}}',
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

export async function editLatency(): Promise<Record<string, number>> {
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

/**
 * 2,000 edits to one open document of the bench workspace, as a generator or a replayed paste
 * writes into a buffer: groups of 20 edits 10 ms apart, with the template and its config both open
 * and no debounce (as in the edit latency above, so nothing but the scheduler can coalesce them:
 * edits that arrive while an analysis runs used to be analysed one by one, each version in turn).
 * Config edits change the margin (so every analysis of the template differs); template edits type
 * and delete one character. Drained: both documents' analyses are of their last versions (document
 * symbols wait for that). A hover on the template every 100 edits measures whether the server
 * keeps answering.
 */
export async function storm(kind: 'config' | 'template', edits = 2000): Promise<Record<string, number>> {
  const { dir, template } = benchWorkspace();
  const client = await LspClient.start({ workspace: dir, initializationOptions: { debounceMs: 0 } });
  try {
    const t = await client.open(template);
    const c = await client.open(path.join(dir, 'bench.context.yaml'));
    const fresh = (uri: string): Promise<unknown> => client.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } });
    await Promise.all([fresh(t), fresh(c)]);
    const analyses = (uri: string): number => client.session.statuses.get(uri)?.length ?? 0;
    const before = { t: analyses(t), c: analyses(c) };
    const position = positionOf(client.text(t), '{{question}}', 3);
    const hovers: Array<Promise<number>> = [];
    const anchor = client.text(t).indexOf('PASSAGE YOU RELY ON') + 4;
    let margin = 2000;
    const start = performance.now();
    for (let i = 0; i < edits; i++) {
      if (kind === 'config') {
        await client.replace(c, `margin: ${margin}`, `margin: ${margin + 1}`);
        margin++;
      } else await (i % 2 === 0 ? client.edit(t, anchor, anchor, 'x') : client.edit(t, anchor, anchor + 1, ''));
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 10));
      if (i % 100 === 0) {
        const hs = performance.now();
        hovers.push(client.connection.sendRequest(HoverRequest.type, { textDocument: { uri: t }, position }).then(() => performance.now() - hs));
      }
    }
    const sent = performance.now();
    await Promise.all([fresh(t), fresh(c)]);
    const drained = performance.now();
    const hoverMs = await Promise.all(hovers);
    const m = rssMb(client.session.proc.pid!);
    return {
      [`${kind}_storm_edits`]: edits,
      [`${kind}_storm_send_ms`]: round(sent - start),
      [`${kind}_storm_drain_ms`]: round(drained - start),
      [`${kind}_storm_after_last_edit_ms`]: round(drained - sent),
      [`${kind}_storm_template_analyses`]: analyses(t) - before.t,
      [`${kind}_storm_config_analyses`]: analyses(c) - before.c,
      [`${kind}_storm_hover_p95_ms`]: round(percentile(hoverMs, 95)),
      [`${kind}_storm_hover_max_ms`]: round(Math.max(...hoverMs)),
      [`${kind}_storm_peak_rss_mb`]: m.peak,
    };
  } finally {
    await client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fixture of about `bytes` bytes for the hostile workspace (items of about 250 bytes, under the 10,000 a list the parser reads). */
function hostileFixture(bytes: number, seed: number): string {
  const parts = ['slots:', '  policy: Refunds above $500 need a supervisor.', '  question: Does SDK 4.2 retry after a 429?', '  evidence:'];
  let size = parts.join('\n').length;
  for (let i = 0; size < bytes; i++) {
    const item = `    - { id: ev_${seed}_${i}, source: kb/doc-${i % 300}, relevance: 0.${(i * 37) % 100}, text: "Passage ${i} of ${seed}: the client retries idempotent requests up to ${i % 7} times with exponential backoff and jitter, honours Retry-After, and retries POST only with an idempotency key (release ${i % 13})." }`;
    parts.push(item);
    size += item.length + 1;
  }
  return parts.join('\n') + '\n';
}

/**
 * The workspace scan of a folder built to exhaust memory: 12 fixtures just under the 2 MiB
 * full-analysis limit, all matched by one template's config (each is parsed, counted and assembled
 * once by the scan), and 3 fixtures of 4 MB over it. Nothing is open; the scan is done when every
 * fixture has its diagnostics. Peak resident memory of the server.
 */
export async function hostileScanMemory(): Promise<Record<string, number>> {
  const { dir, fixtures } = hostileWorkspace();
  const client = await LspClient.start({ workspace: dir });
  try {
    const start = performance.now();
    await Promise.all(fixtures.map((f) => client.session.nextDiagnostics(uriOf(f), 0, undefined, 600_000)));
    const scanMs = performance.now() - start;
    const m = rssMb(client.session.proc.pid!);
    return { hostile_scan_files: fixtures.length + 2, hostile_scan_ms: round(scanMs), hostile_scan_rss_mb: m.rss, hostile_scan_peak_rss_mb: m.peak };
  } finally {
    await client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The hostile folder of `hostileScanMemory`. */
export function hostileWorkspace(): { dir: string; fixtures: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-bench-hostile-'));
  mkdirSync(path.join(dir, 'fixtures'));
  writeFileSync(path.join(dir, 'h.prompt'), '---\nmodel: gpt-4o\n---\n{{role "system"}}\n{{policy}}\n{{role "user"}}\n{{#each evidence}}{{this}}{{/each}}\n<question>{{question}}</question>\n');
  writeFileSync(
    path.join(dir, 'h.context.yaml'),
    'model: gpt-4o\nwindow: 128000\noutput: 4000\nmargin: 2000\nslots:\n  policy: { kind: policy, trust: trusted, required: true, budget: 2000 }\n  evidence: { kind: evidence, trust: untrusted, budget: 100000, label: EVIDENCE, pack: skip }\n  question: { kind: user, trust: untrusted, required: true, budget: 500 }\nfixtures: [fixtures/*.fixture.yaml]\n',
  );
  const fixtures: string[] = [];
  for (let i = 0; i < 12; i++) fixtures.push(path.join(dir, 'fixtures', `near-${String(i).padStart(2, '0')}.fixture.yaml`));
  for (let i = 0; i < 3; i++) fixtures.push(path.join(dir, 'fixtures', `over-${i}.fixture.yaml`));
  fixtures.forEach((f, i) => writeFileSync(f, hostileFixture(i < 12 ? 2_000_000 : 4_000_000, i)));
  return { dir, fixtures };
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
  // CTXLENS_BENCH_LSP=edit,storm picks measures (edit, storm, scan, memory, activation); all by default.
  const only = process.env.CTXLENS_BENCH_LSP?.split(',').map((x) => x.trim());
  const wanted = (name: string): boolean => !only || only.includes(name);
  if (wanted('edit')) Object.assign(results, await editLatency());
  if (wanted('storm')) {
    Object.assign(results, await storm('template'));
    Object.assign(results, await storm('config'));
  }
  if (wanted('scan')) Object.assign(results, await hostileScanMemory());
  if (wanted('memory')) Object.assign(results, await examplesMemory());
  if (wanted('activation')) {
    // The packaged (minified) bundle first, loaded cold, then the development build.
    Object.assign(results, activationCold(productionBundle(), 'extension_min'));
    Object.assign(results, activationCold(path.join(REPO, 'dist', 'extension.js'), 'extension_dev'));
  }
  const targets = [
    ['first_analysis_ms', 300],
    ['edit_to_diagnostics_p95_ms', 16],
    ['edit_to_lenses_p95_ms', 16],
    ['config_storm_drain_ms', 5000],
    ['template_storm_drain_ms', 5000],
    ['hostile_scan_peak_rss_mb', 200],
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
