/**
 * Tool definitions of a tool slot (seed 000, 3.5): function definitions `{ name, description,
 * parameters }` with JSON Schema parameters, also in OpenAI's `{ type: "function", function: {…} }`
 * and Anthropic's `{ name, input_schema }` shapes; one definition or a list of them, inline in the
 * fixture (YAML), as JSON text, or in a `{ file }` such as tools/refund-tools.json. Each is read
 * with the location of every node, so a problem is reported at the exact node: in the JSON file
 * for a file reference, in the fixture for inline YAML.
 *
 * `tool-schema-invalid` (error): a definition without a valid name, a description that is not a
 * string, parameters that are not an object schema or not valid JSON Schema (schema.ts), two
 * definitions with one name.
 */
import type { Finding, FixtureDoc, FixtureValue, Span, ToolDefinitionInfo } from '../types';
import type { YamlSource } from '../text/yaml';
import type { JsonPath } from './schema';
import { findAt, nodeSpan, parseYaml, toJs } from '../text/yaml';
import { finding } from '../rules/registry';
import { schemaProblems } from './schema';

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The names every provider accepts: [a-zA-Z0-9_-], a letter or _ first, up to 64. */
export const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export interface ToolEntry {
  slot: string;
  name?: string;
  /** Path of the function object inside the entry (`['function']` for the OpenAI shape). */
  fnPath: JsonPath;
  /** The key its parameters are under (`parameters` or `input_schema`). */
  paramsKey: string;
  /** The definition as the provider takes it, when it is structurally valid. */
  def?: ToolDefinitionInfo;
  raw: unknown;
  /** Where a node of this entry is (path relative to the entry). */
  at(path: JsonPath): { path: string; span: Span };
}

export interface ToolSlotRead {
  /** True when the content is tool definitions (by the slot's `tool:` setting, or its shape). */
  definitions: boolean;
  entries: ToolEntry[];
  /** Index of the fixture item each entry came from (0 for a text or data value). */
  itemOf: number[];
}

/** A value looks like definitions: an object (or list of objects) with a function shape. */
export function looksLikeDefinitions(v: unknown): boolean {
  const one = (x: unknown) => isRecord(x) && ((x.type === 'function' && isRecord(x.function)) || (typeof x.name === 'string' && ('parameters' in x || 'input_schema' in x || 'description' in x)));
  return Array.isArray(v) ? v.length > 0 && v.every(one) : one(v);
}

const fixtureYaml = new WeakMap<FixtureDoc, YamlSource>();

interface Source {
  value: unknown;
  at(path: JsonPath): { path: string; span: Span };
}

/** JSON (or YAML) text with locations: in its file, or the whole `fallback` span when it is inline. */
function textSource(text: string, file: string | undefined, fixturePath: string, fallback: Span): Source | undefined {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  const src = parseYaml(text);
  if (src.doc.errors.length) return undefined;
  const value = toJs(src, src.doc.contents);
  return {
    value,
    at: (path) => {
      if (file === undefined) return { path: fixturePath, span: fallback };
      for (let n = path.length; n >= 0; n--) {
        const hit = findAt(src, path.slice(0, n));
        const span = nodeSpan(src, hit.node) ?? (hit.pair ? nodeSpan(src, hit.pair.key) : undefined);
        if (span) return { path: file, span };
      }
      return { path: file, span: { start: 0, end: 0 } };
    },
  };
}

/** True when some text of the value is JSON that has no function shape (so the slot holds results). */
function plainlyNotDefinitions(value: FixtureValue): boolean {
  const texts = value.type === 'text' ? [value.text] : value.type === 'items' ? value.items.map((i) => i.text) : [];
  for (const text of texts) {
    const t = text.trim();
    if (!t.startsWith('{') && !t.startsWith('[')) continue; // not a source: readToolSlot skips it too
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      continue; // YAML flow text, or broken: the located parse decides
    }
    if (!looksLikeDefinitions(v)) return true;
  }
  return false;
}

