/**
 * The language server as an editor sees it: the built dist/server.js runs as its own process and
 * this file talks LSP to it (test/lsp/harness.ts) over a copy of test/lsp/workspace (a template,
 * its config and two fixtures). Every wait is on a notification or a response, never a sleep.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CodeActionRequest,
  CodeLensRequest,
  CompletionRequest,
  DocumentSymbolRequest,
  HoverRequest,
  LSPErrorCodes,
  ResponseError,
} from 'vscode-languageserver-protocol/node';
import type { CodeAction, CodeLens, CompletionItem, Diagnostic, DocumentSymbol, Hover, MarkupContent } from 'vscode-languageserver-protocol/node';
import { AssembleRequest, FixturesRequest, ModelsRequest, PreviewRequest, SelectFixtureRequest } from '../../src/protocol/lsp';
import { LspClient, applyEdits, copyWorkspace, editsFor, parseFrames, positionOf, removeWorkspace, uriOf } from './harness';

let ws: string;
let client: LspClient;
let template: string;
let config: string;
let fixture: string;

const codes = (ds: Diagnostic[]): string[] => ds.map((d) => String(d.code)).sort();
const text = (d: Diagnostic): string => (typeof d.message === 'string' ? d.message : d.message.value);
const hoverText = (h: Hover | null): string => (h ? (h.contents as MarkupContent).value : '');

async function lenses(uri: string): Promise<CodeLens[]> {
  return (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
}

async function actionsAt(uri: string, needle: string, diagnostics: Diagnostic[] = []): Promise<CodeAction[]> {
  const pos = positionOf(client.text(uri), needle, 1);
  const res = await client.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: { start: pos, end: pos }, context: { diagnostics } });
  return (res ?? []) as CodeAction[];
}

beforeAll(async () => {
  ws = copyWorkspace();
  template = path.join(ws, 'support.prompt');
  config = path.join(ws, 'support.context.yaml');
  fixture = path.join(ws, 'fixtures', 'basic.fixture.yaml');
  client = await LspClient.start({ workspace: ws });
});

afterAll(async () => {
  await client?.stop();
  if (ws) removeWorkspace(ws);
});

describe('language server over stdio', () => {
  it('announces its features', () => {
    const caps = client.session.initializeResult.capabilities;
    expect(caps.codeLensProvider).toBeTruthy();
    expect(caps.hoverProvider).toBe(true);
    expect(caps.codeActionProvider).toBeTruthy();
    expect(caps.documentSymbolProvider).toBe(true);
    expect(caps.completionProvider?.triggerCharacters).toContain('{');
  });

  it('publishes diagnostics for an opened template, with rule codes, links into docs/rules.md and related config lines', async () => {
    const uri = await client.open(template);
    const pub = await client.session.nextDiagnostics(uri, 0);
    expect(pub.version).toBe(1);
    expect(codes(pub.diagnostics)).toEqual(['slot-undefined', 'untrusted-in-system', 'untrusted-unlabelled', 'untrusted-unlabelled']);
    for (const d of pub.diagnostics) {
      expect(d.source).toBe('context-lens');
      expect(d.codeDescription?.href).toMatch(new RegExp(`^file://.*/docs/rules\\.md#rule-${d.code}$`));
      // The link resolves: the page exists where the server says, with the rule's anchor.
      const page = readFileSync(fileURLToPath(d.codeDescription!.href.replace(/#.*$/, '')), 'utf8');
      expect(page).toContain(`<a id="rule-${d.code}"></a>`);
    }
    const undef = pub.diagnostics.find((d) => d.code === 'slot-undefined')!;
    expect(undef.range.start).toEqual(positionOf(client.text(uri), 'extra}}'));
    expect(undef.relatedInformation?.[0].location.uri).toBe(uriOf(config));
    // Findings on the config reach the config, though it is not open (the workspace scan may
    // publish the config's own findings first).
    const cfg = await client.session.nextDiagnostics(uriOf(config), 0, (p) => codes(p.diagnostics).includes('trust-missing'));
    expect(codes(cfg.diagnostics)).toContain('trust-missing');
  });

  it('shows the request at the top and each slot at its first use as code lenses', async () => {
    const uri = uriOf(template);
    const list = await lenses(uri);
    const titles = list.map((l) => l.command?.title ?? '');
    const top = list.find((l) => l.command?.title.startsWith('input '))!;
    expect(top.range.start.line).toBe(0);
    // The input first, then the equation: "input 272 tok · + output 1,200 + margin 800 = 2,272 / 8,000".
    expect(top.command?.title).toMatch(/^input [\d,]+ tok · \+ output 1,200 \+ margin 800 = [\d,]+ \/ 8,000 · fixture basic · o200k_base(?: · \S.*)?$/);
    expect(top.command?.command).toBe('contextLens.preview');
    expect(top.command?.arguments).toEqual([uri]);
    expect(titles).toContain('switch fixture (2)');
    const evidence = list.find((l) => l.command?.title.startsWith('evidence · '))!;
    expect(evidence.range.start.line).toBe(positionOf(client.text(uri), '{{evidence}}').line);
    expect(evidence.command?.title).toMatch(/^evidence · \d+ \/ 3,000 tok · 2 of 2 items · untrusted$/);
    expect(titles.some((t) => /^ticket · \d+ \/ 600 tok · trust not declared$/.test(t))).toBe(true);
    expect(titles.some((t) => /^question · \d+ \/ 400 tok · untrusted · required$/.test(t))).toBe(true);
    // The top number is the assembled input plus the reserves, the same the trace states.
    const asm = await client.connection.sendRequest(AssembleRequest.type, { uri, format: 'json' });
    const total = asm!.trace.input_tokens + asm!.trace.reserved_output + asm!.trace.margin;
    expect(top.command?.title).toContain(`input ${asm!.trace.input_tokens.toLocaleString('en-US')} tok · + output 1,200 + margin 800 = ${total.toLocaleString('en-US')} / 8,000`);
  });

  it('explains a slot, a config entry and a fixture item on hover', async () => {
    const uri = uriOf(template);
    const onSlot = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: positionOf(client.text(uri), '{{evidence}}', 4) });
    const slotText = hoverText(onSlot);
    expect(slotText).toContain('**evidence** — evidence slot, untrusted');
    expect(slotText).toContain('Budget: 3,000 tok');
    expect(slotText).toMatch(/Items: 2 of 2 items kept/);
    expect(slotText).toContain('`ev_1`');

    const cfgUri = await client.open(config);
    await client.session.nextDiagnostics(cfgUri, client.session.diagnosticsCount(cfgUri) - 1, (p) => p.version === 1);
    const onEntry = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri: cfgUri }, position: positionOf(client.text(cfgUri), 'evidence: {', 2) });
    expect(hoverText(onEntry)).toContain('Budget: 3,000 tok');
    expect(hoverText(onEntry)).toMatch(/Share: \d+(\.\d)?% of the 5,200 tok allocated to input slots/);
    const onWindow = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri: cfgUri }, position: positionOf(client.text(cfgUri), 'window:', 1) });
    expect(hoverText(onWindow)).toContain('5,200 input + 1,200 output + 800 margin = 7,200 / 8,000 ✓');

    const fxUri = await client.open(fixture);
    await client.session.nextDiagnostics(fxUri, 0);
    const onItem = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri: fxUri }, position: positionOf(client.text(fxUri), 'id: ev_2', 5) });
    expect(hoverText(onItem)).toContain('**ev_2** in `evidence`');
    expect(hoverText(onItem)).toMatch(/\*\*Kept\*\* at position \d of its slot/);
    await client.close(fxUri);
  });

  it('puts the budget equation and per-slot shares on the config as lenses', async () => {
    const cfgUri = uriOf(config);
    const titles = (await lenses(cfgUri)).map((l) => l.command?.title);
    expect(titles).toContain('5,200 input + 1,200 output + 800 margin = 7,200 / 8,000 ✓');
    expect(titles).toContain('3,000 tok · 58% of input');
    expect(titles).toContain('800 tok · 15% of input');
  });

  it('offers quick fixes for a finding and the fix makes the diagnostic go away', async () => {
    const uri = uriOf(template);
    const diags = client.session.latestDiagnostics(uri)!.diagnostics;
    const inSystem = diags.find((d) => d.code === 'untrusted-in-system')!;
    const actions = await actionsAt(uri, 'notes}}', [inSystem]);
    const titles = actions.map((a) => a.title);
    expect(titles.some((t) => /^Move .*notes.* user/.test(t))).toBe(true);
    expect(titles.some((t) => /label/i.test(t))).toBe(true);
    expect(titles.some((t) => /<notes>/.test(t))).toBe(true);
    const move = actions.find((a) => /^Move /.test(a.title))!;
    expect(move.kind).toBe('quickfix');
    const before = client.session.diagnosticsCount(uri);
    const next = applyEdits(client.text(uri), editsFor(move, uri));
    expect(next).not.toBe(client.text(uri));
    const version = await client.edit(uri, 0, client.text(uri).length, next);
    const pub = await client.session.nextDiagnostics(uri, before, (p) => p.version === version);
    expect(codes(pub.diagnostics)).not.toContain('untrusted-in-system');
  });

  it('declares an undefined slot in the config from the template', async () => {
    const uri = uriOf(template);
    const cfgUri = uriOf(config);
    const actions = await actionsAt(uri, 'extra}}');
    const declare = actions.find((a) => /^Declare slot 'extra'/.test(a.title))!;
    expect(declare).toBeDefined();
    const cfgEdits = editsFor(declare, cfgUri);
    expect(cfgEdits.length).toBeGreaterThan(0);
    const before = client.session.diagnosticsCount(uri);
    const version = await client.edit(cfgUri, 0, client.text(cfgUri).length, applyEdits(client.text(cfgUri), cfgEdits));
    expect(client.text(cfgUri)).toMatch(/extra:/);
    // The template depends on the config: its diagnostics are republished without the finding.
    const pub = await client.session.nextDiagnostics(uri, before, (p) => !codes(p.diagnostics).includes('slot-undefined'));
    expect(codes(pub.diagnostics)).not.toContain('slot-undefined');
    expect(version).toBeGreaterThan(1);
  });

  it('re-analyses the template when its config changes, and rebalances an overflowing budget', async () => {
    const uri = uriOf(template);
    const cfgUri = uriOf(config);
    const tBefore = client.session.diagnosticsCount(uri);
    const cBefore = client.session.diagnosticsCount(cfgUri);
    // Evidence +1,500 tokens: the equation no longer holds.
    await client.replace(cfgUri, 'budget: 3000', 'budget: 4500');
    const cfgPub = await client.session.nextDiagnostics(cfgUri, cBefore, (p) => codes(p.diagnostics).includes('budget-overflow'));
    const overflow = cfgPub.diagnostics.find((d) => d.code === 'budget-overflow')!;
    expect(overflow.severity).toBe(1);
    await client.session.nextDiagnostics(uri, tBefore, (p) => p.diagnostics.length >= 0);
    const top = (await lenses(cfgUri)).find((l) => / = [\d,]+ \/ 8,000/.test(l.command?.title ?? ''))!;
    expect(top.command?.title).toMatch(/✗ over by [\d,]+$/);

    const pos = overflow.range.start;
    const res = (await client.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri: cfgUri }, range: { start: pos, end: pos }, context: { diagnostics: [overflow] } })) as CodeAction[];
    const rebalance = res.find((a) => a.title.startsWith('Rebalance budgets'))!;
    expect(rebalance.title).toMatch(/^Rebalance budgets to fit 8,000: .*evidence 4,500→[\d,]+/);
    const c2 = client.session.diagnosticsCount(cfgUri);
    await client.edit(cfgUri, 0, client.text(cfgUri).length, applyEdits(client.text(cfgUri), editsFor(rebalance, cfgUri)));
    // The first publication for the edited version is already free of the overflow.
    const fixed = await client.session.nextDiagnostics(cfgUri, c2, (p) => p.version === client.version(cfgUri));
    expect(codes(fixed.diagnostics)).not.toContain('budget-overflow');
  });

  it('follows a config changed on disk (watched files) when the config is not open', async () => {
    const uri = uriOf(template);
    const cfgUri = uriOf(config);
    await client.close(cfgUri);
    const cfgText = readFileSync(config, 'utf8');
    const before = client.session.diagnosticsCount(uri);
    // `ticket` becomes labelled on disk: its untrusted-unlabelled finding goes away.
    // Written aside and renamed into place, so no analysis can read a half-written file.
    writeFileSync(`${config}.tmp`, cfgText.replace('ticket:   { kind: other, budget: 600 }', 'ticket:   { kind: other, trust: untrusted, label: TICKET, budget: 600 }'));
    renameSync(`${config}.tmp`, config);
    await client.watchedFileChanged(config, 2);
    const pub = await client.session.nextDiagnostics(uri, before, (p) => !p.diagnostics.some((d) => d.code === 'untrusted-unlabelled' && text(d).includes("'ticket'")));
    expect(pub.diagnostics.filter((d) => text(d).includes("'ticket'")).map((d) => `${String(d.code)}: ${text(d)}`)).toEqual([]);
  });

  it('lists fixtures, switches fixture and updates lenses; previews and assembles over custom requests', async () => {
    const uri = uriOf(template);
    const list = await client.connection.sendRequest(FixturesRequest.type, { uri });
    expect(list.fixtures.map((f) => f.name).sort()).toEqual(['basic', 'second']);
    expect(list.active).toBe(fixture);
    const second = list.fixtures.find((f) => f.name === 'second')!;
    const before = client.session.lensRefreshes;
    await client.connection.sendRequest(SelectFixtureRequest.type, { uri, fixture: second.path });
    await client.session.until(() => client.session.lensRefreshes > before, 'a code lens refresh');
    const top = (await lenses(uri)).find((l) => l.command?.title.startsWith('input '));
    expect(top?.command?.title).toContain('fixture second');

    const reply = await client.connection.sendRequest(PreviewRequest.type, { uri });
    expect('snapshot' in reply).toBe(true);
    if (!('snapshot' in reply)) return;
    const snap = reply.snapshot;
    expect(snap.templateUri).toBe(uri);
    expect(snap.selectedFixture).toBe(second.path);
    expect(snap.fixtures).toHaveLength(2);
    expect(snap.result.ok).toBe(true);
    expect(snap.result.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(snap.locations.items.some((i) => i.id === 'ev_9' && i.path === second.path)).toBe(true);

    const openai = await client.connection.sendRequest(AssembleRequest.type, { uri, format: 'openai' });
    const messages = JSON.parse(openai!.content) as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(openai!.language).toBe('json');
    const anthropic = await client.connection.sendRequest(AssembleRequest.type, { uri, format: 'anthropic' });
    expect(JSON.parse(anthropic!.content)).toHaveProperty('system');
    const models = await client.connection.sendRequest(ModelsRequest.type, { uri });
    expect(models.active).toBe('gpt-4o');
    await client.connection.sendRequest(SelectFixtureRequest.type, { uri, fixture: null });
  });

  it('completes slot names in a template and keys and values in a config', async () => {
    const uri = uriOf(template);
    const at = client.text(uri).indexOf('{{evidence}}') + 2;
    const v = await client.edit(uri, at, at, 'ev');
    expect(v).toBeGreaterThan(1);
    const items = (await client.connection.sendRequest(CompletionRequest.type, { textDocument: { uri }, position: positionOf(client.text(uri), '{{evevidence}}', 4) })) as CompletionItem[];
    expect(items.map((i) => i.label)).toEqual(expect.arrayContaining(['evidence', 'question', 'policy']));
    await client.edit(uri, at, at + 2, '');

    const cfgUri = await client.open(config);
    const text = client.text(cfgUri);
    const end = text.length;
    await client.edit(cfgUri, end, end, 'tok');
    const keys = (await client.connection.sendRequest(CompletionRequest.type, { textDocument: { uri: cfgUri }, position: positionOf(client.text(cfgUri), 'tok', 3) })) as CompletionItem[];
    expect(keys.map((k) => k.label)).toEqual(expect.arrayContaining(['tokenizer', 'window', 'slots', 'margin']));
    await client.edit(cfgUri, end, end + 3, '');
    const kindAt = client.text(cfgUri).indexOf('kind: policy') + 'kind: '.length;
    const values = (await client.connection.sendRequest(CompletionRequest.type, { textDocument: { uri: cfgUri }, position: positionOf(client.text(cfgUri), 'kind: policy', 6) })) as CompletionItem[];
    expect(kindAt).toBeGreaterThan(0);
    expect(values.map((k) => k.label)).toEqual(expect.arrayContaining(['policy', 'evidence', 'history', 'other']));
  });

  it('outlines messages and slots of a template, and slots of a config', async () => {
    const uri = uriOf(template);
    const symbols = (await client.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } })) as DocumentSymbol[];
    expect(symbols.map((s) => s.name)).toEqual(['system', 'user']);
    expect(symbols[1].children?.map((c) => c.name)).toEqual(expect.arrayContaining(['evidence', 'ticket', 'question']));
    const cfg = (await client.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: uriOf(config) } })) as DocumentSymbol[];
    const slots = cfg.find((s) => s.name === 'slots')!;
    expect(slots.children?.map((c) => c.name)).toEqual(expect.arrayContaining(['policy', 'notes', 'evidence', 'ticket', 'question']));
  });

  it('never publishes diagnostics for an old version when edits come quickly', async () => {
    const uri = uriOf(template);
    const before = client.session.diagnosticsCount(uri);
    let last = 0;
    for (let i = 0; i < 5; i++) last = await client.edit(uri, 0, 0, '');
    const at = client.text(uri).indexOf('Follow the policy');
    for (let i = 0; i < 3; i++) last = await client.edit(uri, at, at, 'x');
    await client.session.nextDiagnostics(uri, before, (p) => p.version === last);
    const published = (client.session.diagnostics.get(uri) ?? []).slice(before).map((p) => p.version ?? 0);
    for (let i = 1; i < published.length; i++) expect(published[i]).toBeGreaterThanOrEqual(published[i - 1]);
    expect(published[published.length - 1]).toBe(last);
  });

  // Last in this block: it ends the server, so that stdout is complete (a snapshot taken while the
  // server runs can end inside a frame still being written).
  it('writes nothing but LSP frames to stdout', async () => {
    await client.stop();
    expect(client.session.closed).toBe(true);
    const frames = parseFrames(client.session.stdout);
    expect(frames.length).toBeGreaterThan(10);
  });
});

