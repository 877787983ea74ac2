/**
 * The tool allowlist (seed 000, 3.5: "A tool allowlist lists tools permitted for the current
 * identity and task, together with their allowed argument formats"): `tools: { allow: [...] }` in
 * the context config, each entry a tool name or `{ name, arguments: { <argument>: { <JSON Schema
 * keywords> } } }`. `tool-not-allowed` (error) when the fixture's tool slots or the template's
 * front matter offer a tool outside it, or a listed tool whose arguments are not in the allowed
 * formats: an argument the entry does not list, or one whose schema does not declare a keyword of
 * the allowed format with the same value (a `pattern`, an `enum`, a `maximum`). Being on the list
 * does not authorize every use of a tool; the application still checks each call.
 */
import type { ToolAllow } from '../config/schema';
import type { Finding, Span, TemplateDoc } from '../types';
import type { ToolEntry } from './definitions';
import { finding } from '../rules/registry';
import { findAt, nodeSpan } from '../text/yaml';

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface Allowlist {
  names: string[];
  formats: Map<string, Record<string, Record<string, unknown>> | undefined>;
}

export function allowlistOf(allow: readonly ToolAllow[] | undefined): Allowlist | undefined {
  if (!allow) return undefined;
  const formats = new Map<string, Record<string, Record<string, unknown>> | undefined>();
  for (const a of allow) {
    if (typeof a === 'string') formats.set(a, formats.get(a));
    else formats.set(a.name, a.arguments);
  }
  return { names: [...formats.keys()], formats };
}

/** JSON equality of plain values (key order does not matter). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return false;
}

/**
 * `tool-not-allowed` for the definitions of a tool slot; returns the valid ones that are allowed.
 * A definition that is not valid (tool-schema-invalid) but names a tool outside the list is
 * reported too: fixing its schema must not be what reveals that the tool may not be offered.
 */
export function checkAllowed(entries: readonly ToolEntry[], list: Allowlist): { findings: Finding[]; allowed: Set<ToolEntry> } {
  const findings: Finding[] = [];
  const allowed = new Set<ToolEntry>();
  const shown = list.names.length ? list.names.join(', ') : 'none';
  for (const e of entries) {
    if (!e.def) {
      if (typeof e.name === 'string' && e.name !== '' && !list.formats.has(e.name)) {
        const loc = e.at([...e.fnPath, 'name']);
        findings.push(finding('tool-not-allowed', loc.path, loc.span, `Tool '${e.name}' in '${e.slot}' is not on the config's allowlist (tools.allow: ${shown}); the model would be offered a tool this request may not use.`));
      }
      continue;
    }
    const name = e.def.name;
    if (!list.formats.has(name)) {
      const loc = e.at([...e.fnPath, 'name']);
      findings.push(finding('tool-not-allowed', loc.path, loc.span, `Tool '${name}' in '${e.slot}' is not on the config's allowlist (tools.allow: ${shown}); the model would be offered a tool this request may not use.`));
      continue;
    }
    const formats = list.formats.get(name);
    let ok = true;
    if (formats) {
      const props = isRecord(e.def.parameters.properties) ? (e.def.parameters.properties as Record<string, unknown>) : {};
      for (const arg of Object.keys(props)) {
        if (Object.prototype.hasOwnProperty.call(formats, arg)) continue;
        const loc = e.at([...e.fnPath, e.paramsKey, 'properties', arg]);
        findings.push(finding('tool-not-allowed', loc.path, loc.span, `Argument '${arg}' of tool '${name}' is not in the allowlist's formats (allowed: ${Object.keys(formats).join(', ') || 'none'}).`));
        ok = false;
      }
      for (const [arg, format] of Object.entries(formats)) {
        const prop = props[arg];
        if (!isRecord(prop)) continue;
        for (const [kw, want] of Object.entries(format)) {
          if (same(prop[kw], want)) continue;
          const loc = e.at([...e.fnPath, e.paramsKey, 'properties', arg]);
          findings.push(finding('tool-not-allowed', loc.path, loc.span, `Argument '${arg}' of tool '${name}' must declare ${kw}: ${JSON.stringify(want)}, the allowlist's format; the definition has ${prop[kw] === undefined ? 'none' : JSON.stringify(prop[kw])}.`));
          ok = false;
        }
      }
    }
    if (ok) allowed.add(e);
  }
  return { findings, allowed };
}

/** Tools the template's front matter offers: dotprompt `tools: [name]`, Prompty `model.parameters.tools`. */
export function templateTools(template: TemplateDoc): Array<{ name: string; span: Span }> {
  const data = template.frontMatter?.data;
  if (!data) return [];
  // The template parser's tree of the front matter (parsed once, with its source ranges).
  const src = template.frontMatter?.yaml;
  if (!src) return [];
  const out: Array<{ name: string; span: Span }> = [];
  for (const path of [['tools'], ['model', 'parameters', 'tools']]) {
    const node = findAt(src, path).node as { items?: unknown[] } | undefined;
    const list = path.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), data);
    if (!Array.isArray(list)) continue;
    list.forEach((t, i) => {
      const fn = isRecord(t) && isRecord(t.function) ? t.function : t;
      const name = typeof fn === 'string' ? fn : isRecord(fn) && typeof fn.name === 'string' ? fn.name : undefined;
      if (name === undefined) return;
      const span = nodeSpan(src, node?.items?.[i]) ?? template.frontMatter!.span;
      out.push({ name, span });
    });
  }
  return out;
}

/** `tool-not-allowed` for tools the template offers outside the allowlist. */
export function checkTemplateTools(template: TemplateDoc, list: Allowlist): Finding[] {
  const shown = list.names.length ? list.names.join(', ') : 'none';
  return templateTools(template)
    .filter((t) => !list.formats.has(t.name))
    .map((t) => finding('tool-not-allowed', template.path, t.span, `The template offers tool '${t.name}', which is not on the config's allowlist (tools.allow: ${shown}).`));
}
