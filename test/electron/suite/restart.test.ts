/// <reference types="mocha" />
/**
 * `Context Lens: Restart Server` through `vscode.commands.executeCommand`: the language server comes
 * back and answers again (last file of the suite: it restarts the server the others use).
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { codeLenses, openFile, ourDiagnostics, ruleOf, waitFor } from './util';

suite('Context Lens: restart', () => {
  test('contextLens.restartServer restarts the server, which serves lenses and diagnostics again', async () => {
    const doc = await openFile('defects/leaky.prompt');
    await waitFor('diagnostics before the restart', () => ourDiagnostics(doc.uri).some((d) => ruleOf(d) === 'slot-undefined'), 60_000);
    await vscode.commands.executeCommand('contextLens.restartServer');
    const lenses = await waitFor(
      'code lenses after the restart',
      async () => {
        const l = await codeLenses(doc.uri);
        return l.some((x) => /tok/.test(x.command!.title)) ? l : undefined;
      },
      60_000,
      500,
    );
    assert.ok(lenses.length > 0);
    await waitFor('diagnostics after the restart', () => ourDiagnostics(doc.uri).some((d) => ruleOf(d) === 'slot-undefined'), 60_000);
  });
});