describe('pending edits and cancellation', () => {
  let slow: LspClient;
  let slowWs: string;
  afterAll(async () => {
    await slow?.stop();
    if (slowWs) removeWorkspace(slowWs);
  });

  it('keeps lenses in place while an edit waits for analysis, and cancels a request waiting for it', async () => {
    slowWs = copyWorkspace();
    // A long debounce holds every edit pending, so what the server answers meanwhile is observable.
    slow = await LspClient.start({ workspace: slowWs, initializationOptions: { debounceMs: 60_000 } });
    const uri = await slow.open(path.join(slowWs, 'support.prompt'));
    await slow.session.nextDiagnostics(uri, 0);
    const lensesNow = async (): Promise<CodeLens[]> => (await slow.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
    const evidenceLine = (ls: CodeLens[]): number => ls.find((l) => l.command?.title.startsWith('evidence · '))!.range.start.line;
    const first = await lensesNow();
    const line = evidenceLine(first);
    // Two new lines above {{evidence}}: the pending analysis' lenses are mapped onto the new text.
    const at = slow.text(uri).indexOf('{{role "user"}}');
    await slow.edit(uri, at, at, 'A new line.\nAnother one.\n');
    const pending = await lensesNow();
    expect(pending).toHaveLength(first.length);
    expect(evidenceLine(pending)).toBe(line + 2);
    expect(pending.map((l) => l.command?.title)).toEqual(first.map((l) => l.command?.title));

    // A code action waits for the fresh analysis; cancelling it answers with RequestCancelled.
    const source = slow.cancellable();
    const pos = positionOf(slow.text(uri), '{{notes}}', 2);
    const request = slow.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: { start: pos, end: pos }, context: { diagnostics: [] } }, source.token);
    source.cancel();
    const outcome = await request.then(
      (r) => ({ result: r }),
      (e: unknown) => ({ error: e }),
    );
    expect('error' in outcome).toBe(true);
    if ('error' in outcome) {
      expect(outcome.error).toBeInstanceOf(ResponseError);
      expect((outcome.error as ResponseError<unknown>).code).toBe(LSPErrorCodes.RequestCancelled);
    }
    // The server is still answering.
    const hover = await slow.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: positionOf(slow.text(uri), '{{question}}', 3) });
    expect(hoverText(hover)).toContain('**question**');
  });
});
