/**
 * Layout-preserving edits of a context config: set `slots.<name>.budget` for some slots (the
 * preview's "Apply to config" of what-if budgets) by replacing exactly the YAML value node that
 * holds the budget, or, when the key is missing, inserting it into the mapping that should hold
 * it, in that mapping's own style (a `, budget: N` before the `}` of a flow mapping, a line at the
 * column of its keys in a block mapping). Positions come from the source ranges of the `yaml`
 * package's nodes, so comments, alignment, quoting and every other byte stay as written.
 *
 * Every result is checked by parsing the edited text again with the config parser: an edit that
 * would not read back as the budgets asked for, or that adds a YAML error, is refused with a
 * reason instead of being returned. Works on a `*.context.yaml` text, or on a template whose front
 * matter holds the config inline (`context:` mapping).
 */
import { isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { Pair, YAMLMap } from 'yaml';
import { frontMatterYaml } from '../language/frontMatter';
import { parseYaml } from '../text/yaml';
import type { YamlSource } from '../text/yaml';
import type { Span } from '../types';
import { parseConfig, parseInlineConfig } from './parse';

export interface TextEdit {
  span: Span;
  newText: string;
}

/** The edits (against the original text) and the text they give, or why there is no safe edit. */
export type ConfigEditResult = { edits: TextEdit[]; text: string; error?: undefined } | { edits?: undefined; error: string; span?: Span };

/** Largest budget written: far above any model's window, small enough to stay an exact integer. */
export const MAX_BUDGET = 100_000_000;

class EditError extends Error {
  constructor(
    message: string,
    readonly span?: Span,
  ) {
    super(message);
  }
}

/** Applies non-overlapping edits given against one text (in any order). Throws on overlaps. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
  let out = '';
  let at = 0;
  for (const e of sorted) {
    if (e.span.start < at || e.span.end < e.span.start || e.span.end > text.length) throw new Error(`overlapping or out-of-range edit at ${e.span.start}`);
    out += text.slice(at, e.span.start) + e.newText;
    at = e.span.end;
  }
  return out + text.slice(at);
}

type Range3 = [number, number, number];

function rangeOf(node: unknown): Range3 | undefined {
  const r = (node as { range?: Range3 | null } | null | undefined)?.range;
  return r ?? undefined;
}

function keyOf(pair: Pair): string | undefined {
  const k = isScalar(pair.key) ? pair.key.value : pair.key;
  return k === null || k === undefined || typeof k === 'object' ? undefined : String(k);
}

/** One edit site of a walk: where to write (an offset pair in the YAML text) and what. */
interface Site {
  start: number;
  end: number;
  text: string;
}

/** Text of a value at `path` below a new key, in flow style: `{ budget: 400 }`, or the scalar itself. */
function flowValue(path: readonly string[], scalar: string): string {
  let v = scalar;
  for (let i = path.length - 1; i >= 0; i--) v = `{ ${path[i]}: ${v} }`;
  return v;
}

/** A plain YAML key when it needs no quotes, else a double-quoted one. */
function yamlKey(k: string): string {
  return /^[A-Za-z_][\w-]*$/.test(k) ? k : JSON.stringify(k);
}

class Editor {
  readonly eol: string;

  constructor(
    private readonly src: YamlSource,
    /** Name of the file, for messages. */
    private readonly what: string,
  ) {
    this.eol = src.text.includes('\r\n') ? '\r\n' : '\n';
  }

  private span(node: unknown): Span | undefined {
    const r = rangeOf(node);
    return r ? { start: this.src.base + r[0], end: this.src.base + r[1] } : undefined;
  }

  private lineStart(offset: number): number {
    return this.src.text.lastIndexOf('\n', offset - 1) + 1;
  }

  /** End of the line holding `offset`, before its line break. */
  private lineEnd(offset: number): number {
    const t = this.src.text;
    const nl = t.indexOf('\n', offset);
    if (nl < 0) return t.length;
    return nl > 0 && t[nl - 1] === '\r' ? nl - 1 : nl;
  }

  private trimBack(offset: number, floor: number): number {
    let i = offset;
    while (i > floor && /\s/.test(this.src.text[i - 1])) i--;
    return i;
  }

  /** Where `segments` (below `map`, reached by `done`) gets `scalar`. */
  set(map: YAMLMap, done: readonly string[], segments: readonly string[], scalar: string): Site {
    const [key, ...rest] = segments;
    const pair = map.items.find((p) => keyOf(p) === key);
    const at = [...done, key].join('.');
    if (!pair) return this.insert(map, key, rest, scalar);
    const value = pair.value;
    if (isAlias(value)) throw new EditError(`${at} is written as an alias (*${value.source}) in ${this.what}: change it there by hand`, this.span(value));
    const r = rangeOf(value);
    const empty = value === null || value === undefined || (isScalar(value) && (value.value === null || value.value === undefined) && (!r || r[0] === r[1]));
    if (rest.length === 0) {
      if (empty) return this.afterColon(pair, ` ${scalar}`);
      if (!isScalar(value) || !r) throw new EditError(`${at} in ${this.what} is not a single value`, this.span(value));
      return { start: r[0], end: r[1], text: scalar };
    }
    if (empty) return this.afterColon(pair, ` ${flowValue(rest, scalar)}`);
    if (isMap(value)) return this.set(value, [...done, key], rest, scalar);
    throw new EditError(`${at} in ${this.what} is ${isSeq(value) ? 'a list' : 'a single value'}, not a mapping`, this.span(value));
  }

  /** After the `:` of a key whose value is empty (`budget:`), replacing any empty value range. */
  private afterColon(pair: Pair, text: string): Site {
    const k = rangeOf(pair.key);
    if (!k) throw new EditError(`cannot locate a key in ${this.what}`);
    const colon = this.src.text.indexOf(':', k[1]);
    if (colon < 0 || colon >= this.lineEnd(k[1])) throw new EditError(`cannot find the ':' after a key in ${this.what}`, this.span(pair.key));
    return { start: colon + 1, end: colon + 1, text };
  }

  /** Inserts `key: value` into `map`, in its style. */
  private insert(map: YAMLMap, key: string, rest: readonly string[], scalar: string): Site {
    const t = this.src.text;
    const r = rangeOf(map);
    if (!r) throw new EditError(`cannot locate a mapping in ${this.what}`);
    const entryKey = yamlKey(key);
    if (map.flow) {
      const entry = `${entryKey}: ${flowValue(rest, scalar)}`;
      const last = map.items[map.items.length - 1];
      if (!last) {
        // `{}` or `{ }`: right after the brace.
        const open = t.indexOf('{', r[0]);
        if (open < 0) throw new EditError(`cannot find the '{' of a mapping in ${this.what}`, this.span(map));
        return { start: open + 1, end: open + 1, text: ` ${entry} ` };
      }
      // Right after the last entry's value: before any trailing comma, comment or line break.
      const end = rangeOf(last.value)?.[1] ?? rangeOf(last.key)?.[1];
      if (end === undefined) throw new EditError(`cannot locate an entry in ${this.what}`, this.span(map));
      return { start: end, end, text: `, ${entry}` };
    }
    const first = map.items[0];
    const firstKey = first ? rangeOf(first.key) : undefined;
    if (!first || !firstKey) throw new EditError(`cannot locate the keys of a mapping in ${this.what}`, this.span(map));
    const column = firstKey[0] - this.lineStart(firstKey[0]);
    const indent = ' '.repeat(column);
    let value = ` ${scalar}`;
    // Nested keys as block lines, two spaces deeper each: `slots:\n  evidence:\n    budget: 400`.
    if (rest.length) value = rest.map((k, i) => `${this.eol}${' '.repeat(column + 2 * (i + 1))}${yamlKey(k)}:`).join('') + ` ${scalar}`;
    // After the last entry's line (comments on it stay on it), at the column of the first key.
    const lastEnd = this.trimBack(r[1], r[0]);
    const at = this.lineEnd(Math.max(r[0], lastEnd - 1));
    return { start: at, end: at, text: `${this.eol}${indent}${entryKey}:${value}` };
  }
}

/** The YAML region of the config inside `text`, and its root mapping. */
function configRoot(text: string, inline: boolean, what: string): { src: YamlSource; root: YAMLMap; done: string[] } | { error: string; span?: Span } {
  let src: YamlSource;
  if (inline) {
    const fm = frontMatterYaml(text);
    if (!fm) return { error: `${what} has no front matter to hold the config` };
    src = fm;
  } else {
    src = parseYaml(text);
  }
  const err = src.doc.errors[0];
  if (err) return { error: `${what} has YAML errors (${err.message}): fix them first`, span: { start: src.base + err.pos[0], end: src.base + err.pos[1] } };
  let root: unknown = src.doc.contents;
  const done: string[] = [];
  if (inline) {
    const ctx = isMap(root) ? root.items.find((p) => keyOf(p) === 'context') : undefined;
    root = ctx?.value;
    done.push('context');
  }
  if (!isMap(root)) return { error: `the config in ${what} is not a YAML mapping` };
  return { src, root, done };
}

/**
 * Edits that set `slots.<name>.budget: <n>` for each entry of `budgets` in the config text of
 * `path` (a `*.context.yaml`, or with `inline` a template with a `context:` mapping in its front
 * matter). Budgets are whole token counts, 0 … MAX_BUDGET.
 */
export function slotBudgetEdits(path: string, text: string, budgets: Readonly<Record<string, number>>, options: { inline?: boolean } = {}): ConfigEditResult {
  const what = path.slice(path.lastIndexOf('/') + 1);
  const names = Object.keys(budgets);
  if (names.length === 0) return { error: 'no budgets to write' };
  for (const n of names) {
    const v = budgets[n];
    if (!Number.isSafeInteger(v) || v < 0 || v > MAX_BUDGET) return { error: `the budget of '${n}' must be a whole number of tokens from 0 to ${MAX_BUDGET.toLocaleString('en-US')}` };
  }
  const found = configRoot(text, options.inline === true, what);
  if ('error' in found) return found;
  const editor = new Editor(found.src, what);
  const sites: Site[] = [];
  try {
    for (const n of names) sites.push(editor.set(found.root, found.done, ['slots', n, 'budget'], String(budgets[n])));
  } catch (e) {
    if (e instanceof EditError) return { error: e.message, ...(e.span ? { span: e.span } : {}) };
    throw e;
  }
  // Two new keys inserted at one place (two slots added to one mapping) become one edit, in order.
  const byStart = new Map<string, Site>();
  for (const s of sites) {
    const k = `${s.start}:${s.end}`;
    const prev = byStart.get(k);
    if (prev && s.start === s.end) prev.text += s.text;
    else if (prev) return { error: `two budgets would change the same text in ${what}` };
    else byStart.set(k, { ...s });
  }
  const base = found.src.base;
  const edits: TextEdit[] = [...byStart.values()].sort((a, b) => a.start - b.start).map((s) => ({ span: { start: base + s.start, end: base + s.end }, newText: s.text }));
  let next: string;
  try {
    next = applyTextEdits(text, edits);
  } catch {
    return { error: `the budgets would change overlapping text in ${what}` };
  }
  // Read the result back: the budgets must be what was asked, and no new YAML problem may appear.
  const parse = (t: string) => (options.inline ? parseInlineConfig(path, t) : parseConfig(path, t));
  const before = parse(text);
  const after = parse(next);
  const errors = (d: typeof before): number => d.findings.filter((f) => f.severity === 'error').length;
  if (errors(after) > errors(before)) return { error: `writing the budgets would make ${what} invalid (${after.findings.find((f) => f.severity === 'error')?.message ?? 'config-invalid'})` };
  for (const n of names) {
    const got = after.config?.slots?.[n]?.budget;
    if (got !== budgets[n]) return { error: `slot '${n}' is not a slot entry of ${what} that a budget can be written to` };
  }
  return { edits, text: next };
}

/**
 * The edit that sets `slots.<slot>.<field>` to the YAML scalar `scalar` (a quick fix's `trust:
 * untrusted` or `label: EVIDENCE`), in the style of the mapping that holds it, checked by reading
 * the result back: the field must then hold `expected` and no YAML error may be added.
 */
export function slotFieldEdit(path: string, text: string, slot: string, field: string, scalar: string, expected: unknown, options: { inline?: boolean } = {}): ConfigEditResult {
  const what = path.slice(path.lastIndexOf('/') + 1);
  const found = configRoot(text, options.inline === true, what);
  if ('error' in found) return found;
  let site: Site;
  try {
    site = new Editor(found.src, what).set(found.root, found.done, ['slots', slot, field], scalar);
  } catch (e) {
    if (e instanceof EditError) return { error: e.message, ...(e.span ? { span: e.span } : {}) };
    throw e;
  }
  const edits: TextEdit[] = [{ span: { start: found.src.base + site.start, end: found.src.base + site.end }, newText: site.text }];
  const next = applyTextEdits(text, edits);
  const parse = (t: string) => (options.inline ? parseInlineConfig(path, t) : parseConfig(path, t));
  const errors = (d: ReturnType<typeof parse>): number => d.findings.filter((f) => f.severity === 'error').length;
  const before = parse(text);
  const after = parse(next);
  if (errors(after) > errors(before)) return { error: `setting ${field} would make ${what} invalid` };
  if ((after.config?.slots?.[slot] as Record<string, unknown> | undefined)?.[field] !== expected) return { error: `slot '${slot}' is not a slot entry of ${what} that ${field} can be written to` };
  return { edits, text: next };
}
