/**
 * Edit storms: hundreds of edits to an open config (or template) sent back to back, with no
 * debounce. The server must keep answering hovers meanwhile, must not analyse every intermediate
 * version (the scheduler waits for the burst to pause), and once it drains its diagnostics and
 * lenses must be exactly those of a fresh server opened on the final texts.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CodeLensRequest, DocumentSymbolRequest, HoverRequest } from 'vscode-languageserver-protocol/node';
import type { CodeLens, Diagnostic } from 'vscode-languageserver-protocol/node';
import { LspClient, copyWorkspace, positionOf, removeWorkspace } from './harness';

const EDITS = 400;
/** Two servers and 400 edits per case: a bound for loaded machines, not a timing. */
const CASE_TIMEOUT_MS = 120_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function start(ws: string): Promise<LspClient> {
  const client = await LspClient.start({ workspace: ws, initializationOptions: { debounceMs: 0 } });
  cleanups.push(() => client.stop());
  return client;
}

/** Waits until the analysis of the document's current version is published (document symbols wait for it). */
function fresh(client: LspClient, uri: string): Promise<unknown> {
  return client.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } });
}

const key = (d: Diagnostic): string => `${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character} ${String(d.code)} ${d.message}`;
const diagnostics = (client: LspClient, uri: string): string[] => (client.session.latestDiagnostics(uri)?.diagnostics ?? []).map(key).sort();

async function lenses(client: LspClient, uri: string): Promise<string[]> {
  const list = ((await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? []) as CodeLens[];
  return list.map((l) => `${l.range.start.line}:${l.range.start.character} ${l.command?.title ?? ''}`).sort();
}

/** Diagnostics and lenses of the template and its config, after both are analysed at their current versions. */
async function picture(client: LspClient, template: string, config: string): Promise<Record<string, string[]>> {
  await Promise.all([fresh(client, template), fresh(client, config)]);
  return {
    templateDiagnostics: diagnostics(client, template),
    configDiagnostics: diagnostics(client, config),
    templateLenses: await lenses(client, template),
    configLenses: await lenses(client, config),
  };
}

describe('edit storms', () => {
  for (const kind of ['config', 'template'] as const) {
    it(`${EDITS} edits to the ${kind}: hovers answered meanwhile, few analyses, and the result of a fresh analysis`, async () => {
      const ws = copyWorkspace();
      cleanups.push(async () => removeWorkspace(ws));
      const templatePath = path.join(ws, 'support.prompt');
      const configPath = path.join(ws, 'support.context.yaml');
      const client = await start(ws);
      const t = await client.open(templatePath);
      const c = await client.open(configPath);
      await Promise.all([fresh(client, t), fresh(client, c)]);
      const analysesBefore = client.session.statuses.get(kind === 'config' ? c : t)?.length ?? 0;
      const position = positionOf(client.text(t), '{{question}}', 3);

      const hovers: Array<Promise<unknown>> = [];
      let margin = 800;
      const anchor = client.text(t).indexOf('Follow the policy') + 6;
      for (let i = 0; i < EDITS; i++) {
        if (kind === 'config') {
          await client.replace(c, `margin: ${margin}`, `margin: ${margin + 1}`);
          margin++;
        } else {
          // Types "the " before "policy" one character at a time, then a last letter.
          await client.edit(t, anchor + i, anchor + i, 'abcdefghij'.charAt(i % 10));
        }
        if (i % 50 === 0) hovers.push(client.connection.sendRequest(HoverRequest.type, { textDocument: { uri: t }, position }));
      }
      const stormed = await picture(client, t, c);
      // Every hover sent during the storm was answered, with content.
      for (const h of await Promise.all(hovers)) expect(h).not.toBeNull();
      // Not one analysis per edit: the bursts were analysed at their ends.
      const analyses = (client.session.statuses.get(kind === 'config' ? c : t)?.length ?? 0) - analysesBefore;
      expect(analyses).toBeGreaterThan(0);
      expect(analyses).toBeLessThan(EDITS / 10);
      if (kind === 'config') expect(stormed.templateLenses.join('\n')).toContain(`margin ${(800 + EDITS).toLocaleString('en-US')}`);

      // A fresh server on the final texts (saved to disk) says exactly the same.
      writeFileSync(templatePath, client.text(t));
      writeFileSync(configPath, client.text(c));
      const other = await start(ws);
      const t2 = await other.open(templatePath);
      const c2 = await other.open(configPath);
      expect(t2).toBe(t);
      expect(c2).toBe(c);
      expect(await picture(other, t2, c2)).toEqual(stormed);
    }, CASE_TIMEOUT_MS);
  }
});
