/**
 * Context Lens's extension entry (bundled to dist/extension.js): starts the language client,
 * registers the palette commands, the status bar item and the preview panel. Thin by design: it
 * forwards requests to the language server and shows the answers; no parsing, counting or
 * assembly happens on the extension host. `activate` does not wait for the server to start.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { AssembleFormat } from '../protocol/lsp';
import { AssembleRequest, FixturesRequest, ModelsRequest, SelectFixtureRequest, SelectModelRequest, StatusNotification, WhatLoadsRequest } from '../protocol/lsp';
import { createClient } from './client';
import { PreviewController, isContextLensDocument } from './previewController';
import { registerPreviewSerializer } from './previewPanel';
import { StatusBar } from './statusBar';

let client: LanguageClient | undefined;

/** The document a command acts on: its argument (uri string or Uri), else the active editor's. */
function targetUri(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg instanceof vscode.Uri) return arg.toString();
  const doc = vscode.window.activeTextEditor?.document;
  return doc && isContextLensDocument(doc) ? doc.uri.toString() : undefined;
}

function needDocument(): void {
  void vscode.window.showInformationMessage('Context Lens: open a template (.prompt, .prompty, .baml or a prompt file) or its fixture or *.context.yaml first.');
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Context Lens', { log: true });
  const status = new StatusBar();
  // The client is created right after activation returns (see createClient); commands that run
  // before that wait for it.
  let resolveClient!: (c: LanguageClient) => void;
  const ready = new Promise<LanguageClient>((resolve) => (resolveClient = resolve));
  // A proxy with the client's request API that waits for the client to exist.
  const c = {
    sendRequest: (async (type: unknown, params: unknown) => (await ready).sendRequest(type as never, params as never)) as LanguageClient['sendRequest'],
    restart: async () => (await ready).restart(),
  };

  async function exportTrace(arg?: unknown): Promise<void> {
    const uri = targetUri(arg);
    if (!uri) return needDocument();
    const r = await c.sendRequest(AssembleRequest.type, { uri, format: 'json' });
    if (!r) {
      void vscode.window.showInformationMessage('Context Lens: nothing to trace — the template has no context config or fixture.');
      return;
    }
    const doc = vscode.Uri.parse(uri);
    const folder = vscode.workspace.getWorkspaceFolder(doc)?.uri;
    // `contextLens.export.directory` is ignored in untrusted workspaces (restrictedConfigurations).
    const dir = vscode.workspace.getConfiguration('contextLens', doc).get<string>('export.directory', '');
    const base = path.posix.basename(doc.path).replace(/\.(prompt|prompty|context\.ya?ml|fixture\.(ya?ml|json))$/i, '');
    const parent = folder && dir ? vscode.Uri.joinPath(folder, dir) : vscode.Uri.joinPath(doc, '..');
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(parent, `${base}.trace.json`),
      filters: { 'Trace JSON': ['json'] },
      saveLabel: 'Export Trace',
    });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(JSON.stringify(r.trace, null, 2) + '\n'));
    void vscode.window.showInformationMessage(`Context Lens: trace written to ${vscode.workspace.asRelativePath(target)}.`);
  }

  const preview = new PreviewController(context.extensionUri, () => c, exportTrace);

  async function selectFixture(arg?: unknown): Promise<void> {
    const uri = targetUri(arg);
    if (!uri) return needDocument();
    const r = await c.sendRequest(FixturesRequest.type, { uri });
    if (r.fixtures.length === 0) {
      void vscode.window.showInformationMessage("Context Lens: no fixture matches this template. Add a *.fixture.yaml with 'template:' or list it in the config's 'fixtures' globs.");
      return;
    }
    type Item = vscode.QuickPickItem & { fixture: string | null };
    const items: Item[] = [
      { label: '$(sync) Automatic', description: 'first matching fixture', fixture: null, picked: !r.selected },
      ...r.fixtures.map((f) => ({
        label: f.name,
        description: vscode.workspace.asRelativePath(vscode.Uri.parse(f.uri)),
        detail: f.path === r.active ? 'in use' : undefined,
        fixture: f.path,
      })),
    ];
    const pick = await vscode.window.showQuickPick(items, { title: 'Context Lens: Select Fixture', placeHolder: 'Fixture whose values fill the slots' });
    if (!pick) return;
    await c.sendRequest(SelectFixtureRequest.type, { uri, fixture: pick.fixture });
  }

  async function selectModel(arg?: unknown): Promise<void> {
    const uri = targetUri(arg);
    const r = await c.sendRequest(ModelsRequest.type, { uri });
    type Item = vscode.QuickPickItem & { model: string | null };
    const NUM = new Intl.NumberFormat('en-US');
    const items: Item[] = [
      { label: '$(settings) From the config', description: 'each config’s own model (or contextLens.defaultModel)', model: null },
      ...r.models.map((m) => ({
        label: m.name,
        description: `${NUM.format(m.window)} tokens · ${m.tokenizer}${m.exact ? '' : ' (estimate)'}`,
        detail: m.name === r.active ? 'in use' : undefined,
        model: m.name,
      })),
    ];
    const quick = vscode.window.createQuickPick<Item>();
    quick.title = 'Context Lens: Select Model / Tokenizer';
    quick.placeholder = 'Model whose window and tokenizer count the request (type any registry name)';
    quick.items = items;
    const picked = await new Promise<string | null | undefined>((resolve) => {
      quick.onDidAccept(() => {
        const sel = quick.selectedItems[0];
        resolve(sel ? sel.model : quick.value.trim() || undefined);
        quick.hide();
      });
      quick.onDidHide(() => resolve(undefined));
      quick.show();
    });
    quick.dispose();
    if (picked === undefined) return;
    await c.sendRequest(SelectModelRequest.type, { model: picked });
  }

  async function assemble(arg?: unknown): Promise<void> {
    const uri = targetUri(arg);
    if (!uri) return needDocument();
    const formats: Array<vscode.QuickPickItem & { format: AssembleFormat }> = [
      { label: 'OpenAI', description: 'Chat Completions messages array', format: 'openai' },
      { label: 'Anthropic', description: 'Messages API body, system separated', format: 'anthropic' },
      { label: 'Text', description: 'readable, with slot boundaries', format: 'text' },
      { label: 'JSON', description: 'messages and the full trace', format: 'json' },
    ];
    const pick = await vscode.window.showQuickPick(formats, { title: 'Context Lens: Assemble Request', placeHolder: 'Format of the assembled request' });
    if (!pick) return;
    const r = await c.sendRequest(AssembleRequest.type, { uri, format: pick.format });
    if (!r) {
      void vscode.window.showInformationMessage('Context Lens: nothing to assemble — the template has no context config or fixture.');
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ language: r.language, content: r.content });
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false });
    if (!r.ok) void vscode.window.showWarningMessage(`Context Lens: assembly failed — ${r.error ?? 'required slots overflow the input budget'}.`);
  }

  // "What loads for this file": the server's Markdown, shown as a read-only document in the Markdown preview.
  const WHAT_LOADS_SCHEME = 'context-lens-what-loads';
  const whatLoadsPages = new Map<string, string>();
  const whatLoadsChanged = new vscode.EventEmitter<vscode.Uri>();
  const whatLoadsProvider: vscode.TextDocumentContentProvider = { onDidChange: whatLoadsChanged.event, provideTextDocumentContent: (u) => whatLoadsPages.get(u.toString()) ?? '' };

  async function whatLoads(arg?: unknown): Promise<void> {
    // Any file of the workspace: the question is about source files as much as about instruction files.
    const uri = typeof arg === 'string' ? arg : arg instanceof vscode.Uri ? arg.toString() : vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri || !uri.startsWith('file:')) {
      void vscode.window.showInformationMessage('Context Lens: open a file of the workspace to see what each coding agent loads for it.');
      return;
    }
    const r = await c.sendRequest(WhatLoadsRequest.type, { uri });
    if (!r) return;
    const page = vscode.Uri.from({ scheme: WHAT_LOADS_SCHEME, path: `/What loads for ${path.posix.basename(vscode.Uri.parse(uri).path)}.md` });
    whatLoadsPages.set(page.toString(), r.markdown);
    whatLoadsChanged.fire(page);
    await vscode.commands.executeCommand('markdown.showPreviewToSide', page);
  }

  async function showPreview(arg?: unknown, opts?: unknown): Promise<void> {
    const uri = targetUri(arg);
    if (!uri) return needDocument();
    // From a fixture's lens: preview the template with that fixture, and keep it selected.
    const fixture = typeof opts === 'object' && opts !== null && typeof (opts as { fixture?: unknown }).fixture === 'string' ? (opts as { fixture: string }).fixture : undefined;
    if (fixture) await c.sendRequest(SelectFixtureRequest.type, { uri, fixture });
    await preview.show(uri);
  }

  context.subscriptions.push(
    output,
    status,
    preview,
    vscode.commands.registerCommand('contextLens.assemble', assemble),
    vscode.commands.registerCommand('contextLens.preview', showPreview),
    vscode.commands.registerCommand('contextLens.preview.compare', async (arg?: unknown) => {
      const uri = targetUri(arg) ?? preview.shownTemplate;
      if (!uri) return needDocument();
      await preview.pickCompare(uri);
    }),
    vscode.commands.registerCommand('contextLens.selectFixture', selectFixture),
    vscode.commands.registerCommand('contextLens.selectModel', selectModel),
    vscode.commands.registerCommand('contextLens.exportTrace', exportTrace),
    vscode.commands.registerCommand('contextLens.whatLoads', whatLoads),
    vscode.workspace.registerTextDocumentContentProvider(WHAT_LOADS_SCHEME, whatLoadsProvider),
    whatLoadsChanged,
    vscode.commands.registerCommand('contextLens.restartServer', async () => {
      status.clear();
      await c.restart();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => status.render()),
    vscode.workspace.onDidCloseTextDocument((d) => status.forget(d.uri.toString())),
    registerPreviewSerializer(context.extensionUri, (panel) => preview.adopt(panel)),
  );
  setImmediate(() => {
    const lc = createClient(context, output);
    client = lc;
    context.subscriptions.push(
      lc.onNotification(StatusNotification.type, (s) => {
        status.update(s);
        preview.analysed(s.uri);
      }),
    );
    resolveClient(lc);
    // Not awaited: the server process starts in the background.
    lc.start().catch((e: unknown) => output.appendLine(`Context Lens server failed to start: ${e instanceof Error ? e.message : String(e)}`));
  });
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.stop();
}
