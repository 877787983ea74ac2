/**
 * Drives the preview panel (src/extension/previewPanel.ts) from the language server: opens it
 * beside the editor, follows the active template (or the fixture/config bound to one), asks the
 * server for a complete snapshot whenever the analysis behind it changes (the server's status
 * notifications), and carries out what the user does in the panel. The panel is a view; this
 * class holds no model of its own beyond which document it follows.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { AssembleRequest, PreviewRequest, SelectFixtureRequest, SelectModelRequest } from '../protocol/lsp';
import type { PreviewAction } from '../protocol/preview';
import { PreviewPanel } from './previewPanel';

/** Languages and names of the documents the preview can follow. */
export function isContextLensDocument(doc: vscode.TextDocument): boolean {
  if (doc.uri.scheme !== 'file') return false;
  if (doc.languageId === 'dotprompt' || doc.languageId === 'prompty' || doc.languageId === 'contextlens-fixture') return true;
  return /\.(context\.ya?ml|fixture\.(ya?ml|json)|prompt|prompty)$/i.test(doc.uri.path);
}

export class PreviewController implements vscode.Disposable {
  private panel: PreviewPanel | undefined;
  /** The document the panel follows (a template, or a fixture/config that leads to one). */
  private source: string | undefined;
  private inFlight = false;
  private again = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: () => Pick<LanguageClient, 'sendRequest'>,
    private readonly exportTrace: (uri: string) => Promise<void>,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (!this.panel || !editor || !isContextLensDocument(editor.document)) return;
        const uri = editor.document.uri.toString();
        if (uri === this.source) return;
        this.source = uri;
        this.panel.setTemplate(uri);
        void this.refresh();
      }),
    );
  }

  get open(): boolean {
    return this.panel !== undefined;
  }

  /** Opens (or reveals) the panel for a document. */
  async show(uri: string): Promise<void> {
    this.source = uri;
    if (!this.panel) this.attach(PreviewPanel.create(this.extensionUri, uri));
    else {
      this.panel.setTemplate(uri);
      this.panel.reveal();
    }
    await this.refresh();
  }

  /** Adopts a panel VS Code restored after a reload. */
  adopt(panel: PreviewPanel): void {
    this.panel?.dispose();
    this.source = panel.templateUri;
    this.attach(panel);
    void this.refresh();
  }

  /** The server re-analysed `uri`: refresh when the panel shows it (or the template it leads to). */
  analysed(uri: string): void {
    if (!this.panel) return;
    if (uri === this.source || uri === this.panel.currentSnapshot?.templateUri) void this.refresh();
  }

  private attach(panel: PreviewPanel): void {
    this.panel = panel;
    panel.onDidReceiveAction(({ action }) => void this.act(action));
    panel.onDidDispose(() => {
      if (this.panel === panel) {
        this.panel = undefined;
        this.source = undefined;
      }
    });
  }

  /** Asks the server for a snapshot; requests never overlap, a change during one triggers one more. */
  async refresh(): Promise<void> {
    if (!this.panel || !this.source) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    try {
      do {
        this.again = false;
        const panel: PreviewPanel | undefined = this.panel;
        const source: string | undefined = this.source;
        if (!panel || !source) break;
        try {
          const reply = await this.client().sendRequest(PreviewRequest.type, { uri: source });
          if (this.panel !== panel) break;
          if ('snapshot' in reply) panel.update(reply.snapshot);
          else panel.showEmpty(reply.empty);
        } catch (e) {
          if (this.panel === panel) panel.showError(`The Context Lens language server did not answer: ${e instanceof Error ? e.message : String(e)}`);
        }
      } while (this.again);
    } finally {
      this.inFlight = false;
    }
  }

  private async act(action: PreviewAction): Promise<void> {
    const templateUri = this.panel?.currentSnapshot?.templateUri ?? this.source;
    if (!templateUri) return;
    const client = this.client();
    switch (action.type) {
      case 'refresh':
        await this.refresh();
        return;
      case 'selectFixture':
        await client.sendRequest(SelectFixtureRequest.type, { uri: templateUri, fixture: action.path });
        await this.refresh();
        return;
      case 'selectModel':
        await client.sendRequest(SelectModelRequest.type, { model: action.model });
        await this.refresh();
        return;
      case 'copyRequest': {
        const r = await client.sendRequest(AssembleRequest.type, { uri: templateUri, format: action.format });
        if (!r?.ok) {
          void vscode.window.showWarningMessage(`Nothing to copy: ${r?.error ?? 'the request could not be assembled'}.`);
          return;
        }
        await vscode.env.clipboard.writeText(r.content);
        void vscode.window.showInformationMessage(`Copied the request as ${action.format === 'openai' ? 'OpenAI Chat Completions' : 'Anthropic Messages'} JSON.`);
        return;
      }
      case 'exportTrace':
        await this.exportTrace(templateUri);
        return;
      case 'revealSource': {
        const uri = vscode.Uri.file(action.path);
        const pos = new vscode.Position(action.line, 0);
        // Reveal in an editor column, not on top of the panel.
        const column = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString())?.viewColumn ?? vscode.ViewColumn.One;
        await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), viewColumn: column, preserveFocus: false });
        return;
      }
    }
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
