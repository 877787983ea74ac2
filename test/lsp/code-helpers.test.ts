/**
 * Helpers and partials registered in code, as an editor sees them: the built server over LSP
 * (test/lsp/harness.ts). An undeclared helper is one `unknown-helper` warning with a quick fix
 * that declares it in the context config; once declared (by that fix, or by the
 * `contextLens.dotprompt.helpers` setting) the warning gives way to a `code-registered` info.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeActionRequest, DidChangeConfigurationNotification } from 'vscode-languageserver-protocol/node';
import type { CodeAction, Diagnostic, PublishDiagnosticsParams } from 'vscode-languageserver-protocol/node';
import { LspClient, applyEdits, editsFor, uriOf } from './harness';

let ws: string;
let client: LspClient;

const TEMPLATE = '---\nmodel: gpt-4o\n---\n{{role "system"}}\nYou are {{persona}}.\n{{role "user"}}\n<question>{{shout question}}</question>\n';
const CONFIG = '# Support request budget.\nmodel: gpt-4o\noutput: 200\nslots:\n  persona: { kind: policy, trust: trusted }\n  question: { kind: user, trust: untrusted }\n';

const codes = (p: PublishDiagnosticsParams): string[] => p.diagnostics.map((d) => String(d.code));

async function actions(uri: string, d: Diagnostic): Promise<CodeAction[]> {
  const res = await client.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
  return (res ?? []) as CodeAction[];
}

beforeAll(async () => {
  ws = mkdtempSync(path.join(tmpdir(), 'ctxlens-lsp-helpers-'));
  mkdirSync(path.join(ws, 'with-config'));
  mkdirSync(path.join(ws, 'zero'));
  mkdirSync(path.join(ws, 'block'));
  writeFileSync(path.join(ws, 'block', 'notes.prompt'), '---\nmodel: gpt-4o\n---\n{{role "system"}}\nDated {{formatDate today}}.\n{{role "user"}}\n<q>{{shout question}}</q>\n');
  writeFileSync(path.join(ws, 'block', 'notes.context.yaml'), `${CONFIG}helpers:\n  - formatDate   # registered in src/genkit.ts\npartials: []\n`);
  writeFileSync(path.join(ws, 'with-config', 'support.prompt'), TEMPLATE);
  writeFileSync(path.join(ws, 'with-config', 'support.context.yaml'), CONFIG);
  writeFileSync(path.join(ws, 'zero', 'ask.prompt'), '---\nmodel: gpt-4o\n---\nAnswer {{shout question}} in {{#tone}}a {{.}} tone{{/tone}}.\n');
  client = await LspClient.start({ workspace: ws });
});

afterAll(async () => {
  await client?.stop();
  if (ws) rmSync(ws, { recursive: true, force: true });
});

describe('an undeclared helper', () => {
  it('is one warning whose quick fix declares it in the config, after which it is a located info', async () => {
    const template = path.join(ws, 'with-config', 'support.prompt');
    const config = path.join(ws, 'with-config', 'support.context.yaml');
    const uri = await client.open(template);
    const pub = await client.session.nextDiagnostics(uri, 0, (p) => codes(p).includes('unknown-helper'));
    const unknown = pub.diagnostics.filter((d) => d.code === 'unknown-helper');
    expect(unknown).toHaveLength(1);
    expect(unknown[0].severity).toBe(2);
    expect(unknown[0].message).toMatch(/^'shout' is not a dotprompt helper/);
    expect(codes(pub)).not.toContain('template-invalid');

    const fixes = await actions(uri, unknown[0]);
    const fix = fixes.find((a) => a.title.startsWith("Declare 'shout' as a helper registered in code"));
    expect(fix, JSON.stringify(fixes.map((a) => a.title))).toBeDefined();
    expect(fix!.isPreferred).toBe(true);
    const edits = editsFor(fix as never, uriOf(config));
    expect(edits.length).toBe(1);
    const next = applyEdits(CONFIG, edits);
    expect(next).toBe(`${CONFIG}helpers: [shout]\n`);

    // The editor applies the edit and saves the config: the warning gives way to an info.
    const seen = client.session.diagnostics.get(uri)?.length ?? 0;
    writeFileSync(config, next);
    await client.watchedFileChanged(config, 2);
    const after = await client.session.nextDiagnostics(uri, seen, (p) => codes(p).includes('code-registered'));
    expect(codes(after)).not.toContain('unknown-helper');
    const info = after.diagnostics.find((d) => d.code === 'code-registered')!;
    expect(info.severity).toBe(3);
    expect(info.range.start.line).toBe(6);
    expect(readFileSync(config, 'utf8')).toContain('helpers: [shout]');
  });

  it('in a template without a config, the fix creates one that declares it', async () => {
    const template = path.join(ws, 'zero', 'ask.prompt');
    const uri = await client.open(template);
    const pub = await client.session.nextDiagnostics(uri, 0, (p) => codes(p).includes('unknown-helper'));
    const d = pub.diagnostics.find((x) => x.code === 'unknown-helper')!;
    const fix = (await actions(uri, d)).find((a) => a.title.includes("Declare 'shout'"));
    expect(fix?.title).toContain('create ask.context.yaml');
    const changes = fix!.edit!.documentChanges as Array<{ kind?: string; uri?: string; textDocument?: { uri: string }; edits?: Array<{ newText: string }> }>;
    expect(changes[0]).toMatchObject({ kind: 'create', uri: uriOf(path.join(ws, 'zero', 'ask.context.yaml')) });
    expect(changes[1].edits![0].newText).toMatch(/\nhelpers: \[shout\]\n$/);
  });

  it('joins a block list the config already has, after its last item', async () => {
    const template = path.join(ws, 'block', 'notes.prompt');
    const config = path.join(ws, 'block', 'notes.context.yaml');
    const uri = await client.open(template);
    const pub = await client.session.nextDiagnostics(uri, 0, (p) => codes(p).includes('unknown-helper'));
    // formatDate is declared: an info; shout is not: the one warning.
    expect(pub.diagnostics.filter((d) => d.code === 'unknown-helper').map((d) => String(d.message).slice(0, 7))).toEqual(["'shout'"]);
    expect(codes(pub)).toContain('code-registered');
    const d = pub.diagnostics.find((x) => x.code === 'unknown-helper')!;
    const fix = (await actions(uri, d)).find((a) => a.title.includes("Declare 'shout'"))!;
    const before = readFileSync(config, 'utf8');
    expect(applyEdits(before, editsFor(fix as never, uriOf(config)))).toBe(before.replace('  - formatDate   # registered in src/genkit.ts\n', '  - formatDate   # registered in src/genkit.ts\n  - shout\n'));
  });

  it('the contextLens.dotprompt.helpers setting declares it for every template', async () => {
    const uri = uriOf(path.join(ws, 'zero', 'ask.prompt'));
    const seen = client.session.diagnostics.get(uri)?.length ?? 0;
    await client.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { contextLens: { dotprompt: { helpers: ['shout'] } } } });
    const after = await client.session.nextDiagnostics(uri, seen, (p) => codes(p).includes('code-registered'));
    expect(codes(after)).not.toContain('unknown-helper');
  });
});
