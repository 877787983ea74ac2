/**
 * Shared helpers of the VS Code integration suite (test/electron/suite/*.test.ts). They run inside a
 * real extension host — desktop VS Code under @vscode/test-electron, or code-server's extension host
 * under test/e2e/electron-suite.test.ts — and use nothing but the `vscode` API and node:fs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'context-lens.context-lens';

/** The workspace folder the suite was opened on: a copy of (or the repository's) examples/. */
export function workspaceRoot(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the suite must run with the examples folder open as the workspace');
  return folder.uri;
}

export function fileUri(rel: string): vscode.Uri {
  return vscode.Uri.joinPath(workspaceRoot(), ...rel.split('/'));
}

/** Polls `probe` until it returns something other than undefined/null/false; bounded. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as T;
      last = v;
    } catch (err) {
      last = err instanceof Error ? err.message : err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Opens a workspace file in an editor (the language server then analyses its live text). */
export async function openFile(rel: string): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument(fileUri(rel));
  await vscode.window.showTextDocument(doc, { preview: false });
  return doc;
}

/** The extension under test; fails the test when it is not installed. */
export function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not installed in this VS Code`);
  return ext;
}

/** A diagnostic's rule id: the code as a string, or the `value` of a code with a documentation link. */
export function ruleOf(d: vscode.Diagnostic): string {
  const c = d.code;
  if (c === undefined) return '';
  return typeof c === 'object' ? String(c.value) : String(c);
}

export function severityName(s: vscode.DiagnosticSeverity): string {
  return ['error', 'warning', 'info', 'hint'][s] ?? String(s);
}

/** Our diagnostics (source `context-lens`) on one file. */
export function ourDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'context-lens');
}

export interface PlantedFinding {
  /** Path relative to the workspace (examples/). */
  file: string;
  /** 1-based line, as `ctxlens check` prints it. */
  line: number;
  rule: string;
  severity: string;
}

/**
 * The table of planted findings in the workspace's README.md (examples/README.md): every finding
 * `ctxlens check examples/` reports, with file, line, rule and severity. Reading it at run time keeps
 * the suite in step with the examples (test/unit/examples.test.ts keeps the table honest).
 */
export function plantedFindings(): PlantedFinding[] {
  const text = readFileSync(join(workspaceRoot().fsPath, 'README.md'), 'utf8');
  const rows: PlantedFinding[] = [];
  for (const m of text.matchAll(/^\| `([^`]+)` \| (\d+) \| `([a-z0-9-]+)` \| (error|warning|info|hint) \|/gm)) {
    rows.push({ file: m[1]!, line: Number(m[2]), rule: m[3]!, severity: m[4]! });
  }
  if (rows.length === 0) throw new Error('no planted findings table in README.md of the workspace');
  return rows;
}

/** Runs a code lens provider and keeps the lenses that carry a command (i.e. a visible title). */
export async function codeLenses(uri: vscode.Uri): Promise<vscode.CodeLens[]> {
  const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 100)) ?? [];
  return lenses.filter((l) => l.command?.title);
}

/** The plain text of hover results (markdown strings and marked strings). */
export function hoverText(hovers: vscode.Hover[]): string {
  return hovers
    .flatMap((h) => h.contents)
    .map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))
    .join('\n');
}

/** Position of the `nth` occurrence (0-based) of `needle` in a document, plus `delta` characters. */
export function positionOf(doc: vscode.TextDocument, needle: string, delta = 0, nth = 0): vscode.Position {
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = doc.getText().indexOf(needle, at + 1);
    if (at < 0) throw new Error(`"${needle}" (occurrence ${nth}) not found in ${doc.uri.fsPath}`);
  }
  return doc.positionAt(at + delta);
}
