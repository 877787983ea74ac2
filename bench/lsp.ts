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

function benchWorkspace(): { dir: string; template: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-bench-'));
  mkdirSync(path.join(dir, 'fixtures'));
  let system = '';
  while (system.length < 9_000) system += PROSE + '\n';
  let user = '';
  while (user.length < 9_000) user += PROSE.toUpperCase() + '\n';
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
    const WARMUP = 5;
    const N = 60;
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
    const hs = performance.now();
    const opening = client.open(hugeFile);
    const hover = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: positionOf(client.text(uri), '{{question}}', 3) });
    const hoverMs = performance.now() - hs;
    await opening;
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
    return new Proxy(fn, {
      get(_t, k) {
        if (k === 'then') return undefined;
        if (k === Symbol.toPrimitive) return () => name;
        if (k === Symbol.iterator) return function* () {};
        if (k === 'length') return 0;
        return make(`${name}.${String(k)}`);
      },
      apply: () => make(`${name}()`),
      construct: () => make(`new ${name}`) as object,
    });
  };
  const base = make('vscode') as Record<string, unknown>;
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
  return new Proxy(base, { get: (t, k) => (typeof k === 'string' && k in overrides ? overrides[k] : (t as Record<string | symbol, unknown>)[k]) });
}

async function activation(): Promise<Record<string, number>> {
  const bundle = path.join(REPO, 'dist', 'extension.js');
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
    await Promise.race([ext.deactivate().catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
    return { extension_load_ms: round(loaded - t0), activate_ms: round(activated - a0), extension_bundle_kb: round(statSync(bundle).size / 1024) };
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
  Object.assign(results, await activation());
  const targets = [
    ['edit_to_diagnostics_p95_ms', 16],
    ['edit_to_lenses_p95_ms', 16],
    ['server_rss_mb', 150],
    ['activate_ms', 50],
  ] as const;
  console.log('| measure | value | target |');
  console.log('|---|---:|---:|');
  for (const [k, v] of Object.entries(results)) {
    const t = targets.find(([name]) => name === k);
    console.log(`| ${k} | ${String(v)} | ${t ? `< ${t[1]}${Number(v) < t[1] ? ' ✓' : ' ✗'}` : ''} |`);
  }
  return results;
}
