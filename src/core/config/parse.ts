/**
 * Parses a context config (`*.context.yaml`, or the inline `context:` mapping of a template's
 * front matter) into a validated ConfigDoc. Best effort by design: YAML syntax errors and schema
 * errors become `config-invalid` findings at the exact YAML node (the key for an unknown key, the
 * value for a wrong value), the offending field is dropped, and the rest is validated again so
 * defaults still apply and the other slots can still be checked.
 *
 * Also here: checks that need no other file (a percentage over 100%, unknown rule ids in `rules`).
 */
import { isMap, isScalar } from 'yaml';
import type { ZodType } from 'zod';
import { RULES, finding, ruleInfo } from '../rules/registry';
import { redactPieces, redactSecrets, secretsOf } from '../text/secrets';
import type { ConfigDoc, Finding, FixHint, Span } from '../types';
import { findAt, keySpanAt, nodeSpan, parseYaml, toJs, valueSpanAt, yamlFindings } from '../text/yaml';
import type { YamlPath, YamlSource } from '../text/yaml';
import { readYamlFast } from '../text/yamlFast';
import { frontMatterYaml } from '../language/frontMatter';
import { ContextConfigSchema } from './schema';
import type { ContextConfig } from './schema';

// ---------------------------------------------------------------------------
// Suggestions ("did you mean")
// ---------------------------------------------------------------------------

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** Words longer than this are never typos of a known word (and edit distance is quadratic). */
const MAX_SUGGEST_LENGTH = 64;

/**
 * The closest known word, when it is close enough to be a likely typo. Bounded work for any
 * input: long words are not compared, and a word whose length alone puts it out of reach of a
 * known word is not compared with it.
 */
export function suggest(word: string, known: readonly string[]): string | undefined {
  if (word.length > MAX_SUGGEST_LENGTH) return undefined;
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    if (k.length > MAX_SUGGEST_LENGTH || Math.abs(k.length - w.length) > Math.max(1, Math.floor(k.length / 3))) continue;
    const d = editDistance(w, k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

// ---------------------------------------------------------------------------
// Schema introspection: which keys an object at a path accepts
// ---------------------------------------------------------------------------

interface ZodDefLike {
  type: string;
  shape?: Record<string, ZodType>;
  valueType?: ZodType;
  innerType?: ZodType;
  element?: ZodType;
  options?: ZodType[];
}

function defOf(s: ZodType): ZodDefLike {
  return (s as unknown as { _zod: { def: ZodDefLike } })._zod.def;
}

function unwrap(s: ZodType): ZodType {
  let cur = s;
  for (let k = 0; k < 10; k++) {
    const d = defOf(cur);
    if (d.innerType && (d.type === 'optional' || d.type === 'default' || d.type === 'nullable' || d.type === 'prefault')) cur = d.innerType;
    else break;
  }
  return cur;
}

function schemaAt(path: ReadonlyArray<PropertyKey>): ZodType | undefined {
  let cur: ZodType | undefined = ContextConfigSchema;
  for (const seg of path) {
    if (!cur) return undefined;
    const d = defOf(unwrap(cur));
    if (d.type === 'object' && d.shape) cur = d.shape[String(seg)];
    else if (d.type === 'record') cur = d.valueType;
    else if (d.type === 'array') cur = d.element;
    else return undefined;
  }
  return cur ? unwrap(cur) : undefined;
}

function knownKeys(path: ReadonlyArray<PropertyKey>): string[] {
  const s = schemaAt(path);
  const d = s ? defOf(s) : undefined;
  if (d?.type === 'object' && d.shape) return Object.keys(d.shape);
  // A union of a name and an object (`tools.allow`, `helpers`, `partials`): the object's keys.
  if (d?.type === 'union' && d.options) {
    const keys = new Set<string>();
    for (const o of d.options) {
      const od = defOf(unwrap(o));
      if (od.type === 'object' && od.shape) for (const k of Object.keys(od.shape)) keys.add(k);
    }
    return [...keys];
  }
  return [];
}

// ---------------------------------------------------------------------------
// Validation with pruning
// ---------------------------------------------------------------------------

const REMOVED = Symbol('removed');

function getAt(obj: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function markRemoved(obj: unknown, path: ReadonlyArray<PropertyKey>): boolean {
  if (path.length === 0) return false;
  const parent = getAt(obj, path.slice(0, -1));
  if (parent === null || typeof parent !== 'object') return false;
  (parent as Record<PropertyKey, unknown>)[path[path.length - 1]] = REMOVED;
  return true;
}

/** Drops every REMOVED marker: object keys are deleted, array elements filtered out. */
function sweep(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== REMOVED).map(sweep);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (o[k] === REMOVED) delete o[k];
      else o[k] = sweep(o[k]);
    }
  }
  return v;
}

