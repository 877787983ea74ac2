/**
 * Plain prompt files in the editor, over LSP against the built server (test/lsp/harness.ts):
 * a `prompts/system.md` with no config gets a token lens for the default model and a README
 * beside it gets nothing; a request composed by a context config's `messages` (Markdown, a
 * Jinja2 file, an f-string file) gives each file its per-placeholder lenses and hovers, and its
 * diagnostics: a placeholder the config does not define, a slot no file uses, untrusted data in
 * the system role without a label, an unknown Jinja2 filter named, a secret.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeLensRequest, DidChangeConfigurationNotification, HoverRequest } from 'vscode-languageserver-protocol/node';
import type { CodeLens, Hover, MarkupContent, PublishDiagnosticsParams } from 'vscode-languageserver-protocol/node';
import { LspClient, positionOf, uriOf } from './harness';
import { AssembleRequest, PreviewRequest } from '../../src/protocol/lsp';

let ws: string;
let client: LspClient;

const codes = (p: PublishDiagnosticsParams): string[] => p.diagnostics.map((d) => String(d.code));
const hoverText = (h: Hover | null): string => (h ? (h.contents as MarkupContent).value : '');

async function lenses(uri: string): Promise<CodeLens[]> {
  return (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
}

/** The lenses once they satisfy `ok`, asked again after each lens refresh the server sends (bounded by the refreshes' waits). */
async function lensesWhen(uri: string, ok: (ls: CodeLens[]) => boolean, what: string): Promise<CodeLens[]> {
  for (let i = 0; i < 20; i++) {
    const before = client.session.lensRefreshes;
    const ls = await lenses(uri);
    if (ok(ls)) return ls;
    await client.session.until(() => client.session.lensRefreshes > before, what, 30_000);
  }
  throw new Error(`${what}: not after 20 refreshes`);
}

const RULES = '{# The rules of the agent. #}\nYou answer from the evidence only.\n{% for d in evidence %}\n- {{ d }}\n{% endfor %}\nLanguage: {{ language | shout }}\nAlso {{ nobody }}.\n';
const USER = 'Question: {question}\n';
const CONFIG = [
  'version: 1',
  'model: gpt-4o',
  'window: 16000',
  'output: 1000',
  'loader: langchain',
  'jinja: { trim_blocks: true, lstrip_blocks: true }',
  'fixtures: ["*.fixture.yaml"]',
  'messages:',
  '  - { role: system, file: system.md, format: text }',
  '  - { role: system, file: rules.j2 }',
  '  - { role: user, file: user.md }',
  'slots:',
  '  evidence: { kind: evidence, trust: untrusted, budget: 2000 }',
  '  language: { kind: policy, trust: trusted, budget: 20 }',
  '  question: { kind: user, trust: untrusted, required: true, budget: 200, label: QUESTION }',
  '  unused: { kind: other, trust: trusted }',
  '',
].join('\n');

beforeAll(async () => {
  ws = mkdtempSync(path.join(tmpdir(), 'ctxlens-lsp-plain-'));
  mkdirSync(path.join(ws, 'alone', 'prompts'), { recursive: true });
  mkdirSync(path.join(ws, 'app', 'prompts'), { recursive: true });
  writeFileSync(path.join(ws, 'alone', 'prompts', 'system.md'), '# Role\n\nYou are a support agent for the Orbit SDK. Answer briefly and cite the docs.\n');
  writeFileSync(path.join(ws, 'alone', 'prompts', 'README.md'), '# Prompts\n\nThese files are loaded by app.py. {not_a_placeholder}\n');
  writeFileSync(path.join(ws, 'app', 'prompts', 'system.md'), 'You are the Orbit SDK assistant. Key: sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx\n');
  writeFileSync(path.join(ws, 'app', 'prompts', 'rules.j2'), RULES);
  writeFileSync(path.join(ws, 'app', 'prompts', 'user.md'), USER);
  writeFileSync(path.join(ws, 'app', 'prompts', 'agent.context.yaml'), CONFIG);
  writeFileSync(
    path.join(ws, 'app', 'prompts', 'agent.fixture.yaml'),
    'slots:\n  evidence:\n    - { id: ev_1, text: "Version 4.2 retries 429 responses." }\n    - { id: ev_2, text: "Retries back off exponentially." }\n  language: English\n  question: Does 4.2 retry?\n',
  );
  client = await LspClient.start({ workspace: ws });
});

afterAll(async () => {
  await client?.stop();
  if (ws) rmSync(ws, { recursive: true, force: true });
});

describe('a plain prompt file with no config', () => {
  it('shows its tokens for the default model; a README beside it is no prompt', async () => {
    const uri = await client.open(path.join(ws, 'alone', 'prompts', 'system.md'), 'markdown');
    await client.session.nextDiagnostics(uri, 0, () => true);
    const titles = (await lenses(uri)).map((l) => l.command?.title ?? '');
    expect(titles.some((t) => /\d+ tok/.test(t)), JSON.stringify(titles)).toBe(true);

    const readme = await client.open(path.join(ws, 'alone', 'prompts', 'README.md'), 'markdown');
    expect(await lenses(readme)).toEqual([]);
  });
});

