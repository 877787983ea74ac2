/**
 * A server that dies mid-session comes back: the client wrapper (test/lsp/harness.ts) notices the
 * process exit, starts a new server and reopens its documents, as vscode-languageclient does after
 * a crash, and the diagnostics and lenses return.
 */
import * as path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CodeLensRequest } from 'vscode-languageserver-protocol/node';
import { LspClient, copyWorkspace, removeWorkspace } from './harness';

let ws: string | undefined;
let client: LspClient | undefined;

afterAll(async () => {
  await client?.stop();
  if (ws) removeWorkspace(ws);
});

it('restarts a killed server and publishes the diagnostics again', async () => {
  ws = copyWorkspace();
  client = await LspClient.start({ workspace: ws });
  const uri = await client.open(path.join(ws, 'support.prompt'));
  const first = await client.session.nextDiagnostics(uri, 0);
  const codes = first.diagnostics.map((d) => d.code).sort();
  expect(codes.length).toBeGreaterThan(0);
  // An unsaved edit the new server must receive too: the template loses its undefined slot.
  await client.replace(uri, '{{extra}}\n', '');
  await client.session.nextDiagnostics(uri, 1, (p) => p.version === 2);

  const dead = client.session;
  dead.kill();
  await client.restarted();
  expect(client.restarts).toBe(1);
  expect(dead.exited?.signal).toBe('SIGKILL');
  expect(client.session).not.toBe(dead);

  const again = await client.session.nextDiagnostics(uri, 0);
  expect(again.version).toBe(2);
  expect(again.diagnostics.map((d) => d.code).sort()).toEqual(codes.filter((c) => c !== 'slot-undefined'));
  const lenses = (await client.connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [];
  expect(lenses.some((l) => l.command?.title.startsWith('input '))).toBe(true);
});
