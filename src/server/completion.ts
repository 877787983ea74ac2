/**
 * Completion: slot names inside `{{ }}` / `{% %}` in templates; keys and enum values in
 * `*.context.yaml` from the JSON Schema generated from the zod schema (block and flow style);
 * slot names under `slots:` in fixtures. The YAML position is found from indentation and the
 * current line, which is robust while the file is half-typed and does not parse.
 */
import { CompletionItemKind, InsertTextFormat } from 'vscode-languageserver';
import type { CompletionItem } from 'vscode-languageserver';
import type { Analysis, TemplateAnalysis } from '../core/analyze';
import { contextConfigJsonSchema } from '../core/config/schema';
import { RULES } from '../core/rules/registry';
import { num } from './format';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  items?: JsonSchema;
  description?: string;
  default?: unknown;
  $ref?: string;
  definitions?: Record<string, JsonSchema>;
  $defs?: Record<string, JsonSchema>;
};

let schemaCache: JsonSchema | undefined;
function rootSchema(): JsonSchema {
  return (schemaCache ??= contextConfigJsonSchema() as JsonSchema);
}

function deref(s: JsonSchema | undefined): JsonSchema | undefined {
  let cur = s;
  for (let i = 0; cur?.$ref && i < 10; i++) {
    const m = /^#\/(definitions|\$defs)\/(.+)$/.exec(cur.$ref);
    const root = rootSchema();
    cur = m ? (m[1] === 'definitions' ? root.definitions : root.$defs)?.[m[2]] : undefined;
  }
  return cur;
}

/** The alternatives of a schema (anyOf/oneOf), each dereferenced. */
function variants(s: JsonSchema | undefined): JsonSchema[] {
  const d = deref(s);
  if (!d) return [];
  const alts = d.anyOf ?? d.oneOf;
  return alts ? alts.flatMap(variants) : [d];
}

function child(s: JsonSchema | undefined, key: string): JsonSchema | undefined {
  for (const v of variants(s)) {
    if (v.properties?.[key]) return v.properties[key];
    if (typeof v.additionalProperties === 'object') return v.additionalProperties;
  }
  return undefined;
}

export function schemaAt(path: readonly string[]): JsonSchema | undefined {
  let s: JsonSchema | undefined = rootSchema();
  for (const seg of path) s = child(s, seg);
  return s;
}

/** Where the cursor is in a YAML file: the key path of the enclosing mapping, and whether a value is being typed. */
export interface YamlPosition {
  path: string[];
  /** The key whose value is being typed, when after `key:`. */
  key?: string;
  /** The partial word under the cursor. */
  word: string;
}

