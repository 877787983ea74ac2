/// <reference types="mocha" />
/**
 * Code lenses through `vscode.executeCodeLensProvider`: token counts per slot against their budgets
 * and the whole request against the window, on a dotprompt and a Prompty template and on a config.
 * Every lens runs a command the extension registered.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { codeLenses, fileUri, openFile, waitFor } from './util';

async function lensTitles(rel: string, expected: RegExp[]): Promise<{ lenses: vscode.CodeLens[]; titles: string[] }> {
  const doc = await openFile(rel);
  let titles: string[] = [];
  const lenses = await waitFor(
    `code lenses of ${rel} matching ${expected.map(String).join(', ')}`,
    async () => {
      const l = await codeLenses(doc.uri);
      titles = l.map((x) => x.command!.title);
      return expected.every((re) => titles.some((t) => re.test(t))) ? l : undefined;
    },
    60_000,
    500,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nlenses seen: ${JSON.stringify(titles)}`);
  });
  return { lenses, titles };
}

suite('Context Lens: code lenses', () => {
  test('sdk-qa.prompt: the request against its 16,000-token window and per-slot token lenses', async () => {
    const { lenses, titles } = await lensTitles('sdk-qa/sdk-qa.prompt', [
      /16,000/,
      /^evidence · [\d,]+ \/ 3,000 tok · \d+ of \d+ items · untrusted/,
      /^question · [\d,]+ \/ 300 tok/,
      /^policy · [\d,]+ \/ 900 tok/,
    ]);
    // The request lens sits on the first line, above the front matter.
    const top = lenses.filter((l) => l.range.start.line === 0).map((l) => l.command!.title);
    assert.ok(top.some((t) => /16,000/.test(t) && /tok/.test(t)), `a request lens on line 1: ${JSON.stringify(top)}`);
    // A slot lens sits on the line of the slot's first use.
    const doc = await vscode.workspace.openTextDocument(fileUri('sdk-qa/sdk-qa.prompt'));
    const evidence = lenses.find((l) => l.command!.title.startsWith('evidence · '))!;
    assert.match(doc.lineAt(evidence.range.start.line).text, /\{\{evidence\}\}/);
    const n = /^evidence · ([\d,]+) \/ 3,000/.exec(titles.find((t) => t.startsWith('evidence · '))!)!;
    assert.ok(Number(n[1]!.replace(/,/g, '')) > 0, 'the evidence slot holds tokens from the default fixture');
  });

  test('every lens runs a registered contextLens command', async () => {
    const { lenses } = await lensTitles('sdk-qa/sdk-qa.prompt', [/16,000/]);
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const l of lenses) {
      assert.ok(l.command!.command.startsWith('contextLens.'), `lens "${l.command!.title}" runs ${l.command!.command}`);
      assert.ok(registered.has(l.command!.command), `${l.command!.command} is registered`);
    }
  });

  test('refund.prompty (Prompty) gets the same lenses against seed 000\'s 8,000-token window', async () => {
    await lensTitles('refund-support/refund.prompty', [/8,000/, /^history · [\d,]+ \/ 1,200 tok/]);
  });

  test('a *.context.yaml shows the budget equation and each slot\'s budget and share', async () => {
    const { titles } = await lensTitles('refund-support/refund.context.yaml', [
      /^6,000 input \+ 1,200 output \+ 800 margin = 8,000 \/ 8,000 ✓/,
      /^3,000 tok · \d+(\.\d+)?% of input/,
    ]);
    assert.ok(titles.length >= 5, `one lens per slot plus the equation: ${JSON.stringify(titles)}`);
  });
});
