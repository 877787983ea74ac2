/// <reference types="mocha" />
/**
 * Hovers, quick fixes, completion and the outline through VS Code's provider commands
 * (`vscode.executeHoverProvider`, `vscode.executeCodeActionProvider`,
 * `vscode.executeCompletionItemProvider`, `vscode.executeDocumentSymbolProvider`): what the
 * language server answers reaches the editor through the extension's client. Nothing is edited.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { hoverText, openFile, ourDiagnostics, positionOf, ruleOf, waitFor } from './util';

async function hoverAt(doc: vscode.TextDocument, pos: vscode.Position, expect: RegExp[]): Promise<string> {
  let text = '';
  return waitFor(
    `a hover at ${doc.uri.path}:${pos.line + 1}:${pos.character + 1} matching ${expect.map(String).join(', ')}`,
    async () => {
      const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, pos)) ?? [];
      text = hoverText(hovers);
      return expect.every((re) => re.test(text)) ? text : undefined;
    },
    60_000,
    500,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nhover seen: ${JSON.stringify(text.slice(0, 800))}`);
  });
}

suite('Context Lens: hovers, quick fixes, completion, outline', () => {
  test('hover on a template slot shows its budget, usage and kept and omitted items', async () => {
    const doc = await openFile('sdk-qa/sdk-qa.prompt');
    const text = await hoverAt(doc, positionOf(doc, '{{evidence}}', 4), [/\*\*evidence\*\*/, /Budget: .*3,000/, /tok/, /ev_0192/]);
    // The version-filtered 3.9 document is listed as omitted with its reason.
    assert.match(text, /ev_0077[^\n]*filtered:version/);
    assert.match(text, /o200k_base/);
  });

  test('hover on a config slot shows the budget arithmetic and its share of the input', async () => {
    const doc = await openFile('refund-support/refund.context.yaml');
    await hoverAt(doc, positionOf(doc, '  evidence:', 4), [/3,000/, /Share: /, /refund\.prompty/]);
  });

  test('hover on a fixture item says whether it was kept and why not', async () => {
    const doc = await openFile('sdk-qa/fixtures/post-retries.fixture.yaml');
    await hoverAt(doc, positionOf(doc, 'id: ev_0241', 5), [/\*\*Omitted\*\*/, /ev_0240/]);
  });

  test('a quick fix is offered for an unlabelled untrusted slot', async () => {
    const doc = await openFile('defects/leaky.prompt');
    const diag = await waitFor('the untrusted-unlabelled diagnostic', () => ourDiagnostics(doc.uri).find((d) => ruleOf(d) === 'untrusted-unlabelled'), 60_000);
    const actions = await waitFor(
      'quick fixes on {{complaint}}',
      async () => {
        const a = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, diag.range, vscode.CodeActionKind.QuickFix.value)) ?? [];
        return a.length > 0 ? a : undefined;
      },
      30_000,
      500,
    );
    const titles = actions.map((a) => a.title);
    assert.ok(titles.some((t) => t.includes("'complaint'")), `a fix names the slot: ${JSON.stringify(titles)}`);
    const wrap = actions.find((a) => a.title.includes("'complaint'"))!;
    assert.ok(wrap.edit, 'the fix carries a workspace edit');
    assert.ok(wrap.edit.entries().length > 0, 'the edit changes a file');
  });

  test('completion inside {{ }} offers the slots of the config', async () => {
    const doc = await openFile('sdk-qa/sdk-qa.prompt');
    const pos = positionOf(doc, '{{question}}', 2);
    const list = await waitFor(
      'slot completions',
      async () => {
        const l = await vscode.commands.executeCommand<vscode.CompletionList>('vscode.executeCompletionItemProvider', doc.uri, pos);
        const labels = (l?.items ?? []).map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
        return ['question', 'evidence', 'policy'].every((s) => labels.includes(s)) ? labels : undefined;
      },
      30_000,
      500,
    );
    assert.ok(list.includes('tool_result'));
  });

  test('the outline lists the messages by role with their slots', async () => {
    const doc = await openFile('sdk-qa/sdk-qa.prompt');
    const symbols = await waitFor(
      'document symbols',
      async () => {
        const s = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>('vscode.executeDocumentSymbolProvider', doc.uri);
        return s && s.length > 0 ? s : undefined;
      },
      30_000,
      500,
    );
    const names = (list: vscode.DocumentSymbol[]): string[] => list.flatMap((s) => [s.name, ...names(s.children ?? [])]);
    const all = names(symbols);
    for (const n of ['system', 'user', 'policy', 'evidence', 'question']) assert.ok(all.includes(n), `${n} in the outline: ${JSON.stringify(all)}`);
  });
});
