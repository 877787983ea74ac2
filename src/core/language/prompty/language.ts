/**
 * Prompty (`.prompty`): YAML front matter, role lines and a Jinja2 or Mustache body, rendered as
 * the Prompty runtime line the file targets renders it (engine.ts: 0.1.x or v2).
 */
import type { TemplateLanguage } from '../language';
import { basename } from '../../paths';
import { parsePromptyDoc } from './parse';
import { PROMPTY_LINE_LABEL, PROMPTY_LOADERS, PROMPTY_LOADER_LABEL, renderPrompty, type PromptyLoader } from './engine';
import { choosePromptyLoader } from './loader';

export const promptyLanguage: TemplateLanguage = {
  id: 'prompty',
  name: 'Prompty',
  globs: ['**/*.prompty'],
  fallbackRole: 'system',
  claim(path) {
    return /\.prompty$/i.test(path) ? 'template' : undefined;
  },
  parse(path, text) {
    return parsePromptyDoc(path, text);
  },
  render(doc, v) {
    const input = { ...v.defaults, ...v.input };
    // The loader the binding chose (the project's pin or what its workspace runs), else the file's own format.
    const choice = v.loader && (PROMPTY_LOADERS as readonly string[]).includes(v.loader.id) ? { ...v.loader, loader: v.loader.id as PromptyLoader } : choosePromptyLoader(doc.path, doc.text, doc.frontMatter?.data);
    // Prompty's own runtime line chosen from the file's format: the engine reads it from the front matter itself.
    const ownLine = (choice.loader === 'prompty-0.1' || choice.loader === 'prompty-2') && choice.source !== 'pin';
    const options = {
      templates: v.partials,
      fileName: basename(doc.path),
      ...(v.readFile ? { readFile: v.readFile } : {}),
      // Without any values (no fixture, no sample) the analysis renders what it can and names what is missing.
      ...(v.hasValues ? {} : { missingValues: 'lenient' as const }),
    };
    let r = renderPrompty(doc.text, input, { ...options, ...(ownLine ? {} : { loader: choice.loader }) });
    // A loader only guessed from the file's marks that cannot load it gives way to Prompty's own
    // line when that line renders the file: no error of a loader the project may not run.
    if (!ownLine && choice.source === 'file' && r.issues.some((i) => i.rule === 'template-invalid')) {
      const own = renderPrompty(doc.text, input, options);
      if (!own.issues.some((i) => i.rule === 'template-invalid')) {
        r = own;
        choice.reason = `${PROMPTY_LOADER_LABEL[choice.loader]} cannot load it, ${PROMPTY_LINE_LABEL[own.line]} can; ${choice.reason}`;
        choice.loader = own.line === 'v2' ? 'prompty-2' : 'prompty-0.1';
      }
    }
    // The trace, the hover and the preview name the loader, and why unless it is the file's own runtime line.
    const runtime = ownLine && choice.source === 'file' ? PROMPTY_LINE_LABEL[r.line] : `${r.loader ? PROMPTY_LOADER_LABEL[r.loader] : PROMPTY_LINE_LABEL[r.line]} (${choice.reason})`;
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