/** Reads a tool slot's value. */
export function readToolSlot(slot: string, value: FixtureValue, fixture: FixtureDoc, setting: 'definitions' | 'results' | undefined): ToolSlotRead {
  // Tool results (declared, or a JSON text without a function shape) are not parsed with locations:
  // the service sees one per request, and a located YAML parse costs far more than JSON.parse.
  if (setting === 'results' || (setting === undefined && plainlyNotDefinitions(value))) return { definitions: false, entries: [], itemOf: [] };
  const sources: Array<{ src: Source; item: number }> = [];
  if (value.type === 'text') {
    const s = textSource(value.text, value.file, fixture.path, value.span);
    if (s) sources.push({ src: s, item: 0 });
  } else if (value.type === 'items') {
    for (const it of value.items) {
      const s = textSource(it.text, it.file, fixture.path, it.textSpan);
      if (s) sources.push({ src: s, item: it.index });
    }
  } else if (value.type === 'data') {
    let y = fixtureYaml.get(fixture);
    if (!y) fixtureYaml.set(fixture, (y = parseYaml(fixture.text)));
    const src = y;
    const base = findAt(src, ['slots', slot]).node;
    sources.push({
      item: 0,
      src: {
        value: value.value,
        at: (path) => {
          for (let n = path.length; n >= 0; n--) {
            const hit = findAt(src, path.slice(0, n), base);
            const span = nodeSpan(src, hit.node) ?? (hit.pair ? nodeSpan(src, hit.pair.key) : undefined);
            if (span) return { path: fixture.path, span };
          }
          return { path: fixture.path, span: value.span };
        },
      },
    });
  }
  const definitions = setting === 'definitions' || (setting === undefined && sources.length > 0 && sources.every((s) => looksLikeDefinitions(s.src.value)));
  const entries: ToolEntry[] = [];
  const itemOf: number[] = [];
  if (!definitions) return { definitions, entries, itemOf };
  for (const { src, item } of sources) {
    const list = Array.isArray(src.value) ? src.value.map((v, i) => ({ v, base: [i] as JsonPath })) : [{ v: src.value, base: [] as JsonPath }];
    for (const { v, base } of list) {
      const fnPath: JsonPath = isRecord(v) && v.type === 'function' && isRecord(v.function) ? ['function'] : [];
      const fn = fnPath.length ? (v as Record<string, unknown>).function : v;
      const paramsKey = isRecord(fn) && fn.parameters === undefined && fn.input_schema !== undefined ? 'input_schema' : 'parameters';
      entries.push({ slot, name: isRecord(fn) && typeof fn.name === 'string' ? fn.name : undefined, fnPath, paramsKey, raw: v, at: (p) => src.at([...base, ...p]) });
      itemOf.push(item);
    }
  }
  return { definitions, entries, itemOf };
}

/** `tool-schema-invalid` findings; sets `def` on the entries that are valid. */
export function validateTools(entries: readonly ToolEntry[]): Finding[] {
  const out: Finding[] = [];
  const names = new Map<string, ToolEntry>();
  const report = (e: ToolEntry, path: JsonPath, message: string) => {
    const loc = e.at(path);
    out.push(finding('tool-schema-invalid', loc.path, loc.span, message));
  };
  for (const e of entries) {
    const fn = e.fnPath.length ? (e.raw as Record<string, unknown>).function : e.raw;
    const label = e.name !== undefined ? `Tool '${e.name}'` : `A tool definition in '${e.slot}'`;
    if (!isRecord(fn)) {
      report(e, [], `${label} is not an object { name, description, parameters }.`);
      continue;
    }
    let ok = true;
    if (typeof fn.name !== 'string' || !TOOL_NAME.test(fn.name)) {
      report(e, [...e.fnPath, 'name'], `${label} needs a name of letters, digits, _ and - (a letter or _ first, at most 64), as every provider requires; got ${fn.name === undefined ? 'none' : JSON.stringify(fn.name)}.`);
      ok = false;
    } else if (names.has(fn.name)) {
      report(e, [...e.fnPath, 'name'], `Tool '${fn.name}' is defined twice in '${e.slot}'; the model would see two tools of one name.`);
      ok = false;
    }
    if (fn.description !== undefined && typeof fn.description !== 'string') {
      report(e, [...e.fnPath, 'description'], `${label}: description must be a string.`);
      ok = false;
    }
    const params = fn[e.paramsKey];
    if (params !== undefined) {
      if (!isRecord(params)) {
        report(e, [...e.fnPath, e.paramsKey], `${label}: ${e.paramsKey} must be a JSON Schema object, such as { type: object, properties: { … } }.`);
        ok = false;
      } else {
        const wrongType = params.type !== undefined && params.type !== 'object';
        if (wrongType) {
          report(e, [...e.fnPath, e.paramsKey, 'type'], `${label}: ${e.paramsKey} must describe an object (type: object), got type: ${JSON.stringify(params.type)}; providers pass arguments as one object.`);
          ok = false;
        }
        for (const p of schemaProblems(params)) {
          // The root's type has its finding above: one mistake, one finding.
          if (wrongType && p.path.length === 1 && p.path[0] === 'type') continue;
          report(e, [...e.fnPath, e.paramsKey, ...p.path], `${label}: ${e.paramsKey} is not valid JSON Schema: ${p.message}.`);
          ok = false;
        }
      }
    }
    if (typeof fn.name === 'string' && !names.has(fn.name)) names.set(fn.name, e);
    if (ok) {
      const def = { name: fn.name as string } as ToolDefinitionInfo;
      if (typeof fn.description === 'string') def.description = fn.description;
      def.parameters = isRecord(params) ? params : { type: 'object', properties: {} };
      const strict = fn.strict ?? (isRecord(e.raw) ? e.raw.strict : undefined);
      if (typeof strict === 'boolean') def.strict = strict;
      e.def = def;
    }
  }
  return out;
}