describe('a request composed of plain files by a context config', () => {
  it('gives the Jinja2 file its diagnostics: untrusted in system unlabelled, an undefined placeholder, the unknown filter named', async () => {
    const uri = await client.open(path.join(ws, 'app', 'prompts', 'rules.j2'), 'jinja');
    const pub = await client.session.nextDiagnostics(uri, 0, (p) => codes(p).includes('untrusted-in-system'));
    const got = codes(pub);
    expect(got).toContain('untrusted-in-system');
    expect(got).toContain('untrusted-unlabelled');
    expect(got).toContain('slot-undefined');
    const undefinedSlot = pub.diagnostics.find((d) => d.code === 'slot-undefined')!;
    expect(undefinedSlot.message).toContain("'nobody'");
    expect(undefinedSlot.range.start.line).toBe(6);
    const filter = pub.diagnostics.find((d) => d.code === 'unknown-helper');
    expect(filter?.message, JSON.stringify(pub.diagnostics.map((d) => d.message))).toMatch(/Unknown Jinja2 filter 'shout'.*jinja: \{ filters: \[shout\] \}/);
  });

  it('puts a lens on each placeholder with its tokens and budget, and a hover on it', async () => {
    const uri = uriOf(path.join(ws, 'app', 'prompts', 'rules.j2'));
    const all = await lenses(uri);
    const titles = all.map((l) => l.command?.title ?? '');
    const evidence = all.find((l) => l.command?.title.startsWith('evidence · '));
    expect(evidence?.command?.title, JSON.stringify(titles)).toMatch(/^evidence · \d+ \/ 2,000 tok · 2 of 2 items · untrusted$/);
    expect(evidence!.range.start.line).toBe(2);
    expect(titles.some((t) => /^language · \d+ \/ 20 tok/.test(t))).toBe(true);
    // question is used in user.md, not here: its lens is there.
    expect(titles.some((t) => t.startsWith('question · '))).toBe(false);

    const h = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: positionOf(client.text(uri), 'evidence %}', 2) });
    expect(hoverText(h)).toContain('**evidence** — evidence slot, untrusted');
  });

  it('gives the f-string file its placeholder lens, and the config the slot no file uses', async () => {
    const uri = await client.open(path.join(ws, 'app', 'prompts', 'user.md'), 'markdown');
    await client.session.nextDiagnostics(uri, 0, () => true);
    const titles = (await lenses(uri)).map((l) => l.command?.title ?? '');
    expect(titles.some((t) => /^question · \d+ \/ 200 tok · untrusted · required$/.test(t)), JSON.stringify(titles)).toBe(true);

    const cfg = await client.open(path.join(ws, 'app', 'prompts', 'agent.context.yaml'), 'yaml');
    const pub = await client.session.nextDiagnostics(cfg, 0, (p) => codes(p).includes('slot-unused'));
    expect(pub.diagnostics.find((d) => d.code === 'slot-unused')?.message).toContain("'unused'");
  });

  it('the preview of any file of the request is the whole request', async () => {
    const uri = uriOf(path.join(ws, 'app', 'prompts', 'user.md'));
    const reply = await client.connection.sendRequest(PreviewRequest.type, { uri });
    expect('snapshot' in reply).toBe(true);
    if (!('snapshot' in reply)) return;
    const snap = reply.snapshot;
    expect(snap.templateUri).toBe(uri);
    expect(snap.result.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    // The labelled question in its envelope.
    expect(snap.result.messages[2].content).toMatch(/^Question: \[QUESTION question_1\][\s\S]*Does 4\.2 retry\?[\s\S]*\[\/QUESTION\]\n$/);
    expect(snap.result.messages[0].content).toMatch(/^You are the Orbit SDK assistant\./);
    // rules.j2 calls a filter jinja2 does not have: jinja2 would raise, so nothing is rendered for it.
    expect(snap.result.messages[1].content).toBe('');
    const openai = await client.connection.sendRequest(AssembleRequest.type, { uri, format: 'openai' });
    expect((JSON.parse(openai!.content) as unknown[]).length).toBe(3);
  });

  it('reports the secret in the Markdown system prompt', async () => {
    const uri = await client.open(path.join(ws, 'app', 'prompts', 'system.md'), 'markdown');
    const pub = await client.session.nextDiagnostics(uri, 0, (p) => p.diagnostics.some((d) => /secret/i.test(String(d.code))));
    expect(pub.diagnostics.some((d) => d.range.start.line === 0)).toBe(true);
  });
});

describe('the contextLens.plainPrompts.files setting', () => {
  it('makes Markdown outside a prompts/ folder a prompt for the documents opened after it', async () => {
    const file = path.join(ws, 'alone', 'llm', 'persona.md');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'You are a patient tutor for SQL beginners.\n');
    const uri = await client.open(file, 'markdown');
    expect(await lenses(uri)).toEqual([]);
    await client.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { contextLens: { plainPrompts: { files: ['**/llm/*.md'] } } } });
    // The setting applies to the documents opened after it (an editor reopens them; VS Code's client selects them at start).
    await client.close(uri);
    const again = await client.open(file, 'markdown');
    await lensesWhen(again, (ls) => ls.some((l) => /\d+ tok/.test(l.command?.title ?? '')), 'a token lens on llm/persona.md');
    // Back to the default: prompts/ again.
    await client.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { contextLens: { plainPrompts: { files: [] } } } });
    await client.close(again);
    const third = await client.open(file, 'markdown');
    expect(await lenses(third)).toEqual([]);
    expect((await lenses(uriOf(path.join(ws, 'alone', 'prompts', 'system.md')))).length).toBeGreaterThan(0);
  }, 120_000);
});
