/**
 * Findings to LSP diagnostics, and their publication per file. An analysis reports findings on
 * every file it involves (the template, its config, its fixture); each file's diagnostics are the
 * union of what every current analysis says about it, deduplicated, republished when a
 * contribution changes and cleared when the last one goes away.
 */
import { DiagnosticSeverity, DiagnosticTag } from 'vscode-languageserver';
import type { Diagnostic, DiagnosticRelatedInformation } from 'vscode-languageserver';
import type { Finding, Severity } from '../core/types';
import { TextView } from './textMap';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

export interface DiagnosticContext {
  /** Text of a file as the analysis read it (open buffer or disk). */
  viewOf(path: string): TextView | undefined;
  uriOf(path: string): string;
  /** The rule documentation page the links point into, e.g. `file:///ext/docs/rules.md`. */
  rulesDocUri?: string;
}

export function toDiagnostic(f: Finding, view: TextView, ctx: DiagnosticContext): Diagnostic {
  const d: Diagnostic = {
    range: view.range(f.span),
    severity: SEVERITY[f.severity],
    code: f.rule,
    source: 'context-lens',
    message: f.message,
  };
  if (ctx.rulesDocUri) d.codeDescription = { href: `${ctx.rulesDocUri}#rule-${f.rule}` };
  if (f.rule === 'slot-unused') d.tags = [DiagnosticTag.Unnecessary];
  if (f.related?.length) {
    const related: DiagnosticRelatedInformation[] = [];
    for (const r of f.related) {
      const rv = r.path === f.path ? view : ctx.viewOf(r.path);
      if (!rv) continue;
      related.push({ location: { uri: ctx.uriOf(r.path), range: rv.range(r.span) }, message: r.message });
    }
    if (related.length) d.relatedInformation = related;
  }
  return d;
}

interface Contribution {
  findings: Finding[];
  diagnostics: Diagnostic[];
}

export interface PublishTarget {
  uri: string;
  /** Version of the open document the diagnostics were computed against, when it is open. */
  version?: number;
  diagnostics: Diagnostic[];
}

export class DiagnosticsPublisher {
  /** target path -> source uri -> what that source's analysis says about the target. */
  private readonly byTarget = new Map<string, Map<string, Contribution>>();
  /** source uri -> target paths it contributed to. */
  private readonly bySource = new Map<string, Set<string>>();
  /** target path -> fingerprint of what was last published (to skip identical republishing). */
  private readonly published = new Map<string, string>();

  /** target path -> the source uri that is the target's own document, when it is open. */
  private readonly own = new Map<string, string>();

  constructor(
    private readonly ctx: DiagnosticContext,
    private readonly send: (target: PublishTarget) => void,
    private readonly versionOf: (path: string) => number | undefined,
    /**
     * True while a source's analysis is out of date (an edit or a dependency change is pending)
     * and so must not speak next to `ownUri`, the target file's own analysis.
     */
    private readonly isPending: (sourceUri: string, ownUri: string) => boolean = () => false,
  ) {}

  /** Replaces everything `sourceUri`'s analysis reported. `ownPath` always gets a publication. */
  setFindings(sourceUri: string, ownPath: string, findings: readonly Finding[], resolve: (p: string) => string): void {
    const grouped = new Map<string, Finding[]>();
    grouped.set(ownPath, []);
    for (const f of findings) {
      const target = resolve(f.path);
      const list = grouped.get(target) ?? [];
      list.push(target === f.path ? f : { ...f, path: target });
      grouped.set(target, list);
    }
    this.own.set(ownPath, sourceUri);
    const before = this.bySource.get(sourceUri) ?? new Set<string>();
    const after = new Set(grouped.keys());
    for (const target of before) if (!after.has(target)) this.byTarget.get(target)?.delete(sourceUri);
    for (const [target, list] of grouped) {
      // A file without findings needs no view (reading it would keep the text of every scanned file).
      const view = list.length ? this.ctx.viewOf(target) : undefined;
      const diagnostics = view ? list.map((f) => toDiagnostic(f, view, this.ctx)) : [];
      let m = this.byTarget.get(target);
      if (!m) this.byTarget.set(target, (m = new Map()));
      m.set(sourceUri, { findings: list, diagnostics });
    }
    this.bySource.set(sourceUri, after);
    for (const target of new Set([...before, ...after])) this.publish(target, target === ownPath);
  }

  /** A document closed: its analysis no longer speaks for any file. */
  removeSource(sourceUri: string, ownPath: string): void {
    const targets = this.bySource.get(sourceUri) ?? new Set<string>();
    this.bySource.delete(sourceUri);
    if (this.own.get(ownPath) === sourceUri) this.own.delete(ownPath);
    targets.add(ownPath);
    for (const target of targets) {
      this.byTarget.get(target)?.delete(sourceUri);
      this.publish(target, false);
    }
  }

  /** Findings on a file from every analysis that reported some, with the source that did. */
  findingsFor(path: string): Array<{ source: string; finding: Finding; diagnostic: Diagnostic }> {
    const out: Array<{ source: string; finding: Finding; diagnostic: Diagnostic }> = [];
    for (const [source, c] of this.byTarget.get(path) ?? []) {
      c.findings.forEach((finding, i) => out.push({ source, finding, diagnostic: c.diagnostics[i] }));
    }
    return out;
  }

  /**
   * What is currently published for a file (deduplicated). When the file's own analysis is there,
   * what other analyses that are about to be redone said about it is left out: they read an older
   * version of this file (a config edit re-analyses its templates a debounce later), and showing
   * their findings next to fresh ones would flash problems that are already fixed.
   */
  diagnosticsFor(path: string): Diagnostic[] {
    const seen = new Set<string>();
    const out: Diagnostic[] = [];
    const own = this.own.get(path);
    for (const [source, c] of this.byTarget.get(path) ?? []) {
      if (own !== undefined && source !== own && this.isPending(source, own)) continue;
      for (const d of c.diagnostics) {
        const key = `${d.code}|${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character}|${d.message}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(d);
      }
    }
    return out;
  }

  private publish(target: string, force: boolean): void {
    const diagnostics = this.diagnosticsFor(target);
    if (this.byTarget.get(target)?.size === 0) this.byTarget.delete(target);
    const version = this.versionOf(target);
    const fingerprint = `${version ?? ''}|${JSON.stringify(diagnostics)}`;
    if (!force && this.published.get(target) === fingerprint) return;
    if (diagnostics.length === 0 && !this.published.has(target) && !force) return;
    if (diagnostics.length === 0) this.published.delete(target);
    else this.published.set(target, fingerprint);
    this.send({ uri: this.ctx.uriOf(target), version, diagnostics });
  }
}
