/**
 * The status bar item: model/tokenizer, the request total against the window for the active
 * template (or the config's equation), and the fixture. Click to switch fixture. It shows what the
 * server last reported for the active editor's document and nothing when that is not a Context
 * Lens file.
 */
import * as vscode from 'vscode';
import type { StatusParams } from '../protocol/lsp';

const NUM = new Intl.NumberFormat('en-US');

export function statusText(s: StatusParams): string {
  const who = s.model ?? s.tokenizer;
  const approx = s.exact ? '' : '≈';
  const total = s.total !== undefined && s.window !== undefined ? ` · ${approx}${NUM.format(s.total)} / ${NUM.format(s.window)}` : '';
  const mark = s.fits === false ? ' $(warning)' : '';
  const fixture = s.fixture ? ` · ${s.fixture}` : '';
  return `$(symbol-ruler) ${who}${total}${mark}${fixture}`;
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly latest = new Map<string, StatusParams>();

  constructor() {
    this.item = vscode.window.createStatusBarItem('contextLens.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Context Lens';
    this.item.command = 'contextLens.selectFixture';
  }

  update(s: StatusParams): void {
    this.latest.set(s.uri, s);
    this.render();
  }

  forget(uri: string): void {
    this.latest.delete(uri);
    this.render();
  }

  clear(): void {
    this.latest.clear();
    this.render();
  }

  render(): void {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    const s = uri ? this.latest.get(uri) : undefined;
    if (!s) {
      this.item.hide();
      return;
    }
    this.item.text = statusText(s);
    const md = new vscode.MarkdownString(undefined, true);
    md.appendText(`Context Lens — ${s.detail}\n\n`);
    md.appendText(`Tokenizer ${s.tokenizer}${s.exact ? '' : ' (estimate)'}${s.model ? ` · model ${s.model}` : ''}${s.fixture ? ` · fixture ${s.fixture}` : ''}\n\n`);
    md.appendText('Click to select the fixture.');
    this.item.tooltip = md;
    this.item.accessibilityInformation = { label: `Context Lens: ${s.detail}${s.fixture ? `, fixture ${s.fixture}` : ''}` };
    this.item.backgroundColor = s.fits === false ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
