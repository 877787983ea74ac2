/**
 * One request, the same bytes everywhere: for every template of examples/ with each of its
 * fixtures, and for generated inputs, the library, the built CLI (`ctxlens assemble --format
 * json`), the language server (the preview's custom request and `contextLens/assemble`) and the
 * service (HTTP) give byte-identical messages and traces. Every front end is the built one
 * (dist/lib/index.cjs, dist/cli.js, dist/server.js, `ctxlens serve`), so the test is about what
 * ships. Also holds the library's own binding (src/lib/prepare.ts, used for live values) to the
 * analysis the CLI runs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeTemplate } from '../../src/core/analyze';
import { formatRequest, toOpenAI } from '../../src/core/export';
import type { AssemblyResult, Trace } from '../../src/core/types';
import { DiskFileHost } from '../../src/node/fileHost';
import { assemblePrepared, prepare } from '../../src/lib/prepare';
import { relativeTrace } from '../../src/service/context';
import { AssembleRequest, PreviewRequest } from '../../src/protocol/lsp';
import { LspClient, REPO, ensureBuilt, uriOf } from '../lsp/harness';
import { ensureCliBuilt, startService } from '../service/harness';
import type { RunningService } from '../service/harness';
import { createRequire } from 'node:module';
import * as http from 'node:http';

/**
 * POSTs JSON on a connection of its own (`agent: false`): the CLI's spawnSync blocks this process's
 * event loop, so a kept-alive socket the service closed meanwhile (its keep-alive timeout) would
 * otherwise be reused before its close is seen.
 */
function postJson(url: string, body: unknown): Promise<{ status: number; json: () => Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, json: async () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

type Lib = typeof import('../../src/lib');
/** The built library, as an application that installed the package loads it. */
const lib = (): Lib => createRequire(__filename)(path.join(REPO, 'dist', 'lib', 'index.cjs')) as Lib;
const openWorkspace: Lib['openWorkspace'] = (dir, options) => lib().openWorkspace(dir, options);

const EXAMPLES = path.join(REPO, 'examples');
const CLI = path.join(REPO, 'dist', 'cli.js');

function templatesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) out.push(...templatesUnder(p));
    else if (/\.(prompt|prompty)$/.test(e) && !e.startsWith('_')) out.push(p);
  }
  return out.sort();
}

/**
 * `ctxlens assemble --format json`. The CLI adds `trace.cache_prefix_tokens` (the prefix shared by
 * every fixture of the template, src/cli/main.ts), which no other front end computes; it is taken
 * out here, re-serialised in the CLI's own format, so the rest is compared byte for byte.
 */
function cliJson(cwd: string, template: string, fixture: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'assemble', template, '--fixture', fixture, '--format', 'json'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  let stdout = r.stdout;
  if (r.status === 0) {
    const j = JSON.parse(stdout) as { trace: Record<string, unknown> };
    if ('cache_prefix_tokens' in j.trace) {
      delete j.trace.cache_prefix_tokens;
      stdout = JSON.stringify(j, null, 2) + '\n';
    }
  }
  return { status: r.status, stdout, stderr: r.stderr };
}

/** The library's result in the CLI's json format (what `ctxlens assemble --format json` prints). */
const asJson = (r: { ok: boolean; messages: AssemblyResult['messages']; trace: Trace; budget: AssemblyResult['budget'] }) => formatRequest({ ...r, findings: [] } as AssemblyResult, 'json');

/** Every (template, fixture) pair of examples/, with the fixture as the CLI is given it. */
const host = new DiskFileHost([EXAMPLES]);
const pairs: Array<{ template: string; fixture: string; name: string }> = [];
for (const t of templatesUnder(EXAMPLES)) {
  const a = analyzeTemplate(host, t);
  for (const f of a?.fixtures ?? []) pairs.push({ template: t, fixture: f.path.endsWith('#sample') ? 'sample' : f.path, name: f.name });
}

