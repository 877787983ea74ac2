/**
 * Partials and includes a template names: dotprompt `{{> name}}` resolves `_name.prompt` or
 * `name.prompt` in the template's folder (and a `partials/` folder there), Prompty/Jinja
 * `{% include "x" %}` (also `import`, `from`, `extends`) resolves the name relative to the template.
 * The names come from the trees the engines render (references.ts), so a call in a comment or a
 * raw block names nothing, and `{% include … ignore missing %}` of a missing file is no finding.
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
import { redactSecrets } from '../text/secrets';
import { bareMustachePaths, fileReferences, templateReferences } from './references';

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

/** A name as a message quotes it: secrets redacted before it is cut (a secret cut short is no longer recognised). */
function shown(name: string): string {
  const s = redactSecrets(name);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

export function readPartials(host: FileHost, template: TemplateDoc, registry: CodeRegistry = { helpers: [], partials: [] }): Partials {
  const sources: Record<string, string> = {};
  const findings: Finding[] = [];
  const dependencies: string[] = [];
  const dir = dirname(template.path);
  const beside = template.path.slice(dir.length + 1);
  const has = (name: string) => Object.prototype.hasOwnProperty.call(sources, name);
  // Depth 0 is the template itself; every other entry is a file one of its references names.
  const queue: Array<{ text: string; depth: number }> = [{ text: template.text, depth: 0 }];
  /** Reads the file a name stands for into `sources`; what was looked for, and why the last candidate failed. */
  const read = (name: string, declared: CodeRegistry['partials'][number] | undefined, depth: number): { found: boolean; candidates: string[]; error?: string } => {
    const candidates = declared?.file
      ? [declared.file]
      : template.format === 'prompt'
        ? [`_${name}.prompt`, `${name}.prompt`, `partials/_${name}.prompt`, `partials/${name}.prompt`]
        : [name];
    let error: string | undefined;
    // Handlebars never finds a partial registered as `__proto__`, nor Jinja a template of that name.
    if (name === '__proto__') return { found: false, candidates };
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
      sources[name] = body;
      if (depth + 1 < MAX_DEPTH) queue.push({ text: body, depth: depth + 1 });
      return { found: true, candidates };
    }
    return { found: false, candidates, ...(error ? { error } : {}) };
  };
  while (queue.length) {
    const { text, depth } = queue.shift()!;
    const main = depth === 0;
    for (const ref of main ? templateReferences(template) : fileReferences(template, text)) {
      const tried: string[] = [];
      let found = false;
      let capped = false;
      let error: string | undefined;
      let declared: CodeRegistry['partials'][number] | undefined;
      // The engine renders the first of the names it finds (one name, except a Jinja list).
      for (const name of ref.names) {
        if ((found = has(name))) break;
        if ((capped = Object.keys(sources).length >= MAX_PARTIALS)) break;
        declared = template.format === 'prompt' ? registry.partials.find((p) => p.name === name) : undefined;
        const r = read(name, declared, depth);
        tried.push(...r.candidates);
        error = r.error !== undefined ? redactSecrets(r.error) : error;
        if ((found = r.found)) break;
      }
      // Only the template's own references are reported (a partial's are the partial's business);
      // an include with `ignore missing` renders nothing when its file is missing.
      if (found || capped || !main || ref.optional) continue;
      const name = shown(ref.names[0]);
      if (declared?.file) {
        findings.push(finding('file-reference', template.path, ref.span, `Partial '${name}' is declared with the file ${declared.file}, which ${error ? `cannot be read (${error})` : 'does not exist'}.`));
      } else if (template.format === 'prompt' && !declared) {
        findings.push(
          finding(
            'unknown-partial',
            template.path,
            ref.span,
            `Partial '${name}' is not a file beside ${beside} (looked for ${tried.map(shown).join(', ')}): unless the application registers it in code (definePartial), dotprompt fails with "The partial ${name} could not be found". If it does, declare it under \`partials:\` in the context config, with its file if it has one; it is shown as a placeholder meanwhile.`,
          ),
        );
      } else if (!declared) {
        const what = ref.names.length > 1 ? `None of the included templates ${ref.names.map((n) => `'${shown(n)}'`).join(', ')} is found` : `Included template '${name}' not found`;
        findings.push(finding('file-reference', template.path, ref.span, `${what}${error ? ` (${error})` : ''}; looked for ${tried.map(shown).join(', ')} beside ${beside}.`));
      }
    }
  }
  return { sources, findings, dependencies };
}

/**
 * The template without the uses that are calls of a declared helper (`{{today}}` with `today`
 * registered in code is a helper call in dotprompt, not a variable): what the slot rules read.
 * Only a bare `{{name}}` is such a call, as Handlebars' tree tells (references.ts
 * bareMustachePaths); a name inside a block, as an argument or in a dotted path stays a value.
 * A body Handlebars refuses renders nothing: every use named like a declared helper is dropped
 * then, so a broken body adds no slot finding to its syntax error.
 */
export function withoutHelperCalls(template: TemplateDoc, registry: CodeRegistry): TemplateDoc {
  if (template.format !== 'prompt' || !registry.helpers.length) return template;
  const bare = bareMustachePaths(template);
  const call = (span: Span) => !bare || bare.has(`${span.start}:${span.end}`);
  const uses = template.uses.filter((u) => !(u.form === 'var' && registry.helpers.includes(u.slot) && call(u.span)));
  return uses.length === template.uses.length ? template : { ...template, uses };
}