/**
 * A user-written name as a message shows it: at most 40 characters, redacted before it is cut (a
 * secret cut short is no longer recognised, and most of it would be shown).
 */
function clip(text: string): string {
  const s = redactSecrets(text);
  return s.length > 40 ? `${s.slice(0, 37)}…` : s;
}

function dotted(path: ReadonlyArray<PropertyKey>): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : clip(String(p)))).join('.').replace(/\.\[/g, '[');
}

function show(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (typeof v === 'string') return `'${clip(v)}'`;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return String(v);
}

function typeWord(expected: string): string {
  switch (expected) {
    case 'object':
    case 'record':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'number':
    case 'int':
      return 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    default:
      return expected;
  }
}

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  keys?: string[];
  values?: unknown[];
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  /** What a size issue measured: 'number', or 'string' / 'array' (a length). */
  origin?: string;
}

const AMOUNT_KEYS = new Set(['budget', 'margin']);

class ConfigValidator {
  readonly findings: Finding[] = [];
  private readonly reported = new Set<string>();

  constructor(
    private readonly path: string,
    private readonly keySpan: (p: YamlPath) => Span | undefined,
    private readonly valueSpan: (p: YamlPath) => Span | undefined,
    private readonly fallback: Span,
    /** The config's text: messages quote keys and values as parsed, which can hold pieces of its secrets. */
    private readonly text = '',
  ) {}

  private secrets: string[] | undefined;

