/**
 * The light analysis of an open document larger than `contextLens.maxFileSize`: no parsing, no
 * counting, one finding that says why. Parsing a 5 MB fixture takes seconds on one thread, and
 * every other file's hovers and lenses would wait behind it; a file that large is a data dump,
 * not something to lint keystroke by keystroke.
 */
import type { Analysis, FileKind } from '../core/analyze';
import { finding } from '../core/rules/registry';
import { templateFormat } from '../core/analyze';

const RULE_BY_KIND: Record<FileKind, string> = { template: 'template-invalid', config: 'config-invalid', fixture: 'fixture-invalid' };

export function lightAnalysis(path: string, kind: FileKind, bytes: number, max: number): Analysis {
  const what = kind === 'fixture' ? 'Fixture' : kind === 'config' ? 'Context config' : 'Template';
  const f = finding(RULE_BY_KIND[kind], path, { start: 0, end: 0 }, `${what} is ${bytes.toLocaleString('en-US')} bytes, over the ${max.toLocaleString('en-US')}-byte limit for full analysis (contextLens.maxFileSize); it is not parsed, counted or assembled.`);
  const tokenizer = { name: 'none', exact: false };
  if (kind === 'fixture') {
    const name = path.slice(path.lastIndexOf('/') + 1).replace(/\.fixture\.(ya?ml|json)$/i, '');
    return { kind, path, doc: { path, text: '', name, slots: {}, slotKeySpans: {}, findings: [] }, findings: [f], dependencies: [] };
  }
  if (kind === 'config') {
    const doc = { path, text: '', keySpan: () => undefined, valueSpan: () => undefined, findings: [] };
    return { kind, path, doc, tokenizer, templates: [], findings: [f], dependencies: [] };
  }
  const template = { path, format: templateFormat(path), text: '', bodySpan: { start: 0, end: 0 }, messages: [], uses: [], findings: [] };
  return { kind, path, template, fixtures: [], tokenizer, slots: [], findings: [f], dependencies: [] };
}
