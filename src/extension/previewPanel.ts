/**
 * Host side of the preview webview: owns one `vscode.WebviewPanel` (viewType `contextLens.preview`)
 * and its half of the channel declared in src/protocol/preview.ts. It does not assemble anything
 * itself; the extension feeds it snapshots (built from the language server's results) and handles
 * the actions it reports.
 *
 * Usage (from the extension's activation):
 *
 *   const panel = PreviewPanel.create(context.extensionUri, templateUri);   // opens beside the editor
 *   panel.onDidReceiveAction(({ action }) => { ...selectFixture / selectModel / copyRequest /
 *                                              exportTrace / revealSource / refresh / setCompare /
 *                                              setBudget / resetWhatIf / applyWhatIf... });
 *   panel.update(snapshotBody);      // complete snapshot; the panel stamps the sequence number
 *   panel.showEmpty('Open a .prompt file');  panel.showError('Language server not running');
 *   context.subscriptions.push(registerPreviewSerializer(context.extensionUri, (panel) => { ... }));
 *
 * Guarantees:
 * - the HTML has a strict CSP with a fresh `crypto.randomBytes` nonce each time it is set, and
 *   `localResourceRoots` is limited to dist/media and media of the extension;
 * - nothing is posted before the webview says `ready`; the latest message is kept and (re)sent on
 *   every `ready` (the webview is rebuilt when it was hidden, since there is no
 *   retainContextWhenHidden);
 * - every message from the webview goes through `validateWebviewMessage`, and an action must name
 *   a fixture, model or path of the snapshot currently shown (`checkActionAgainstSnapshot`);
 *   anything else is ignored;
 * - a snapshot for the same template with an older document version than the one shown is dropped.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { EmptyMessage, ErrorMessage, HostMessage, PreviewAction, PreviewSnapshot, PreviewSnapshotBody } from '../protocol/preview';
import { PREVIEW_VIEW_TYPE, checkActionAgainstSnapshot, templateUriFromState, validateWebviewMessage } from '../protocol/preview';
import { previewHtml } from '../webview/html';

export interface PreviewActionEvent {
  panel: PreviewPanel;
  action: PreviewAction;
}

export class PreviewPanel implements vscode.Disposable {
  static readonly viewType = PREVIEW_VIEW_TYPE;

  /** Opens a new preview beside the active editor for `templateUri` (a document uri string). */
  static create(extensionUri: vscode.Uri, templateUri: string, title = 'Context Lens Preview'): PreviewPanel {
    const panel = vscode.window.createWebviewPanel(
      PREVIEW_VIEW_TYPE,
      title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { ...PreviewPanel.webviewOptions(extensionUri), enableFindWidget: true },
    );
    return new PreviewPanel(panel, extensionUri, templateUri);
  }

  /** Adopts a panel VS Code restored after a reload (see `registerPreviewSerializer`). */
  static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, templateUri: string): PreviewPanel {
    panel.webview.options = PreviewPanel.webviewOptions(extensionUri);
    return new PreviewPanel(panel, extensionUri, templateUri);
  }

  /** Scripts on (the bundle), and resources only from the extension's own media folders. */
  private static webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
    return {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'media'), vscode.Uri.joinPath(extensionUri, 'media')],
    };
  }

  private readonly actionEmitter = new vscode.EventEmitter<PreviewActionEvent>();
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  private ready = false;
  private seq = 0;
  /** The last message for the webview: sent on `ready`, and again whenever the webview is rebuilt. */
  private latest: HostMessage | undefined;
  private snapshot: PreviewSnapshot | undefined;
  private disposed = false;

  /** Actions the user took in the panel, already validated against the protocol and the shown snapshot. */
  readonly onDidReceiveAction: vscode.Event<PreviewActionEvent> = this.actionEmitter.event;
  readonly onDidDispose: vscode.Event<void> = this.disposeEmitter.event;

  private constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private currentTemplateUri: string,
  ) {
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icon.png');
    this.disposables.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidDispose(() => this.dispose()),
      panel.onDidChangeViewState(() => {
        // A hidden webview is destroyed (no retainContextWhenHidden); wait for its next `ready`.
        if (!panel.visible) this.ready = false;
      }),
    );
    this.render();
  }

  /** The template this panel previews (a document uri string). */
  get templateUri(): string {
    return this.currentTemplateUri;
  }

  /** The snapshot last sent (or queued), with its sequence number. */
  get currentSnapshot(): PreviewSnapshot | undefined {
    return this.snapshot;
  }

  get visible(): boolean {
    return this.panel.visible;
  }

  /**
   * Shows a complete snapshot. Returns its sequence number, or undefined when it was dropped as
   * stale (same template, older document version than the one shown).
   */
  update(body: PreviewSnapshotBody): number | undefined {
    if (this.disposed) return undefined;
    const shown = this.snapshot;
    if (shown && shown.templateUri === body.templateUri && body.documentVersion < shown.documentVersion) return undefined;
    const snapshot: PreviewSnapshot = { ...body, seq: ++this.seq };
    this.snapshot = snapshot;
    this.currentTemplateUri = body.templateUri;
    this.panel.title = `Preview ${body.template.name}`;
    this.send({ type: 'snapshot', snapshot });
    return snapshot.seq;
  }

  /** Shows the empty state (nothing to preview) with a reason that says what to do. */
  showEmpty(reason: string): void {
    const message: EmptyMessage = { type: 'empty', seq: ++this.seq, reason };
    this.snapshot = undefined;
    this.send(message);
  }

  /** Shows an error state (no snapshot could be produced). */
  showError(text: string): void {
    const message: ErrorMessage = { type: 'error', seq: ++this.seq, message: text, templateUri: this.currentTemplateUri };
    this.snapshot = undefined;
    this.send(message);
  }

  /** Points the panel at another template (e.g. the active editor changed); the next `update` fills it. */
  setTemplate(templateUri: string): void {
    this.currentTemplateUri = templateUri;
  }

  reveal(): void {
    this.panel.reveal(undefined, true);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disposeEmitter.fire();
    this.panel.dispose();
    for (const d of this.disposables) d.dispose();
    this.actionEmitter.dispose();
    this.disposeEmitter.dispose();
  }

  /** Sets the HTML with a fresh nonce; the webview then loads and posts `ready`. */
  private render(): void {
    const webview = this.panel.webview;
    const media = vscode.Uri.joinPath(this.extensionUri, 'dist', 'media');
    this.ready = false;
    webview.html = previewHtml({
      cspSource: webview.cspSource,
      nonce: randomBytes(18).toString('base64'),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'webview.css')).toString(),
    });
  }

  private send(message: HostMessage): void {
    this.latest = message;
    if (this.ready) void this.panel.webview.postMessage(message);
  }

  private receive(raw: unknown): void {
    const message = validateWebviewMessage(raw);
    if (!message) return;
    if (message.type === 'ready') {
      this.ready = true;
      if (this.latest) void this.panel.webview.postMessage(this.latest);
      return;
    }
    if (!checkActionAgainstSnapshot(message, this.snapshot)) return;
    this.actionEmitter.fire({ panel: this, action: message });
  }
}

/**
 * Registers the serializer that brings preview panels back after VS Code reloads. The webview
 * persists the template uri in its state; `onRestore` receives the revived panel so the extension
 * can subscribe to its actions and send it a snapshot. Panels whose state carries no template uri
 * are closed. package.json needs the activation event `onWebviewPanel:contextLens.preview`.
 */
export function registerPreviewSerializer(extensionUri: vscode.Uri, onRestore: (panel: PreviewPanel) => void): vscode.Disposable {
  return vscode.window.registerWebviewPanelSerializer(PREVIEW_VIEW_TYPE, {
    async deserializeWebviewPanel(webviewPanel: vscode.WebviewPanel, state: unknown): Promise<void> {
      const templateUri = templateUriFromState(state);
      if (!templateUri) {
        webviewPanel.dispose();
        return;
      }
      onRestore(PreviewPanel.revive(webviewPanel, extensionUri, templateUri));
    },
  });
}
