/** Span helpers shared by the parser tests: find source text, and compact views of parsed templates. */
import { expect } from 'vitest';
import type { Span, TemplateDoc, TemplateNode } from '../../../src/core/types';

/** Span of the `nth` occurrence of `needle` in `text`. */
export function at(text: string, needle: string, nth = 0): Span {
  let i = -1;
  for (let k = 0; k <= nth; k++) {
    i = text.indexOf(needle, i + 1);
    if (i < 0) throw new Error(`'${needle}' #${nth} not in text`);
  }
  return { start: i, end: i + needle.length };
}

export const slice = (doc: TemplateDoc, s: Span) => doc.text.slice(s.start, s.end);

/** Compact view of uses: slot/form/role/delimiter@source. */
export const usesOf = (doc: TemplateDoc) => doc.uses.map((u) => `${u.slot}/${u.form}/${u.role}/${u.delimiter ?? '-'}@${slice(doc, u.span)}`);

/** Compact view of a node tree. */
export function view(nodes: readonly TemplateNode[] | undefined): unknown[] {
  return (nodes ?? []).map((n) => {
    switch (n.type) {
      case 'text':
        return n.text;
      case 'var':
        return `{${n.path.join('.')}${n.raw ? ' raw' : ''}}`;
      case 'history':
        return `<history ${n.slot}>`;
      case 'each':
        return { each: n.path.join('.'), alias: n.alias, body: view(n.body), ...(n.inverse ? { inverse: view(n.inverse) } : {}) };
      case 'if':
        return { if: n.path.join('.'), negate: n.negate, body: view(n.body), ...(n.inverse ? { inverse: view(n.inverse) } : {}) };
    }
  });
}

/** Every finding and use span lies inside the text. */
export function expectSpansInside(doc: TemplateDoc): void {
  for (const f of doc.findings) {
    expect(f.span.start).toBeGreaterThanOrEqual(0);
    expect(f.span.end).toBeLessThanOrEqual(doc.text.length);
    expect(f.span.start).toBeLessThanOrEqual(f.span.end);
  }
  for (const u of doc.uses) expect(u.span.end).toBeLessThanOrEqual(doc.text.length);
}
