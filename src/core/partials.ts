/**
 * Partials and includes a template names: dotprompt `{{> name}}` resolves `_name.prompt` or
 * `name.prompt` in the template's folder (and a `partials/` folder there), Prompty/Jinja
 * `{% include "x" %}` (also `import`, `from`, `extends`) resolves the name relative to the template.
 * Everything is read through the host, inside the workspace only; a missing or escaping reference
 * is a located `file-reference` finding. Partials of partials are followed, to a bounded depth.
 */
import type { FileHost } from './host';
import type { Finding, Span, TemplateDoc } from './types';
import { dirname, join, resolveInWorkspace } from './paths';
import { finding } from './rules/registry';

const MAX_DEPTH = 8;
const MAX_PARTIALS = 64;
const MAX_BYTES = 1024 * 1024;

export interface Partials {
  /** Source by the name the template uses. */
  sources: Record<string, string>;
  findings: Finding[];
  dependencies: string[];
}

/** Names used in a source, with their spans. The patterns are fixed and linear (no user text in them). */
function references(format: TemplateDoc['format'], text: string): Array<{ name: string; span: Span }> {
  const out: Array<{ name: string; span: Span }> = [];
  const re = format === 'prompt' ? /\{\{~?#?>\s*([A-Za-z0-9_][A-Za-z0-9_./-]{0,200})/g : /\{%-?\s*(?:include|import|from|extends)\s+(["'])([^"'\n]{1,300})\1/g;
  for (const m of text.matchAll(re)) {
    const name = format === 'prompt' ? m[1] : m[2];
    const at = (m.index ?? 0) + m[0].lastIndexOf(name);
    out.push({ name, span: { start: at, end: at + name.length } });
  }
  return out;
}

export function readPartials(host: FileHost, template: TemplateDoc): Partials {
  const sources: Record<string, string> = {};
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  const dir = dirname(template.path);
  const queue: Array<{ text: string; path: string; depth: number }> = [{ text: template.text, path: template.path, depth: 0 }];
  while (queue.length) {
    const { text, path, depth } = queue.shift()!;
    for (const ref of references(template.format, text)) {
      if (ref.name in sources || Object.keys(sources).length >= MAX_PARTIALS) continue;
      const candidates =
        template.format === 'prompt'
          ? [`_${ref.name}.prompt`, `${ref.name}.prompt`, `partials/_${ref.name}.prompt`, `partials/${ref.name}.prompt`]
          : [ref.name];
      let found: string | undefined;
      let error: string | undefined;
      for (const c of candidates) {
        const r = resolveInWorkspace(host, join(dir, 'x'), c);
        if (!r.path) {
          error = r.error;
          continue;
        }
        dependencies.push(r.path);
        const size = host.size(r.path);
        if (size === undefined) continue;
        if (size > MAX_BYTES) {
          error = `${r.path} is over ${MAX_BYTES.toLocaleString('en-US')} bytes`;
          continue;
        }
        const body = host.readFile(r.path);
        if (body === undefined) continue;
        found = r.path;
        sources[ref.name] = body;
        if (depth + 1 < MAX_DEPTH) queue.push({ text: body, path: r.path, depth: depth + 1 });
        break;
      }
      if (!found && path === template.path) {
        const tried = candidates.join(', ');
        findings.push(finding('file-reference', template.path, ref.span, `${template.format === 'prompt' ? 'Partial' : 'Included template'} '${ref.name}' not found${error ? ` (${error})` : ''}; looked for ${tried} beside ${template.path.slice(dir.length + 1)}.`));
      }
    }
  }
  return { sources, findings, dependencies };
}
