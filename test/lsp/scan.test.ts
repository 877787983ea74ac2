/**
 * The workspace scan: opening a folder publishes diagnostics for templates, configs and fixtures
 * that no editor has open (as `ctxlens check` would report them), and an opened file's own
 * analysis takes over without duplicates.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from 'vscode-languageserver-protocol/node';
import { LspClient, copyWorkspace, removeWorkspace, uriOf } from './harness';

let ws: string;
let client: LspClient;
const codes = (ds: Diagnostic[]): string[] => ds.map((d) => String(d.code)).sort();

beforeAll(async () => {
  ws = copyWorkspace();
  client = await LspClient.start({ workspace: ws });
});

afterAll(async () => {
  await client?.stop();
  if (ws) removeWorkspace(ws);
});

describe('workspace scan', () => {
  it('publishes the findings of a template nobody opened, then hands over to its own analysis without duplicates', async () => {
    const template = path.join(ws, 'support.prompt');
    const uri = uriOf(template);
    const scanned = await client.session.nextDiagnostics(uri, 0, (p) => p.diagnostics.length > 0);
    expect(codes(scanned.diagnostics)).toContain('slot-undefined');
    // The config's template-derived findings arrive without opening anything either.
    const cfg = await client.session.nextDiagnostics(uriOf(path.join(ws, 'support.context.yaml')), 0, (p) => codes(p.diagnostics).includes('trust-missing'));
    expect(codes(cfg.diagnostics)).toContain('trust-missing');

    const before = client.session.diagnosticsCount(uri);
    await client.open(template);
    const own = await client.session.nextDiagnostics(uri, before, (p) => p.version === 1 && p.diagnostics.length > 0);
    expect(codes(own.diagnostics)).toEqual(codes(scanned.diagnostics));
  });
});
