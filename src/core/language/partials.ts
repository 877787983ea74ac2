/**
 * Partials and includes a template names: dotprompt `{{> name}}` resolves `_name.prompt` or
 * `name.prompt` in the template's folder (and a `partials/` folder there), Prompty/Jinja
 * `{% include "x" %}` (also `import`, `from`, `extends`) resolves the name relative to the template.
 * Everything is read through the host, inside the workspace only; a missing or escaping reference
 * is a located `file-reference` finding. Partials of partials are followed, to a bounded depth.
 *
 * dotprompt applications also register helpers and partials in code (`defineHelper`,
 * `definePartial`); the context config's `helpers:` / `partials:` and the editor setting declare
 * them (`codeRegistry`). A declared partial with a `file` is read from that file; one without is
 * rendered as a placeholder; a partial that is neither a file nor declared is `unknown-partial`.
 */
import type { FileHost } from '../host';
import type { CodeHelper, CodePartial, ContextConfig } from '../config/schema';
import type { Finding, Span, TemplateDoc } from '../types';
import { dirname, join, resolveInWorkspace } from '../paths';
import { finding } from '../rules/registry';

/** Helpers and partials registered in the application's code, from the config and the editor setting. */
export interface CodeRegistry {
  helpers: string[];
  /** `file` is resolved against `base` (the config file, or a workspace file for the setting). */
  partials: Array<{ name: string; file?: string; base?: string }>;
}

/** The editor's declarations (setting `contextLens.dotprompt`), as plain names and partial entries. */
export interface CodeRegistrySetting {
  helpers?: readonly CodeHelper[];
  partials?: readonly CodePartial[];
}

/** The declarations of a config (`helpers:`, `partials:`) and of the editor setting, the config's first. */
export function codeRegistry(config: ContextConfig | undefined, configPath: string | undefined, setting?: CodeRegistrySetting): CodeRegistry {
  const helpers: string[] = [];
  const partials: CodeRegistry['partials'] = [];
  const addHelper = (h: CodeHelper) => {
    const name = typeof h === 'string' ? h : h.name;
    if (!helpers.includes(name)) helpers.push(name);
  };
  const addPartial = (p: CodePartial, base: string | undefined) => {
    const entry = typeof p === 'string' ? { name: p } : { name: p.name, ...(p.file !== undefined && base !== undefined ? { file: p.file, base } : {}) };
    if (!partials.some((q) => q.name === entry.name)) partials.push(entry);
  };
  for (const h of config?.helpers ?? []) addHelper(h);
  for (const p of config?.partials ?? []) addPartial(p, configPath);
  for (const h of setting?.helpers ?? []) addHelper(h);
  // The setting's files have no file of their own to be relative to: only its names count.
  for (const p of setting?.partials ?? []) addPartial(typeof p === 'string' ? p : { name: p.name }, undefined);
  return { helpers, partials };
}

/** The render options of a registry: the declared helpers, and the declared partials that have no source. */
export function codeRenderOptions(registry: CodeRegistry, partials: Partials): { codeHelpers?: string[]; codePartials?: string[] } {
  const codePartials = registry.partials.filter((p) => !(p.name in partials.sources)).map((p) => p.name);
  return { ...(registry.helpers.length ? { codeHelpers: [...registry.helpers] } : {}), ...(codePartials.length ? { codePartials } : {}) };
}

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

export function readPartials(host: FileHost, template: TemplateDoc, registry: CodeRegistry = { helpers: [], partials: [] }): Partials {
  const sources: Record<string, string> = {};
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  const dir = dirname(template.path);
  const queue: Array<{ text: string; path: string; depth: number }> = [{ text: template.text, path: template.path, depth: 0 }];
  while (queue.length) {
    const { text, path, depth } = queue.shift()!;
    for (const ref of references(template.format, text)) {
      if (ref.name in sources || Object.keys(sources).length >= MAX_PARTIALS) continue;
      const declared = template.format === 'prompt' ? registry.partials.find((p) => p.name === ref.name) : undefined;
      const candidates = declared?.file
        ? [declared.file]
        : template.format === 'prompt'
          ? [`_${ref.name}.prompt`, `${ref.name}.prompt`, `partials/_${ref.name}.prompt`, `partials/${ref.name}.prompt`]
          : [ref.name];
      let found: string | undefined;
      let error: string | undefined;
      for (const c of candidates) {
        const r = resolveInWorkspace(host, declared?.file && declared.base ? declared.base : join(dir, 'x'), c);
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
      if (!found && path === template.path && declared?.file) {
        findings.push(finding('file-reference', template.path, ref.span, `Partial '${ref.name}' is declared with the file ${declared.file}, which ${error ? `cannot be read (${error})` : 'does not exist'}.`));
      } else if (!found && path === template.path && template.format === 'prompt' && !declared) {
        findings.push(
          finding(
            'unknown-partial',
            template.path,
            ref.span,
            `Partial '${ref.name}' is not a file beside ${template.path.slice(dir.length + 1)} (looked for ${candidates.join(', ')}): unless the application registers it in code (definePartial), dotprompt fails with "The partial ${ref.name} could not be found". If it does, declare it under \`partials:\` in the context config, with its file if it has one; it is shown as a placeholder meanwhile.`,
          ),
        );
      } else if (!found && path === template.path && !declared) {
        const tried = candidates.join(', ');
        findings.push(finding('file-reference', template.path, ref.span, `${template.format === 'prompt' ? 'Partial' : 'Included template'} '${ref.name}' not found${error ? ` (${error})` : ''}; looked for ${tried} beside ${template.path.slice(dir.length + 1)}.`));
      }
    }
  }
  return { sources, findings, dependencies };
}

/**
 * The template without the uses that are calls of a declared helper (`{{today}}` with `today`
 * registered in code is a helper call in dotprompt, not a variable): what the slot rules read.
 * Only a bare `{{name}}` is such a call; a name inside a block or as an argument stays a value.
 */
export function withoutHelperCalls(template: TemplateDoc, registry: CodeRegistry): TemplateDoc {
  if (template.format !== 'prompt' || !registry.helpers.length) return template;
  const text = template.text;
  const bare = (span: Span): boolean => {
    let a = span.start;
    while (a > 0 && /[\s~{]/.test(text[a - 1]) && !(text[a - 1] === '{' && text[a - 2] === '{')) a--;
    let b = span.end;
    while (b < text.length && /[\s~]/.test(text[b])) b++;
    return text.slice(a - 2, a) === '{{' && text.slice(b, b + 2) === '}}';
  };
  const uses = template.uses.filter((u) => !(u.form === 'var' && registry.helpers.includes(u.slot) && bare(u.span)));
  return uses.length === template.uses.length ? template : { ...template, uses };
}
