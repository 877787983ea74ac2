/// <reference types="mocha" />
/**
 * The installed extension: it activates on a template, gives the three file kinds their languages,
 * and registers every command its manifest contributes.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { EXTENSION_ID, extension, openFile, waitFor } from './util';

interface ContributedCommand {
  command: string;
  title: string;
}

suite('Context Lens: activation and contributions', () => {
  test('the extension is installed, and opening a .prompt template activates it', async () => {
    const ext = extension();
    assert.equal(ext.id.toLowerCase(), EXTENSION_ID);
    const doc = await openFile('sdk-qa/sdk-qa.prompt');
    assert.equal(doc.languageId, 'dotprompt');
    await waitFor('the extension to activate', () => ext.isActive, 30_000);
    // activate() is idempotent once running: awaiting it proves activation did not throw.
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  test('.prompty, *.context.yaml and *.fixture.yaml files get their languages', async () => {
    assert.equal((await openFile('refund-support/refund.prompty')).languageId, 'prompty');
    // Configs stay YAML so a YAML extension can apply the contributed JSON Schema.
    assert.equal((await openFile('sdk-qa/sdk-qa.context.yaml')).languageId, 'yaml');
    assert.equal((await openFile('defects/fixtures/leaky.fixture.yaml')).languageId, 'contextlens-fixture');
  });

  test('every contextLens.* command of the manifest is registered', async () => {
    const contributed = ((extension().packageJSON as { contributes?: { commands?: ContributedCommand[] } }).contributes?.commands ?? []).map(
      (c) => c.command,
    );
    assert.ok(contributed.length >= 6, `the manifest contributes the commands (got ${contributed.join(', ')})`);
    for (const id of ['contextLens.assemble', 'contextLens.preview', 'contextLens.selectFixture', 'contextLens.selectModel', 'contextLens.exportTrace', 'contextLens.restartServer']) {
      assert.ok(contributed.includes(id), `package.json contributes ${id}`);
    }
    const registered = await waitFor(
      'the commands to be registered',
      async () => {
        const all = new Set(await vscode.commands.getCommands(true));
        return contributed.every((c) => all.has(c)) ? all : undefined;
      },
      30_000,
    );
    for (const c of contributed) assert.ok(registered.has(c), `${c} is registered`);
  });
});
