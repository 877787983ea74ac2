/**
 * A BAML project in the editor, over LSP against the built server (test/lsp/harness.ts): a
 * `.baml` file with two functions gets each function's total above its name and a lens per
 * parameter and for `{{ ctx.output_format }}`, counted from the request BAML's runtime builds with
 * the function's test; the preview shows the runtime's messages. While the project does not load
 * (typing), there is one located finding with the runtime's own message, and the lenses keep the
 * last good counts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeLensRequest } from 'vscode-languageserver-protocol/node';
import type { CodeLens } from 'vscode-languageserver-protocol/node';
import { PreviewRequest } from '../../src/protocol/lsp';
import { LspClient } from './harness';

let ws: string;
let client: LspClient;

async function lenses(uri: string): Promise<CodeLens[]> {
  return (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
}

const TYPES = `class Answer {
  text string @description("The answer")
  sources string[]
}
`;

const MAIN = `function AnswerQuestion(question: string, evidence: string[]) -> Answer {
  client "openai/gpt-4o"
  prompt #"
    {{ _.role("system") }}
    Answer from the evidence only.
    {{ ctx.output_format }}
    {{ _.role("user") }}
    {% for e in evidence %}
    - {{ e }}
    {% endfor %}
    {{ question }}
  "#
}

function Title(text: string) -> string {
  client "openai/gpt-4o-mini"
  prompt #"
    {{ _.role("user") }} A title for: {{ text }}
  "#
}

test Refunds {
  functions [AnswerQuestion]
  args {
    question "How long is the refund window?"
    evidence ["Refunds within 30 days.", "Items must be unused."]
  }
}

test Short {
  functions [Title]
  args {
    text "Refund policy"
  }
}
`;

beforeAll(async () => {
  ws = mkdtempSync(path.join(tmpdir(), 'ctxlens-lsp-baml-'));
  mkdirSync(path.join(ws, 'baml_src'), { recursive: true });
  writeFileSync(path.join(ws, 'baml_src', 'types.baml'), TYPES);
  writeFileSync(path.join(ws, 'baml_src', 'main.baml'), MAIN);
  client = await LspClient.start({ workspace: ws });
});

afterAll(async () => {
  await client?.stop();
  if (ws) rmSync(ws, { recursive: true, force: true });
});

describe('a BAML file in the editor', () => {
  let uri: string;

  it('lenses per function, per parameter and for the output format', async () => {
    uri = await client.open(path.join(ws, 'baml_src', 'main.baml'), 'baml');
    const first = await client.session.nextDiagnostics(uri, 0, () => true);
    expect(first.diagnostics.filter((d) => d.code === 'template-invalid')).toEqual([]);
    const all = await lenses(uri);
    const titles = all.map((l) => l.command?.title ?? '');
    const line = (t: RegExp) => all.find((l) => t.test(l.command?.title ?? ''))?.range.start.line;
    // Each parameter's tokens from the runtime's request, above its first use.
    expect(line(/^question · \d+ tok/), JSON.stringify(titles)).toBe(10);
    expect(line(/^evidence · \d+ tok/)).toBe(7);
    expect(line(/^ctx\.output_format · \d+ tok/)).toBe(5);
    expect(line(/^text · \d+ tok/)).toBe(17);
    // Each function's total above its name: two request lenses.
    const heads = all.filter((l) => l.range.start.line === 0 || l.range.start.line === 14);
    expect(heads.length).toBeGreaterThanOrEqual(2);
    const format = Number(/^ctx\.output_format · (\d+) tok/.exec(titles.find((t) => t.startsWith('ctx.output_format'))!)![1]);
    expect(format).toBeGreaterThan(10);
  });

  it('previews the request the runtime built', async () => {
    const reply = (await client.connection.sendRequest(PreviewRequest.type, { uri })) as { snapshot?: { messages?: Array<{ role: string; content: string }> } } & Record<string, unknown>;
    const text = JSON.stringify(reply);
    expect(text, text.slice(text.indexOf("findings"), text.indexOf("findings") + 1500)).toContain("Answer in JSON using this schema");
    expect(text).toContain('Refunds within 30 days.');
  });

  it('while the project does not load: one located finding with the runtime\'s message, the last good lenses kept', async () => {
    const before = (await lenses(uri)).map((l) => l.command?.title ?? '');
    const n = client.session.diagnosticsCount(uri);
    await client.replace(uri, '  client "openai/gpt-4o"\n', '  client "openai/gpt-4o"\n  oops\n');
    const pub = await client.session.nextDiagnostics(uri, n, (p) => p.diagnostics.some((d) => d.code === 'template-invalid'));
    const invalid = pub.diagnostics.filter((d) => d.code === 'template-invalid');
    expect(invalid).toHaveLength(1);
    expect(invalid[0].message).toContain('baml_src/main.baml:3');
    expect(invalid[0].range.start.line).toBe(2);
    const during = (await lenses(uri)).map((l) => l.command?.title ?? '');
    expect(during.find((t) => t.startsWith('question ·'))).toBe(before.find((t) => t.startsWith('question ·')));
    expect(during.find((t) => t.startsWith('ctx.output_format ·'))).toBe(before.find((t) => t.startsWith('ctx.output_format ·')));
    // Fixed again: the finding goes.
    const m = client.session.diagnosticsCount(uri);
    await client.replace(uri, '  oops\n', '');
    await client.session.nextDiagnostics(uri, m, (p) => !p.diagnostics.some((d) => d.code === 'template-invalid'));
  });
});
