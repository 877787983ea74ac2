/**
 * The language server installs the workspace's model file (.context-lens/models.yaml) at start:
 * a model it defines is known to the diagnostics, and a retired built-in model gets model-retired.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ModelsRequest } from '../../src/protocol/lsp';
import { LspClient, ensureBuilt } from './harness';

let ws: string | undefined;
let client: LspClient | undefined;

afterAll(async () => {
  await client?.stop();
  if (ws) rmSync(ws, { recursive: true, force: true });
});

it('knows the models of the workspace model file and reports retired models', async () => {
  ensureBuilt();
  ws = mkdtempSync(path.join(tmpdir(), 'ctxlens-lsp-models-'));
  mkdirSync(path.join(ws, '.git'));
  mkdirSync(path.join(ws, '.context-lens'));
  writeFileSync(path.join(ws, '.context-lens', 'models.yaml'), 'models:\n  acme-7b: { window: 32768, max_output: 4096, tokenizer: o200k_base }\n');
  writeFileSync(path.join(ws, 'known.prompt'), '---\nmodel: acme-7b\n---\n{{role "user"}}\nHello {{name}}\n');
  writeFileSync(path.join(ws, 'unknown.prompt'), '---\nmodel: acme-8b\n---\n{{role "user"}}\nHello {{name}}\n');
  writeFileSync(path.join(ws, 'old.prompt'), '---\nmodel: gpt-4\n---\n{{role "user"}}\nHello {{name}}\n');
  client = await LspClient.start({ workspace: ws });
  const codes = async (file: string) => {
    const uri = await client!.open(path.join(ws!, file));
    return (await client!.session.nextDiagnostics(uri, 0)).diagnostics.map((d) => d.code);
  };
  expect(await codes('unknown.prompt')).toContain('unknown-model');
  expect(await codes('known.prompt')).not.toContain('unknown-model');
  expect(await codes('old.prompt')).toContain('model-retired');
  // The picker offers the model file's models and the current ones, not the retired ones, except
  // the one a document names (it is the active model).
  const picker = await client.connection.sendRequest(ModelsRequest.type, {});
  const names = picker.models.map((m) => m.name);
  expect(names).toContain('acme-7b');
  expect(names).toContain('gpt-6.2-sol');
  expect(names).not.toContain('gpt-3.5-turbo');
});
