/**
 * Huge input: a 5 MB fixture opened in the editor gets a light analysis (one finding, no parse,
 * no counting) and does not hold up hovers and lenses on the template it belongs to. A template
 * full of malformed syntax gets diagnostics, never a crash.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CodeLensRequest, HoverRequest } from 'vscode-languageserver-protocol/node';
import type { MarkupContent } from 'vscode-languageserver-protocol/node';
import { LspClient, copyWorkspace, positionOf, removeWorkspace } from './harness';

let ws: string;
let client: LspClient;

beforeAll(async () => {
  ws = copyWorkspace();
  client = await LspClient.start({ workspace: ws });
});

afterAll(async () => {
  await client?.stop();
  if (ws) removeWorkspace(ws);
});

function bigFixture(bytes: number): string {
  const parts = ['template: ../support.prompt\nslots:\n  evidence:\n'];
  let size = parts[0].length;
  for (let i = 0; size < bytes; i++) {
    const item = `    - id: ev_${i}\n      source: kb/doc-${i}\n      text: Lorem ipsum dolor sit amet number ${i}, consectetur adipiscing elit, sed do eiusmod tempor.\n`;
    parts.push(item);
    size += item.length;
  }
  return parts.join('');
}

it('gives a 5 MB fixture a light analysis and keeps answering for the template', async () => {
  const template = await client.open(path.join(ws, 'support.prompt'));
  await client.session.nextDiagnostics(template, 0);
  const file = path.join(ws, 'fixtures', 'huge.fixture.yaml');
  writeFileSync(file, bigFixture(5 * 1024 * 1024));
  const huge = await client.open(file);
  // Asked right after the 5 MB didOpen: answered from the template's cached analysis.
  const hover = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri: template }, position: positionOf(client.text(template), '{{question}}', 3) });
  expect((hover?.contents as MarkupContent).value).toContain('**question**');
  const lenses = (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri: template } })) ?? [];
  expect(lenses.some((l) => l.command?.title.startsWith('question · '))).toBe(true);
  const pub = await client.session.nextDiagnostics(huge, 0);
  expect(pub.diagnostics).toHaveLength(1);
  expect(pub.diagnostics[0].code).toBe('fixture-invalid');
  expect(pub.diagnostics[0].message).toMatch(/over the 2,097,152-byte limit for full analysis/);
  // The fixture's lenses are empty (nothing was counted), not an error.
  expect((await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri: huge } })) ?? []).toEqual([]);
  await client.close(huge);
  // Closed, the fixture is still on disk and matches the config's globs: the template's next
  // analysis sees it (too large to assemble) without parsing 5 MB.
  const before = client.session.diagnosticsCount(template);
  const v = await client.replace(template, 'Follow the policy below.', 'Follow the policy below!');
  const again = await client.session.nextDiagnostics(template, before, (p) => p.version === v);
  expect(again.diagnostics.map((d) => d.code)).toContain('slot-undefined');
});

it('reports malformed templates and configs as diagnostics and keeps serving', async () => {
  const file = path.join(ws, 'broken.prompt');
  writeFileSync(file, '---\nmodel: [unclosed\ncontext: support.context.yaml\n---\n{{#each evidence}}\n{{role "system"}}{{{{\n{{/if}}\n');
  const uri = await client.open(file);
  const pub = await client.session.nextDiagnostics(uri, 0);
  expect(pub.diagnostics.length).toBeGreaterThan(0);
  expect(pub.diagnostics.some((d) => d.code === 'template-invalid')).toBe(true);
  const cfg = path.join(ws, 'support.context.yaml');
  const cfgUri = await client.open(cfg);
  await client.session.nextDiagnostics(cfgUri, client.session.diagnosticsCount(cfgUri), (p) => p.version === 1);
  const n = client.session.diagnosticsCount(cfgUri);
  const v = await client.edit(cfgUri, 0, client.text(cfgUri).length, 'window: [\nslots: 12\n\t- nope\n');
  const bad = await client.session.nextDiagnostics(cfgUri, n, (p) => p.version === v);
  expect(bad.diagnostics.some((d) => d.code === 'config-invalid')).toBe(true);
  const lenses = (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
  expect(Array.isArray(lenses)).toBe(true);
  expect(client.session.exited).toBeUndefined();
});
