/**
 * The whole-tree check (`ctxlens check`, CI): every template with every one of its fixtures, then
 * the configs and fixtures no template reached. The steps are exported so that a front end can run
 * them in parallel (the CLI's worker threads) and still concatenate their findings in this order,
 * which makes the result identical. Only findings are asked for (`findingsOnly`): what only the
 * views read is not computed.
 */
import type { FileHost } from '../host';
import type { Finding } from '../types';
import type { AnalyzeOptions } from './analyze';
import { analyzeBound, analyzeConfig, analyzeFixture, analyzeTemplate, dedupe } from './analyze';
import { append, classifyFile } from './files';
import { parseTemplate, templateFileOf, templatesIn } from '../language';

/** What checking one template (with every one of its fixtures) found, and the files it covered. */
export interface TemplateCheck {
  findings: Finding[];
  /** The template, its config and fixtures: they need no check of their own. */
  covered: string[];
}

/**
 * One template with its first fixture, then with each other fixture (the first step of `checkFiles`).
 * The template is bound once (config, model, budget, sample, partials and the rules that need no
 * values): the binding does not depend on the fixture, so each further fixture only chooses,
 * reads and assembles its values.
 */
export function checkTemplate(host: FileHost, path: string, given: AnalyzeOptions = {}): TemplateCheck {
  // A file of several templates (BAML: one per function) is checked template by template.
  const text = templateFileOf(path) === path ? host.readFile(path) : undefined;
  const inner = text === undefined ? [path] : templatesIn(path, text);
  if (inner.length !== 1 || inner[0] !== path) {
    const findings: Finding[] = [];
    const covered = [path];
    for (const t of inner) {
      const step = checkTemplate(host, t, given);
      append(findings, step.findings);
      append(covered, step.covered);
    }
    // A file without any template (BAML types only) still reports what its parse found.
    if (!inner.length && text !== undefined) append(findings, parseTemplate(path, text).findings);
    return { findings, covered };
  }
  const options: AnalyzeOptions = { ...given, findingsOnly: true };
  const findings: Finding[] = [];
  const covered = [path];
  const first = analyzeTemplate(host, path, options);
  if (!first) return { findings, covered };
  append(findings, first.findings);
  if (first.config && !first.config.inline) covered.push(first.config.path);
  for (const f of first.fixtures) {
    covered.push(f.path);
    if (f.path === first.fixture?.path) continue;
    const again = first.binding ? analyzeBound(host, first.binding, { ...options, fixture: f.path }) : analyzeTemplate(host, path, { ...options, fixture: f.path });
    if (again) append(findings, again.findings);
  }
  return { findings, covered };
}

/** A config or fixture no template reached (the second step of `checkFiles`). */
export function checkUncovered(host: FileHost, path: string, given: AnalyzeOptions = {}): Finding[] {
  const options: AnalyzeOptions = { ...given, findingsOnly: true };
  const kind = classifyFile(path);
  if (kind === 'config') return analyzeConfig(host, path, options)?.findings ?? [];
  if (kind === 'fixture') return analyzeFixture(host, path, options)?.findings ?? [];
  return [];
}

/** The files `checkFiles` checks, in its order: sorted and unique; templates first, then the rest. */
export function checkOrder(files: readonly string[]): { sorted: string[]; templates: string[] } {
  const sorted = [...new Set(files)].sort();
  return { sorted, templates: sorted.filter((p) => classifyFile(p) === 'template') };
}

/** Findings grouped by file, deduplicated, each file's sorted by position and rule. */
export function groupFindings(all: readonly Finding[]): Map<string, Finding[]> {
  const byFile = new Map<string, Finding[]>();
  for (const f of dedupe([...all])) {
    const list = byFile.get(f.path);
    if (list) list.push(f);
    else byFile.set(f.path, [f]);
  }
  for (const list of byFile.values()) list.sort((a, b) => a.span.start - b.span.start || a.rule.localeCompare(b.rule));
  return byFile;
}

/** Checks every template with every one of its fixtures, then configs and fixtures no template reached. */
export function checkFiles(host: FileHost, files: string[], options: AnalyzeOptions = {}): Map<string, Finding[]> {
  const all: Finding[] = [];
  const covered = new Set<string>();
  const { sorted, templates } = checkOrder(files);
  for (const path of templates) {
    const step = checkTemplate(host, path, options);
    append(all, step.findings);
    for (const c of step.covered) covered.add(c);
  }
  for (const path of sorted) {
    if (covered.has(path) || classifyFile(path) === 'template') continue;
    append(all, checkUncovered(host, path, options));
  }
  return groupFindings(all);
}