  private add(span: Span | undefined, message: string, fixes?: FixHint[]): void {
    const s = span ?? this.fallback;
    const key = `${s.start}:${s.end}:${message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.secrets ??= secretsOf(this.text);
    this.findings.push(finding('config-invalid', this.path, s, redactPieces(message, this.secrets), fixes ? { fixes } : {}));
  }

  private yamlPath(p: ReadonlyArray<PropertyKey>): YamlPath {
    return p.map((x) => (typeof x === 'number' ? x : String(x)));
  }

  /** Reports one zod issue at its node and marks what must be dropped for the next round. */
  issue(raw: unknown, is: Issue): void {
    const where = dotted(is.path);
    const at = this.yamlPath(is.path);
    switch (is.code) {
      case 'unrecognized_keys': {
        const known = knownKeys(is.path);
        for (const k of is.keys ?? []) {
          const keyPath = [...at, k];
          const near = suggest(k, known);
          const span = this.keySpan(keyPath);
          const fixes = near && span ? [{ title: `Rename to '${near}'`, edits: [{ path: this.path, span, newText: near }], preferred: true }] : undefined;
          const inWhat = where ? ` in ${where}` : '';
          this.add(span, `Unknown key '${clip(k)}'${inWhat}${near ? `: did you mean '${near}'?` : `; expected one of ${known.join(', ')}`}`, fixes);
          markRemoved(raw, [...is.path, k]);
        }
        return;
      }
      case 'invalid_type': {
        const value = getAt(raw, is.path);
        if (value === undefined) {
          // A required key is missing: point at the mapping that lacks it, then drop that mapping.
          const parent = is.path.slice(0, -1);
          const span = parent.length ? this.keySpan(this.yamlPath(parent)) : this.fallback;
          this.add(span, `${parent.length ? dotted(parent) : 'The config'} is missing the required key '${clip(String(is.path[is.path.length - 1]))}' (${typeWord(is.expected ?? '')}).`);
          if (!markRemoved(raw, parent)) markRemoved(raw, is.path);
          return;
        }
        this.add(this.valueSpan(at), `${where}: expected ${typeWord(is.expected ?? '')}, got ${show(value)}.`);
        markRemoved(raw, is.path);
        return;
      }
      case 'invalid_value': {
        const value = getAt(raw, is.path);
        const options = (is.values ?? []).map(String);
        const near = typeof value === 'string' ? suggest(value, options) : undefined;
        const span = this.valueSpan(at);
        const fixes = near && span ? [{ title: `Change to '${near}'`, edits: [{ path: this.path, span, newText: near }], preferred: true }] : undefined;
        this.add(span, `${where}: expected one of ${options.join(', ')}; got ${show(value)}${near ? ` (did you mean '${near}'?)` : ''}.`, fixes);
        markRemoved(raw, is.path);
        return;
      }
      case 'invalid_format':
      case 'invalid_union': {
        const value = getAt(raw, is.path);
        const last = String(is.path[is.path.length - 1] ?? '');
        const what = AMOUNT_KEYS.has(last) ? 'expected a token count or a percentage such as "25%"' : is.message;
        this.add(this.valueSpan(at), `${where}: ${what}; got ${show(value)}.`);
        markRemoved(raw, is.path);
        return;
      }
      case 'too_small':
      case 'too_big': {
        const value = getAt(raw, is.path);
        if (is.origin === 'string' || is.origin === 'array') {
          // A length bound: the schema's message says it in words ("a label is at most 64 characters").
          this.add(this.valueSpan(at), `${where}: ${is.message}; got ${show(value)}.`);
          markRemoved(raw, is.path);
          return;
        }
        const bound = is.code === 'too_small' ? is.minimum : is.maximum;
        const op = is.code === 'too_small' ? (is.inclusive ? '>=' : '>') : is.inclusive ? '<=' : '<';
        this.add(this.valueSpan(at), `${where}: must be ${op} ${String(bound)}; got ${show(value)}.`);
        markRemoved(raw, is.path);
        return;
      }
      default:
        this.add(this.valueSpan(at), `${where || 'config'}: ${is.message}.`);
        markRemoved(raw, is.path);
    }
  }

  /** Checks that need no other file. */
  semantic(config: ContextConfig): void {
    const pct = (v: unknown) => (typeof v === 'string' && v.endsWith('%') ? Number.parseFloat(v) : undefined);
    for (const [name, slot] of Object.entries(config.slots)) {
      const p = pct(slot.budget);
      if (p !== undefined && p > 100) {
        this.add(this.valueSpan(['slots', name, 'budget']), `slots.${clip(name)}.budget: ${String(slot.budget)} is more than the whole input budget (100%).`);
      }
    }
    const m = pct(config.margin);
    if (m !== undefined && m > 100) this.add(this.valueSpan(['margin']), `margin: ${String(config.margin)} is more than the whole window (100%).`);
    const ids = RULES.map((r) => r.id);
    for (const id of Object.keys(config.rules)) {
      if (ruleInfo(id)) continue;
      const near = suggest(id, ids);
      const span = this.keySpan(['rules', id]);
      const fixes = near && span ? [{ title: `Rename to '${near}'`, edits: [{ path: this.path, span, newText: near }], preferred: true }] : undefined;
      this.add(span, `rules: unknown rule '${clip(id)}'${near ? `: did you mean '${near}'?` : ''}`, fixes);
      delete config.rules[id];
    }
  }
}

function validate(raw: Record<string, unknown>, v: ConfigValidator): ContextConfig {
  let current: unknown = raw;
  // Each round drops what the previous one reported; nesting is shallow, so few rounds suffice.
  for (let round = 0; round < 12; round++) {
    const res = ContextConfigSchema.safeParse(current);
    if (res.success) {
      v.semantic(res.data);
      return res.data;
    }
    for (const is of res.error.issues) v.issue(current, is as unknown as Issue);
    current = sweep(current);
  }
  return ContextConfigSchema.parse({});
}

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

function buildDoc(path: string, text: string, src: YamlSource, root: unknown, findings: Finding[], fallback: Span): ConfigDoc {
  const keySpan = (p: YamlPath) => keySpanAt(src, p, root);
  const valueSpan = (p: YamlPath) => valueSpanAt(src, p, root);
  const doc: ConfigDoc = { path, text, keySpan, valueSpan, findings };
  const empty = root === null || root === undefined || (isScalar(root) && (root.value === null || root.value === ''));
  if (!empty && !isMap(root)) {
    findings.push(finding('config-invalid', path, nodeSpan(src, root) ?? fallback, 'A context config must be a YAML mapping with keys such as window:, output: and slots:.'));
    return doc;
  }
  const raw = empty ? {} : toJs(src, root);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    findings.push(finding('config-invalid', path, fallback, 'The config could not be read as a mapping (check anchors and aliases).'));
    return doc;
  }
  const v = new ConfigValidator(path, keySpan, valueSpan, nodeSpan(src, root) ?? fallback, src.text);
  doc.config = validate(raw as Record<string, unknown>, v);
  // Schema complaints about a document with syntax errors are mostly echoes of those errors
  // (a tab-indented block reads as null plus a stray key): report them once the YAML is fixed.
  if (src.doc.errors.length === 0) findings.push(...v.findings);
  findings.sort((a, b) => a.span.start - b.span.start);
  return doc;
}

/** Parses a `*.context.yaml` file. Never throws. */
export function parseConfig(path: string, text: string): ConfigDoc {
  // Configs are plain YAML: the fast reader builds the nodes yaml would (same ranges, so the same
  // spans); any other text, and every text with a syntax problem to report, goes to parseYaml.
  return configOf(path, text, readYamlFast(text) ?? parseYaml(text));
}

/** The config document of `text` read as `src` (exported for the test that compares both readers). */
export function configOf(path: string, text: string, src: YamlSource): ConfigDoc {
  const findings = yamlFindings('config-invalid', path, src);
  return buildDoc(path, text, src, src.doc.contents, findings, { start: 0, end: Math.min(text.length, 1) });
}

/**
 * Validates the inline config of a template (`context:` mapping in its front matter), with spans
 * into the template text and key/value paths relative to the `context:` mapping.
 *
 * `node` may be:
 * - undefined, or the Span of the `context:` value (as in `TemplateDoc.frontMatter.context.span`):
 *   the front matter of `text` is parsed again and its `context:` mapping is used;
 * - a `yaml` Node of that mapping, whose ranges are offsets into `text.slice(base)`.
 *
 * YAML syntax errors are not repeated here: the template parser reports them (template-invalid).
 */
export function parseInlineConfig(path: string, text: string, node?: unknown, base = 0, source?: YamlSource): ConfigDoc {
  const hasRange = node !== null && typeof node === 'object' && Array.isArray((node as { range?: unknown }).range);
  if (hasRange) {
    // The template parser's own tree of the front matter when given, so it is not parsed again.
    const src: YamlSource = source ?? { doc: parseYaml('').doc, text: text.slice(base), base };
    return buildDoc(path, text, src, node, [], nodeSpan(src, node) ?? { start: base, end: base });
  }
  const fallback = node && typeof node === 'object' && 'start' in node && 'end' in node ? (node as Span) : { start: 0, end: 0 };
  const src = frontMatterYaml(text);
  if (!src) {
    return { path, text, keySpan: () => undefined, valueSpan: () => undefined, findings: [finding('config-invalid', path, fallback, 'The template has no front matter with a context: mapping.')] };
  }
  const ctx = findAt(src, ['context']).node;
  return buildDoc(path, text, src, ctx, [], nodeSpan(src, ctx) ?? fallback);
}