const KEY_LINE = /^(\s*)(?:-\s+)?["']?([A-Za-z0-9_$.-]+)["']?\s*:/;

/** Finds the YAML position at `offset` from indentation (block style) and braces (flow style on one line). */
export function yamlPosition(text: string, offset: number): YamlPosition | undefined {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const prefix = text.slice(lineStart, offset);
  if (/#/.test(prefix.replace(/(["'])(?:(?!\1).)*\1/g, ''))) return undefined;
  const indent = /^\s*/.exec(prefix)![0].length;
  // Parents: the nearest lines above with smaller indentation that hold a key.
  const parents: string[] = [];
  let want = indent;
  let pos = lineStart - 1;
  for (let guard = 0; pos > 0 && want > 0 && guard < 5000; guard++) {
    const ls = text.lastIndexOf('\n', pos - 1) + 1;
    const line = text.slice(ls, pos);
    pos = ls - 1;
    if (!line.trim() || line.trimStart().startsWith('#')) continue;
    const m = KEY_LINE.exec(line);
    const ind = /^\s*/.exec(line)![0].length;
    if (m && ind < want) {
      parents.unshift(m[2]);
      want = ind;
    } else if (!m && ind < want) break;
  }
  // Flow mapping on this line: `evidence: { kind: evi|`.
  const flow = /^\s*(?:-\s+)?["']?([A-Za-z0-9_$.-]+)["']?\s*:\s*\{([^}]*)$/.exec(prefix);
  if (flow) {
    const inner = flow[2].split(',').pop() ?? '';
    const kv = /^\s*([A-Za-z0-9_$.-]+)\s*:\s*(\S*)$/.exec(inner);
    if (kv) return { path: [...parents, flow[1]], key: kv[1], word: kv[2] };
    return { path: [...parents, flow[1]], word: inner.trim() };
  }
  const kv = /^\s*(?:-\s+)?["']?([A-Za-z0-9_$.-]+)["']?\s*:\s*(\S*)$/.exec(prefix);
  if (kv) return { path: parents, key: kv[1], word: kv[2] };
  const k = /^\s*(?:-\s+)?([A-Za-z0-9_$.-]*)$/.exec(prefix);
  if (k) return { path: parents, word: k[1] };
  return undefined;
}

function enumValues(s: JsonSchema | undefined): Array<{ value: string; description?: string }> {
  const out: Array<{ value: string; description?: string }> = [];
  for (const v of variants(s)) {
    for (const e of v.enum ?? []) out.push({ value: String(e), description: v.description ?? deref(s)?.description });
    if (v.const !== undefined) out.push({ value: String(v.const) });
    if (v.type === 'boolean') out.push({ value: 'true' }, { value: 'false' });
  }
  return out;
}

export interface ConfigCompletionExtras {
  models: string[];
  tokenizers: string[];
}

export function configCompletions(text: string, offset: number, extras: ConfigCompletionExtras, keys: boolean): CompletionItem[] {
  const p = yamlPosition(text, offset);
  if (!p) return [];
  if (p.key !== undefined) {
    if (p.path.length === 0 && p.key === 'model') return extras.models.map((m) => ({ label: m, kind: CompletionItemKind.Value, detail: 'model' }));
    if (p.path.length === 0 && p.key === 'tokenizer') return extras.tokenizers.map((t) => ({ label: t, kind: CompletionItemKind.Value, detail: 'tokenizer' }));
    const s = schemaAt([...p.path, p.key]);
    return enumValues(s).map((e) => ({ label: e.value, kind: CompletionItemKind.EnumMember, documentation: e.description }));
  }
  if (!keys) return [];
  if (p.path.length === 1 && p.path[0] === 'rules') {
    return RULES.map((r) => ({ label: r.id, kind: CompletionItemKind.Property, detail: `default ${r.severity}`, documentation: r.description, insertText: `${r.id}: ` }));
  }
  const s = schemaAt(p.path);
  const out: CompletionItem[] = [];
  for (const v of variants(s)) {
    for (const [key, prop] of Object.entries(v.properties ?? {})) {
      if (key === '$schema') continue;
      const d = deref(prop);
      out.push({ label: key, kind: CompletionItemKind.Property, documentation: d?.description, insertText: `${key}: `, insertTextFormat: InsertTextFormat.PlainText });
    }
  }
  return out;
}

function slotItems(a: TemplateAnalysis): CompletionItem[] {
  const seen = new Set<string>();
  const out: CompletionItem[] = [];
  const add = (name: string, detail: string, doc?: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    out.push({ label: name, kind: CompletionItemKind.Variable, detail, documentation: doc });
  };
  for (const s of a.slots) {
    const budget = s.budget !== undefined ? `${num(s.budget)} tok` : 'no budget';
    add(s.name, `${s.kind} · ${s.trust ?? 'trust?'} · ${budget}`);
  }
  for (const name of Object.keys(a.config?.doc.config?.slots ?? {})) add(name, 'slot from the context config');
  for (const name of Object.keys(a.template.frontMatter?.inputs ?? {})) add(name, 'declared input');
  return out;
}

/** Slot names when the cursor is inside `{{ … }}` or `{% … %}` of a template. */
export function templateCompletions(a: TemplateAnalysis, text: string, offset: number): CompletionItem[] {
  const open = Math.max(text.lastIndexOf('{{', offset), text.lastIndexOf('{%', offset));
  if (open < 0 || offset - open > 200) return [];
  const inside = text.slice(open, offset);
  if (/\}\}|%\}/.test(inside)) return [];
  // `{{#each x`, `{{ x`, `{% for d in x`, `{% if x`: the word being typed is the slot.
  if (!/^(\{\{[#^/]?\s*(each|if|unless|with)?\s*|\{%-?\s*(for\s+\w+\s+in|if|elif)\s+|\{\{-?\s*)[\w.]*$/.test(inside)) return [];
  return slotItems(a);
}

/** Slot names under `slots:` of a fixture, from its template. */
export function fixtureCompletions(a: Analysis, text: string, offset: number): CompletionItem[] {
  if (a.kind !== 'fixture' || !a.template) return [];
  const p = yamlPosition(text, offset);
  if (!p || p.key !== undefined || p.path.length !== 1 || p.path[0] !== 'slots') return [];
  return a.template.slots
    .filter((s) => !(s.name in a.doc.slots))
    .map((s) => ({ label: s.name, kind: CompletionItemKind.Field, detail: `${s.kind} · ${s.trust ?? 'trust?'}`, insertText: `${s.name}: ` }));
}
