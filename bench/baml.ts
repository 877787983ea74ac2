/**
 * BAML through BAML's own runtime (@boundaryml/baml), issue 26's two figures:
 *
 * - A keystroke in a 20-function project (four files of five functions, classes with nested
 *   citations, an enum, ctx.output_format in every function, a test per function), as an editor
 *   experiences it: over LSP against the built server (debounce 0), a one-character edit in a
 *   prompt of the open file, until the refreshed lenses are returned. Target: p95 ≤ 50 ms. The
 *   runtime's own `fromFiles` of the project is measured beside it.
 * - `assemble()` of a function with a 50-item list parameter (the library, in process) ÷ the
 *   runtime's own `buildRequestSync` for the same arguments. Target: ≤ 2×.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CodeLensRequest } from 'vscode-languageserver-protocol/node';
import { LspClient, ensureBuilt } from '../test/lsp/harness';
import { openWorkspace } from '../src/lib';

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const round = (x: number): number => Math.round(x * 100) / 100;

const TYPES = `class Citation {
  doc_id string @description("The id of a passage")
  quote string @alias("excerpt")
}

enum Confidence {
  HIGH @description("Every claim is cited")
  LOW
}

class Answer {
  text string
  citations Citation[]
  confidence Confidence
}
`;

function fileOf(k: number): string {
  let out = '';
  for (let j = 0; j < 5; j++) {
    const n = k * 5 + j;
    out += `function Answer${n}(question: string, evidence: string[]) -> Answer {
  client "openai/gpt-4o"
  prompt #"
    {{ _.role("system") }}
    You answer from the evidence only and cite every claim (function ${n}).
    {{ ctx.output_format }}
    {{ _.role("user") }}
    {% for e in evidence %}
    - {{ e }}
    {% endfor %}
    Question: {{ question }}
  "#
}

test T${n} {
  functions [Answer${n}]
  args {
    question "How long is the refund window?"
    evidence ["Refunds within 30 days.", "Items must be unused.", "Express orders ship in 2 days."]
  }
}

`;
  }
  return out;
}

function workspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctxlens-bench-baml-'));
  mkdirSync(path.join(dir, 'baml_src'));
  writeFileSync(path.join(dir, 'baml_src', 'types.baml'), TYPES);
  for (let k = 0; k < 4; k++) writeFileSync(path.join(dir, 'baml_src', `answers${k}.baml`), fileOf(k));
  return dir;
}

function mean(f: () => void, n: number): number {
  for (let i = 0; i < Math.min(20, n); i++) f();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f();
  return (performance.now() - t0) / n;
}

export async function run(): Promise<Record<string, number>> {
  ensureBuilt();
  const dir = workspace();
  const baml = createRequire(__filename)('@boundaryml/baml');
  try {
    const files: Record<string, string> = {};
    for (const f of readdirSync(path.join(dir, 'baml_src'))) files[`baml_src/${f}`] = readFileSync(path.join(dir, 'baml_src', f), 'utf8');
    const fromFilesMs = mean(() => baml.BamlRuntime.fromFiles('baml_src', files, {}), 30);

    // assemble() of a 50-item function ÷ buildRequestSync for the same arguments.
    const evidence = Array.from({ length: 50 }, (_, i) => `Passage ${i}: the client retries idempotent requests up to ${i % 7} times with exponential backoff.`);
    const args = { question: 'Does the client retry POST requests?', evidence };
    const rt = baml.BamlRuntime.fromFiles('baml_src', files, {});
    const runtimeMs = mean(() => rt.buildRequestSync('Answer0', args, rt.createContextManager(), null, null, false, {}).body.text(), 200);
    const ws = openWorkspace(dir);
    const libraryMs = mean(() => ws.assemble('baml_src/answers0.baml#Answer0', { slots: args }), 200);

    const client = await LspClient.start({ workspace: dir, initializationOptions: { debounceMs: 0 } });
    let out: Record<string, number>;
    try {
      const uri = await client.open(path.join(dir, 'baml_src', 'answers0.baml'), 'baml');
      const t0 = performance.now();
      await client.session.nextDiagnostics(uri, 0, undefined, 120_000);
      const firstMs = performance.now() - t0;
      const anchor = client.text(uri).indexOf('cite every claim') + 4;
      const lens: number[] = [];
      const WARMUP = 3;
      const N = 25;
      for (let i = 0; i < WARMUP + N; i++) {
        const before = client.session.diagnosticsCount(uri);
        const start = performance.now();
        const v = i % 2 === 0 ? await client.edit(uri, anchor, anchor, 'x') : await client.edit(uri, anchor, anchor + 1, '');
        await client.session.nextDiagnostics(uri, before, (p) => p.version === v, 60_000);
        const lenses = await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } });
        const refreshed = performance.now();
        if (!lenses?.some((l) => l.command?.title.startsWith('ctx.output_format · '))) throw new Error(`no output format lens: ${JSON.stringify(lenses?.map((l) => l.command?.title))}`);
        if (i >= WARMUP) lens.push(refreshed - start);
      }
      out = {
        functions: 20,
        first_analysis_ms: round(firstMs),
        edit_to_lenses_p50_ms: round(percentile(lens, 50)),
        edit_to_lenses_p95_ms: round(percentile(lens, 95)),
        from_files_ms: round(fromFilesMs),
        assemble_50_items_ms: round(libraryMs),
        build_request_sync_50_items_ms: round(runtimeMs),
        assemble_over_runtime: round(libraryMs / runtimeMs),
      };
    } finally {
      await client.stop();
    }
    console.log('| measure | value |');
    console.log('|---|---:|');
    for (const [k, v] of Object.entries(out)) console.log(`| ${k} | ${v} |`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
