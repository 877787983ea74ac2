/**
 * Drives the preview panel (src/extension/previewPanel.ts) from the language server: opens it
 * beside the editor, follows the active template (or the fixture/config bound to one), asks the
 * server for a complete snapshot whenever the analysis behind it changes (the server's status
 * notifications), and carries out what the user does in the panel. The panel is a view; this
 * class holds no model of its own beyond which document it follows.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { AssembleRequest, BudgetEditRequest, FixturesRequest, ModelsRequest, PreviewRequest, SelectFixtureRequest, SelectModelRequest } from '../protocol/lsp';
import type { PreviewVariant } from '../protocol/lsp';
import type { CompareTarget, PreviewAction } from '../protocol/preview';
import { TEMPLATE_SELECTOR, userPromptSelector } from './client';
import { PreviewPanel } from './previewPanel';

/** Languages and names of the documents the preview can follow. */
export function isContextLensDocument(doc: vscode.TextDocument): boolean {
  if (doc.uri.scheme !== 'file') return false;
  // Every format's templates (BAML and plain prompt files too) by the client's own selector; the
  // agents' instruction files are not requests, so the panel keeps its template when one is focused.
  return vscode.languages.match([...TEMPLATE_SELECTOR, ...userPromptSelector()], doc) > 0 || /\.(prompt|prompty)$/i.test(doc.uri.path);
}

export class PreviewController implements vscode.Disposable {
  private panel: PreviewPanel | undefined;
  /** The document the panel follows (a template, or a fixture/config that leads to one). */
  private source: string | undefined;
  private inFlight = false;
  private again = false;
  /**
   * What-if budgets and the comparison of the panel, for one template (by uri). Sent with every
   * preview request; dropped once the panel shows another template (the server ignores it then).
   */
  private variant: { templateUri: string; budgets: Record<string, number>; compare?: CompareTarget } | undefined;
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

