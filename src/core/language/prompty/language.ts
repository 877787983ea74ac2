/**
 * Prompty (`.prompty`): YAML front matter, role lines and a Jinja2 or Mustache body, rendered as
 * the Prompty runtime line the file targets renders it (engine.ts: 0.1.x or v2).
 */
import type { TemplateLanguage } from '../language';
import { basename } from '../../paths';
import { parseFenced } from '../fenced';
import { parsePromptyBody } from './parse';
import { PROMPTY_LINE_LABEL, renderPrompty } from './engine';

export const promptyLanguage: TemplateLanguage = {
  id: 'prompty',
  name: 'Prompty',
  globs: ['**/*.prompty'],
  fallbackRole: 'system',
  claim(path) {
    return /\.prompty$/i.test(path) ? 'template' : undefined;
  },
  parse(path, text) {
    return parseFenced(path, text, {
      format: 'prompty',
      fallbackRole: 'system',
      body: (p, t, start, fm) => parsePromptyBody(p, t, start, fm.frontMatter?.inputs ?? {}, fm.frontMatter?.data),
    });
  },
  render(doc, v) {
    const input = { ...v.defaults, ...v.input };
    // The engine reads the runtime line and the template format from the front matter itself.
    const r = renderPrompty(doc.text, input, {
      templates: v.partials,
      fileName: basename(doc.path),
      ...(v.readFile ? { readFile: v.readFile } : {}),
      // Without any values (no fixture, no sample) the analysis renders what it can and names what is missing.
      ...(v.hasValues ? {} : { missingValues: 'lenient' as const }),
    });
    const runtime = PROMPTY_LINE_LABEL[r.line];
    if (!r.missing?.length) return { ...r, runtime };
    const names = r.missing.map((n) => `'${n}'`).join(', ');
    const one = r.missing.length === 1;
    const issue = {
      rule: 'value-missing' as const,
      message: `No value for ${names}: no fixture or sample data gives ${one ? 'it' : 'them'}, so ${one ? 'it is' : 'they are'} rendered empty and the counts leave ${one ? 'it' : 'them'} out. Prompty's runtime fails on an attribute of a missing value; add a sample or a fixture.`,
      // At the first use of a missing value, else the body's start.
      span: doc.uses.find((u) => r.missing!.includes(u.slot))?.span ?? { start: doc.bodySpan.start, end: Math.min(doc.text.length, doc.bodySpan.start + 1) },
    };
    return { ...r, runtime, issues: [...r.issues, issue] };
  },
};