/** A small PRNG, so generated inputs are the same on every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'sdk retry retries request rate limit 429 post idempotency key backoff jitter timeout header version upgrade migration default enabled policy the of and to in is it for on'.split(' ');

/** Live values for sdk-qa: a question, history turns, evidence with metadata (some duplicates, other versions, another tenant), tool results. */
function generated(seed: number): Record<string, unknown> {
  const r = prng(seed);
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const evidence: Array<Record<string, unknown>> = [];
  const n = 3 + Math.floor(r() * 40);
  for (let i = 0; i < n; i++) {
    const dup = i > 0 && r() < 0.1;
    evidence.push({
      id: `ev_${seed}_${i}`,
      text: dup ? (evidence[Math.floor(r() * i)].text as string) : `${words(20 + Math.floor(r() * 60))}.`,
      source: `docs/${Math.floor(r() * 20)}`,
      source_type: r() < 0.5 ? 'official_documentation' : 'support_article',
      ...(r() < 0.8 ? { version: r() < 0.8 ? '4.2' : '3.9' } : {}),
      ...(r() < 0.1 ? { tenant: 'globex' } : {}),
      relevance: Math.round(r() * 100) / 100,
      authority: Math.round(r() * 100) / 100,
      published_at: new Date(Date.UTC(2025, 0, 1) + Math.floor(r() * 600) * 86_400_000).toISOString(),
    });
  }
  return {
    policy: `Policy ${seed}: ${words(40)}.`,
    history: Array.from({ length: Math.floor(r() * 6) }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', text: words(15), at: new Date(Date.UTC(2026, 7, 1, 10, i)).toISOString() })),
    evidence,
    tool_result: [{ id: `call_${seed}`, source: 'tools/config', text: `{"retry_non_idempotent": ${r() < 0.5}}` }],
    question: `Why ${words(8)}?`,
  };
}

let client: LspClient | undefined;
let service: RunningService | undefined;
let base: string;
let gen: string;

beforeAll(async () => {
  ensureBuilt();
  ensureCliBuilt();
  // Generated inputs as fixture files in a copy of sdk-qa, for the CLI.
  gen = mkdtempSync(path.join(tmpdir(), 'ctxlens-parity-'));
  cpSync(path.join(EXAMPLES, 'sdk-qa'), path.join(gen, 'sdk-qa'), { recursive: true });
  for (const seed of [1, 2, 3, 4, 5]) writeFileSync(path.join(gen, 'sdk-qa', 'fixtures', `gen-${seed}.fixture.json`), JSON.stringify({ template: '../sdk-qa.prompt', slots: generated(seed) }, null, 2));
  service = await startService(['--root', gen]);
  base = service.url;
  client = await LspClient.start({ workspace: EXAMPLES });
}, 120_000);

afterAll(async () => {
  await client?.stop();
  await service?.stop();
  if (gen) rmSync(gen, { recursive: true, force: true });
});

describe('examples/: library, CLI and language server give the same bytes', () => {
  it('has pairs to compare', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(6);
  });

  for (const p of pairs) {
    it(`${path.relative(EXAMPLES, p.template)} with ${p.name}`, async () => {
      const lib = openWorkspace(EXAMPLES).assemble(path.relative(EXAMPLES, p.template), { fixture: p.fixture === 'sample' ? 'sample' : path.relative(EXAMPLES, p.fixture) });
      const cli = cliJson(REPO, path.relative(REPO, p.template), p.fixture === 'sample' ? 'sample' : path.relative(REPO, p.fixture));
      if (!lib.ok) {
        expect(cli.status).toBe(1);
        return;
      }
      expect(cli.status, cli.stderr).toBe(0);
      expect(cli.stdout).toBe(asJson(lib));

      // The language server: contextLens/assemble (the CLI's format) and the preview snapshot.
      const uri = uriOf(p.template);
      const fixture = p.fixture === 'sample' ? 'sample' : p.fixture;
      const asm = await client!.connection.sendRequest(AssembleRequest.type, { uri, fixture, format: 'json' });
      expect(asm?.content).toBe(cli.stdout);
      const preview = await client!.connection.sendRequest(PreviewRequest.type, { uri, fixture });
      expect('snapshot' in preview).toBe(true);
      if ('snapshot' in preview) {
        expect(JSON.stringify(preview.snapshot.result.messages)).toBe(JSON.stringify(lib.messages));
        expect(JSON.stringify(preview.snapshot.result.trace)).toBe(JSON.stringify(lib.trace));
      }
    });
  }

  for (const p of pairs) {
    it(`the library's own binding equals the analysis: ${path.relative(EXAMPLES, p.template)} with ${p.name}`, () => {
      const a = analyzeTemplate(host, p.template, { fixture: p.fixture })!;
      const prep = prepare(host, p.template, {});
      const mine = assemblePrepared(prep, a.fixture, prep.config);
      expect(JSON.stringify(mine.trace)).toBe(JSON.stringify(a.assembly!.trace));
      expect(JSON.stringify(mine.messages)).toBe(JSON.stringify(a.assembly!.messages));
      expect(mine.findings).toEqual(a.assembly!.findings);
    });
  }
});

describe('generated inputs: library, CLI and service give the same bytes', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}`, async () => {
      const values = generated(seed);
      const ws = openWorkspace(gen);
      // The CLI and the library read the same fixture file.
      const file = path.join('sdk-qa', 'fixtures', `gen-${seed}.fixture.json`);
      const libFile = ws.assemble('sdk-qa/sdk-qa.prompt', { fixture: file });
      const cli = cliJson(gen, 'sdk-qa/sdk-qa.prompt', file);
      expect(cli.status, cli.stderr).toBe(0);
      expect(cli.stdout).toBe(asJson(libFile));
      // Live values give the same messages as the fixture holding them.
      const live = ws.assemble('sdk-qa/sdk-qa.prompt', { slots: values, name: 'request', files: false });
      expect(JSON.stringify(live.messages)).toBe(JSON.stringify(libFile.messages));
      expect(JSON.stringify(toOpenAI(live.messages))).toBe(JSON.stringify(JSON.parse(cli.stdout).messages));
      // The service with the same values: the library's bytes, paths relative to its root.
      const { question, ...slots } = values;
      const res = await postJson(`${base}/v1/context`, { template: 'sdk-qa/sdk-qa.prompt', query: question, slots });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { rendered_messages: unknown; trace: Trace };
      expect(JSON.stringify(body.rendered_messages)).toBe(JSON.stringify(live.messages));
      expect(JSON.stringify(body.trace)).toBe(JSON.stringify(relativeTrace(live.trace, ws.root)));
      // And the decisions are the fixture's: same retained and omitted items.
      expect(JSON.stringify(body.trace.retained)).toBe(JSON.stringify(libFile.trace.retained));
      expect(JSON.stringify(body.trace.omitted)).toBe(JSON.stringify(libFile.trace.omitted));
    });
  }
});