  /** The template uri the panel shows, when it is open. */
  get shownTemplate(): string | undefined {
    return this.panel?.currentSnapshot?.templateUri ?? this.source;
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
        this.variant = undefined;
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
          const variant = this.requestVariant();
          const reply = await this.client().sendRequest(PreviewRequest.type, variant ? { uri: source, variant } : { uri: source });
          if (this.panel !== panel) break;
          if ('snapshot' in reply) {
            // The panel moved on to another template: its what-if budgets and comparison do not apply there.
            if (this.variant && this.variant.templateUri !== reply.snapshot.templateUri) this.variant = undefined;
            panel.update(reply.snapshot);
          } else panel.showEmpty(reply.empty);
        } catch (e) {
          if (this.panel === panel) panel.showError(`The Context Lens language server did not answer: ${e instanceof Error ? e.message : String(e)}`);
        }
      } while (this.again);
    } finally {
      this.inFlight = false;
    }
  }

  /** The variant to send, when it has anything in it. */
  private requestVariant(): PreviewVariant | undefined {
    const v = this.variant;
    if (!v || (Object.keys(v.budgets).length === 0 && !v.compare)) return undefined;
    const out: PreviewVariant = { templateUri: v.templateUri };
    if (Object.keys(v.budgets).length) out.budgets = { ...v.budgets };
    if (v.compare) out.compare = v.compare;
    return out;
  }

  /** The variant of the template the panel shows (a fresh one when it showed another). */
  private variantFor(templateUri: string): NonNullable<PreviewController['variant']> {
    if (!this.variant || this.variant.templateUri !== templateUri) this.variant = { templateUri, budgets: {} };
    return this.variant;
  }

  /** What the panel compares with now, if anything. */
  get compareTarget(): CompareTarget | undefined {
    return this.variant?.compare;
  }

  /** Sets (or with undefined clears) what the panel compares the request with, and refreshes. */
  async setCompare(target: CompareTarget | undefined): Promise<void> {
    const templateUri = this.panel?.currentSnapshot?.templateUri;
    if (!templateUri) return;
    const v = this.variantFor(templateUri);
    if (target) v.compare = target;
    else delete v.compare;
    await this.refresh();
  }

  /**
   * `Context Lens: Compare Preview With…`: opens the preview for the document if needed, then
   * offers the template's other fixtures, the models, and (with what-if budgets) the budgets as
   * written, as what the panel compares its request with.
   */
  async pickCompare(uri: string): Promise<void> {
    if (!this.panel) await this.show(uri);
    const snapshot = this.panel?.currentSnapshot;
    if (!snapshot) {
      void vscode.window.showInformationMessage('Context Lens: the preview has no request to compare yet.');
      return;
    }
    const client = this.client();
    const [fixtures, models] = await Promise.all([client.sendRequest(FixturesRequest.type, { uri: snapshot.templateUri }), client.sendRequest(ModelsRequest.type, { uri: snapshot.templateUri })]);
    type Item = vscode.QuickPickItem & { target?: CompareTarget | null };
    const current = this.variant?.templateUri === snapshot.templateUri ? this.variant.compare : undefined;
    const items: Item[] = [];
    if (current) items.push({ label: '$(close) Stop comparing', target: null });
    items.push({ label: 'Fixtures', kind: vscode.QuickPickItemKind.Separator });
    for (const f of fixtures.fixtures) {
      if (f.path === snapshot.selectedFixture) continue;
      items.push({ label: f.name, description: `fixture · ${vscode.workspace.asRelativePath(vscode.Uri.parse(f.uri))}`, target: { kind: 'fixture', path: f.path } });
    }
    items.push({ label: 'Models', kind: vscode.QuickPickItemKind.Separator });
    for (const m of models.models) {
      if (m.name === snapshot.selectedModel) continue;
      items.push({ label: m.name, description: `model · ${m.window.toLocaleString('en-US')} tokens · ${m.tokenizer}`, target: { kind: 'model', model: m.name } });
    }
    if (snapshot.whatIf) {
      items.push({ label: 'Budgets', kind: vscode.QuickPickItemKind.Separator });
      items.push({ label: 'Budgets as written', description: 'against the what-if budgets', target: { kind: 'budget' } });
    }
    const pick = await vscode.window.showQuickPick(items, { title: 'Context Lens: Compare Preview With…', placeHolder: `Compare the request of ${snapshot.template.name} (A) with… (B)` });
    if (!pick || pick.target === undefined) return;
    await this.setCompare(pick.target ?? undefined);
  }

  /** "Apply to config": asks the server for the config edits of the what-if budgets and applies them as a workspace edit. */
  private async applyWhatIf(templateUri: string): Promise<void> {
    const v = this.variant;
    if (!v || v.templateUri !== templateUri || Object.keys(v.budgets).length === 0) return;
    const budgets = { ...v.budgets };
    const r = await this.client().sendRequest(BudgetEditRequest.type, { uri: templateUri, budgets });
    if ('error' in r) {
      void vscode.window.showWarningMessage(`Context Lens: cannot apply the budgets — ${r.error}.`);
      return;
    }
    const uri = vscode.Uri.parse(r.uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    // The edits were computed on the text the server has; a newer text needs new edits.
    if (r.version !== undefined && doc.version !== r.version) {
      void vscode.window.showWarningMessage(`Context Lens: ${vscode.workspace.asRelativePath(uri)} changed meanwhile; apply the budgets again.`);
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    for (const e of r.edits) edit.replace(uri, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showWarningMessage(`Context Lens: the budgets could not be written to ${vscode.workspace.asRelativePath(uri)}.`);
      return;
    }
    // The config now says what the what-if said.
    if (this.variant === v) {
      v.budgets = {};
      if (v.compare?.kind === 'budget') delete v.compare;
    }
    const names = Object.entries(budgets).map(([k, n]) => `${k} ${n.toLocaleString('en-US')}`).join(', ');
    void vscode.window.showInformationMessage(`Context Lens: wrote budgets ${names} to ${vscode.workspace.asRelativePath(uri)} (unsaved; Undo in its editor reverts it).`, 'Show').then((choice) => {
      if (choice === 'Show') void vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
    });
    await this.refresh();
  }

  private async act(action: PreviewAction): Promise<void> {
    const templateUri = this.panel?.currentSnapshot?.templateUri ?? this.source;
    if (!templateUri) return;
    const client = this.client();
    switch (action.type) {
      case 'setCompare':
        await this.setCompare(action.target ?? undefined);
        return;
      case 'setBudget': {
        const v = this.variantFor(templateUri);
        // Without what-if budgets the shown budget is the written one; with them, `written` says it.
        const shown = this.panel?.currentSnapshot;
        const written = shown?.whatIf ? shown.whatIf.written[action.slot] : shown?.result.budget.slots.find((l) => l.name === action.slot)?.budget;
        // Back at the written budget (or cleared): no what-if for that slot.
        if (action.budget === null || action.budget === written) delete v.budgets[action.slot];
        else v.budgets[action.slot] = action.budget;
        if (Object.keys(v.budgets).length === 0 && v.compare?.kind === 'budget') delete v.compare;
        await this.refresh();
        return;
      }
      case 'resetWhatIf': {
        const v = this.variantFor(templateUri);
        v.budgets = {};
        if (v.compare?.kind === 'budget') delete v.compare;
        await this.refresh();
        return;
      }
      case 'applyWhatIf':
        await this.applyWhatIf(templateUri);
        return;
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
