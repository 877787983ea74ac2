/**
 * A keystroke in a plain prompt file composed with three others, as an editor experiences it: over
 * LSP against the built server (dist/server.js, debounce 0), a one-character edit in the f-string
 * file `prompts/question.md` of a request a context config composes of four files (a 10 KB
 * Markdown system prompt read as text, a Jinja2 rules file with trim_blocks and lstrip_blocks, a
 * Mustache example and the f-string question), whose fixture is 1 MB of evidence (about 120,000
 * tokens, trimmed to fit: every edit re-renders the four files and re-fits the request). Measured
 * until the diagnostics of that version are published and until the refreshed lenses are returned.
 * Target: the editor's 16 ms p95 (issue 28).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CodeLensRequest } from 'vscode-languageserver-protocol/node';
import { LspClient, ensureBuilt } from '../test/lsp/harness';

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const round = (x: number): number => Math.round(x * 100) / 100;

const PROSE =
  'Answer with the facts in the material below and cite the id of every passage you rely on. If passages disagree, say so and name both. Keep answers short, concrete and polite; never invent an API, a price or a date. ';

export function plainBenchWorkspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-bench-plain-'));
  mkdirSync(path.join(dir, 'prompts'));
  mkdirSync(path.join(dir, 'fixtures'));
  let system = '# Role\n\n';
  while (system.length < 10_000) system += PROSE + '\n';
  writeFileSync(path.join(dir, 'prompts', 'system.md'), system);
  writeFileSync(path.join(dir, 'prompts', 'rules.j2'), 'Policy:\n{% if policy %}\n  {{ policy }}\n{% endif %}\nAnswer in {{ language }}.\n');
  writeFileSync(path.join(dir, 'prompts', 'example.mustache'), 'An earlier answer, for the style: {{example}}\n');
  writeFileSync(path.join(dir, 'prompts', 'question.md'), '<evidence>\n{evidence}\n</evidence>\n\nThe user asks (cite the passages you rely on):\n<question>\n{question}\n</question>\n');
  writeFileSync(
    path.join(dir, 'request.context.yaml'),
    [
      'model: gpt-4o',
      'window: 128000',
      'output: 4000',
      'margin: 2000',
      'overhead: { message: 3, request: 3, item: 8 }',
      'loader: langchain',
      'messages:',
      '  - { role: system, file: prompts/system.md, format: text }',
      '  - { role: system, file: prompts/rules.j2, loader: jinja2, jinja: { trim_blocks: true, lstrip_blocks: true } }',
      '  - { role: assistant, file: prompts/example.mustache }',
      '  - { role: user, file: prompts/question.md }',
      'slots:',
      '  policy:   { kind: policy, trust: trusted, required: true, budget: 2000 }',
      '  language: { kind: policy, trust: trusted, budget: 20 }',
      '  example:  { kind: examples, trust: trusted, budget: 500 }',
      '  evidence: { kind: evidence, trust: untrusted, budget: 100000, priority: 2, label: EVIDENCE, pack: skip, order: edges }',
      '  question: { kind: user, trust: untrusted, required: true, budget: 500 }',
      'fixtures: [fixtures/*.fixture.yaml]',
      '',
    ].join('\n'),
  );
  const parts = ['slots:', '  policy: Refunds above $500 need a supervisor.', '  language: English', '  example: Yes, 4.2 retries 429s three times [ev_1].', '  question: Does SDK 4.2 retry after a 429?', '  evidence:'];
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
  return dir;
}

export async function run(): Promise<Record<string, number>> {
  ensureBuilt();
  const dir = plainBenchWorkspace();
  const file = path.join(dir, 'prompts', 'question.md');
  const client = await LspClient.start({ workspace: dir, initializationOptions: { debounceMs: 0 } });
  try {
    const uri = await client.open(file, 'markdown');
    const t0 = performance.now();
    await client.session.nextDiagnostics(uri, 0, undefined, 120_000);
    const firstMs = performance.now() - t0;
    const anchor = client.text(uri).indexOf('cite the passages') + 4;
    const diag: number[] = [];
    const lens: number[] = [];
    const WARMUP = 3;
    const N = 25;
    for (let i = 0; i < WARMUP + N; i++) {
      const before = client.session.diagnosticsCount(uri);
      const start = performance.now();
      const v = i % 2 === 0 ? await client.edit(uri, anchor, anchor, 'x') : await client.edit(uri, anchor, anchor + 1, '');
      await client.session.nextDiagnostics(uri, before, (p) => p.version === v, 60_000);
      const published = performance.now();
      const lenses = await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } });
      const refreshed = performance.now();
      if (!lenses?.some((l) => l.command?.title.startsWith('evidence · '))) throw new Error(`no evidence lens: ${JSON.stringify(lenses?.map((l) => l.command?.title))}`);
      if (i >= WARMUP) {
        diag.push(published - start);
        lens.push(refreshed - start);
      }
    }
    const out = {
      first_analysis_ms: round(firstMs),
      edit_to_diagnostics_p50_ms: round(percentile(diag, 50)),
      edit_to_diagnostics_p95_ms: round(percentile(diag, 95)),
      edit_to_lenses_p50_ms: round(percentile(lens, 50)),
      edit_to_lenses_p95_ms: round(percentile(lens, 95)),
      fixture_kb: round(statSync(path.join(dir, 'fixtures', 'big.fixture.yaml')).size / 1024),
    };
    console.log('| measure | value |');
    console.log('|---|---:|');
    for (const [k, v] of Object.entries(out)) console.log(`| ${k} | ${v} |`);
    return out;
  } finally {
    await client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
