/**
 * Shared YAML helpers for every YAML-backed format (context configs, fixtures, template front
 * matter): parse with the `yaml` package keeping source ranges, find the key or value node at a
 * path, turn node ranges into spans of the *enclosing* file (YAML embedded at `base`), and turn
 * YAML syntax errors into located findings.
 *
 * `parseYaml` is the one entry point, and it bounds the work user text can cause. The `yaml`
 * composer recurses once per nesting level (a thousand `[` overflow the stack, and catching two
 * such overflows has been seen to abort Node in the regexp compiler), checks duplicate keys in
 * O(n²), and converts a mapping used as a key by stringifying it, which doubles per level. So the
 * text is first lexed into yaml's concrete syntax tree (linear, iterative), nesting depth and
 * entry counts are checked on it, and only a text within the limits is composed, from the same
 * tokens, without yaml's duplicate check; duplicates are then found in one pass with a set, and a
 * mapping or list written as a key is reported and replaced by a plain key.
 */
import { Composer, Parser, Scalar, YAMLParseError, isMap, isPair, isScalar, isSeq } from 'yaml';
import type { CST, Document, Node, Pair } from 'yaml';
import { finding } from '../rules/registry';
import type { Finding, Span } from '../types';
import { redactSecrets } from './secrets';

export type YamlPath = ReadonlyArray<string | number>;

/** A parsed YAML text and where it sits in the file it came from. */
export interface YamlSource {
  doc: Document.Parsed;
  /** The YAML text itself (a slice of the file when embedded). */
  text: string;
  /** Offset of `text` in the enclosing file; every span below is shifted by it. */
  base: number;
  /**
   * Set by the fast reader (yamlFast.ts): the nodes are scalars, mappings and lists without
   * anchors, aliases, tags or merge keys, so `toJs` reads their values directly.
   */
  plain?: true;
}

/** Deepest nesting of mappings and lists that is read (a config needs four or five). */
export const MAX_YAML_DEPTH = 64;
/** Most entries in one mapping or list. */
export const MAX_YAML_ENTRIES = 10_000;
/** Most entries in all mappings and lists of one text. */
export const MAX_YAML_TOTAL_ENTRIES = 100_000;
/** YAML errors reported per text; a broken file gives one per stray token otherwise. */
const MAX_YAML_PROBLEMS = 100;

// prettyErrors:false keeps messages to one line; the position goes into the span instead.
// logLevel 'error': yaml must not print warnings to the console of a language server.
// uniqueKeys:false: duplicates are found in linear time below, with the same message.
const OPTIONS = { prettyErrors: false, uniqueKeys: false, keepSourceTokens: false, logLevel: 'error' } as const;

/** Errors of the limits: their messages are complete sentences, shown without the syntax-error prefix. */
const LIMIT = 'RESOURCE_EXHAUSTION';

/** Where a CST token starts in the text. */
function tokenOffset(tok: CST.Token | null | undefined): number | undefined {
  if (!tok) return undefined;
  if (tok.type === 'flow-collection') return tok.start.offset;
  if (tok.type === 'block-map' || tok.type === 'block-seq') {
    const first = tok.items[0];
    return first ? itemOffset(first) ?? tok.offset : tok.offset;
  }
  return tok.offset;
}

function itemOffset(item: CST.CollectionItem): number | undefined {
  return tokenOffset(item.key) ?? item.start[0]?.offset ?? tokenOffset(item.value);
}

/**
 * The first place where the concrete syntax tree nests too deep or holds too many entries, as a
 * problem to report instead of composing the document. Iterative: the tree may be very deep.
 */
function checkLimits(tokens: readonly CST.Token[]): { at: number; message: string } | undefined {
  const stack: Array<{ tok: CST.Token; depth: number }> = [];
  for (let i = tokens.length - 1; i >= 0; i--) stack.push({ tok: tokens[i], depth: 0 });
  let total = 0;
  while (stack.length) {
    const { tok, depth } = stack.pop()!;
    if (tok.type === 'document') {
      if (tok.value) stack.push({ tok: tok.value, depth });
      continue;
    }
    if (tok.type !== 'block-map' && tok.type !== 'block-seq' && tok.type !== 'flow-collection') continue;
    const level = depth + 1;
    if (level > MAX_YAML_DEPTH) {
      return { at: tokenOffset(tok) ?? 0, message: `The YAML nests deeper than ${MAX_YAML_DEPTH} levels here; it is not read (a context file needs a handful).` };
    }
    const items: readonly CST.CollectionItem[] = tok.items;
    if (items.length > MAX_YAML_ENTRIES) {
      return { at: itemOffset(items[MAX_YAML_ENTRIES]) ?? tokenOffset(tok) ?? 0, message: `The YAML has more than ${MAX_YAML_ENTRIES.toLocaleString('en-US')} entries in one mapping or list here; it is not read.` };
    }
    total += items.length;
    if (total > MAX_YAML_TOTAL_ENTRIES) {
      return { at: itemOffset(items[items.length - 1 - (total - MAX_YAML_TOTAL_ENTRIES - 1)]) ?? tokenOffset(tok) ?? 0, message: `The YAML has more than ${MAX_YAML_TOTAL_ENTRIES.toLocaleString('en-US')} entries in all; it is not read.` };
    }
    for (let k = items.length - 1; k >= 0; k--) {
      const item = items[k];
      if (item.value) stack.push({ tok: item.value, depth: level });
      if (item.key) stack.push({ tok: item.key, depth: level });
    }
  }
  return undefined;
}

/** A short, single-line rendering of a node's source, for a key that was a mapping or list. */
function keyText(text: string, node: Node): string {
  const range = node.range ?? [0, 0];
  // Redacted before it is cut: a secret cut short is no longer recognised.
  const src = redactSecrets(text.slice(range[0], Math.min(range[1], range[0] + 200)).replace(/\s+/g, ' ').trim());
  return src.length > 40 ? `${src.slice(0, 39)}…` : src;
}

/**
 * A copy of a string that does not keep the string it was cut from alive. V8 represents a slice of
 * 13 characters or more as a view into its parent, and yaml's scalars are slices of its token
 * buffers: an item's text kept by a cache (content facts, token counts) held 20 MB of buffers per
 * 1 MB fixture. Slicing a concatenation makes V8 copy it first.
 */
export function detached(s: string): string {
  return s.length < 13 ? s : (s + ' ').slice(0, -1);
}

function detachScalar(node: Scalar): void {
  if (typeof node.value === 'string') node.value = detached(node.value);
  if (typeof node.source === 'string') node.source = typeof node.value === 'string' && node.source === node.value ? node.value : detached(node.source);
}

/**
 * One pass over the composed document: duplicate keys (yaml's own rule: equal scalar values),
 * mappings or lists used as keys, which are replaced by a plain key of their source text, and the
 * scalars' strings replaced by copies of their own (`detached`).
 */
function checkKeys(doc: Document.Parsed, text: string): void {
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isScalar(node)) detachScalar(node);
    else if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        if (isMap(key) || isSeq(key)) {
          const range = key.range ?? [0, 0, 0];
          doc.errors.push(new YAMLParseError([range[0], range[1]], 'NON_STRING_KEY', 'a mapping or list cannot be a key here; write a plain name'));
          const plain = new Scalar(keyText(text, key));
          plain.range = range;
          pair.key = plain;
        } else if (isScalar(key)) {
          detachScalar(key);
          if (seen.has(key.value)) {
            const start = key.range?.[0] ?? 0;
            doc.errors.push(new YAMLParseError([start, start + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
          } else seen.add(key.value);
        }
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
}

export function parseYaml(text: string, base = 0): YamlSource {
  // yaml reports each stray token as an error object, tens of thousands for a long line of
  // `{{x}}` or `"`; capturing a stack trace for each was most of the parse time, and nothing here
  // reads them. (Error.stackTraceLimit is V8's; elsewhere setting it does nothing.)
  const E = Error as { stackTraceLimit?: number };
  const limit = E.stackTraceLimit;
  E.stackTraceLimit = 0;
  try {
    return parseYamlText(text, base);
  } finally {
    E.stackTraceLimit = limit;
  }
}

function parseYamlText(text: string, base: number): YamlSource {
  // A lone CR is a line break in YAML 1.2 but not to the yaml package: read it as LF (same length,
  // so every offset still points into `text`).
  const source = text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
  const tokens = Array.from(new Parser().parse(source));
  const limit = checkLimits(tokens);
  const composer = new Composer(OPTIONS);
  if (limit) {
    const doc = Array.from(composer.compose([], true, 0))[0] as Document.Parsed;
    const at = Math.min(limit.at, Math.max(0, text.length - 1));
    doc.errors.push(new YAMLParseError([at, Math.min(at + 1, text.length)], LIMIT, limit.message));
    return { doc, text, base };
  }
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, source.length)) {
    if (!doc) doc = next as Document.Parsed;
    else {
      doc.errors.push(new YAMLParseError(next.range.slice(0, 2) as [number, number], 'MULTIPLE_DOCS', 'Source contains multiple documents; please use YAML.parseAllDocuments()'));
      break;
    }
  }
  // compose(…, forceDoc = true) always yields a document.
  checkKeys(doc!, text);
  doc!.errors.sort((a, b) => a.pos[0] - b.pos[0]);
  return { doc: doc!, text, base };
}

/** Trims trailing whitespace (block collections' ranges swallow the newline that ends them). */
function trimEnd(text: string, start: number, end: number): number {
  let e = Math.min(end, text.length);
  while (e > start && /\s/.test(text.charAt(e - 1))) e--;
  return e;
}

/** Span of a node's value in the enclosing file, or undefined for nodes without a range. */
export function nodeSpan(src: YamlSource, node: unknown): Span | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  if (!range) return undefined;
  const start = Math.min(range[0], src.text.length);
  const end = trimEnd(src.text, start, range[1]);
  return { start: src.base + start, end: src.base + end };
}

function keyString(pair: Pair): string | undefined {
  const k = isScalar(pair.key) ? pair.key.value : pair.key;
  return k === null || k === undefined ? undefined : String(k);
}

/** Pairs of large mappings by key, so looking up every key of a big mapping stays linear. */
const pairIndex = new WeakMap<object, { size: number; index: Map<string, Pair> }>();

function pairAt(map: { items: Pair[] }, key: string | number): Pair | undefined {
  const want = String(key);
  if (map.items.length <= 8) return map.items.find((p) => keyString(p) === want);
  let hit = pairIndex.get(map);
  if (!hit || hit.size !== map.items.length) {
    const index = new Map<string, Pair>();
    for (const p of map.items) {
      const k = keyString(p);
      // The first of duplicate keys wins, as a linear search would find it.
      if (k !== undefined && !index.has(k)) index.set(k, p);
    }
    hit = { size: map.items.length, index };
    pairIndex.set(map, hit);
  }
  return hit.index.get(want);
}

/** The pair (for mapping keys) and node at `path` below `root` (default: the document's root). */
export function findAt(src: YamlSource, path: YamlPath, root?: unknown): { pair?: Pair; node?: unknown } {
  let node: unknown = root === undefined ? src.doc.contents : root;
  let pair: Pair | undefined;
  for (const seg of path) {
    pair = undefined;
    if (isMap(node)) {
      const found = pairAt(node, seg);
      if (!found) return {};
      pair = found;
      node = found.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      if (seg < 0 || seg >= node.items.length) return {};
      node = node.items[seg];
    } else {
      return {};
    }
  }
  return { pair, node };
}

/** Span of the key at `path` (the index's item for a sequence position). */
export function keySpanAt(src: YamlSource, path: YamlPath, root?: unknown): Span | undefined {
  const { pair, node } = findAt(src, path, root);
  if (pair) return nodeSpan(src, pair.key);
  return path.length ? nodeSpan(src, node) : undefined;
}

/** Span of the value at `path`; for a key without a value, the key's span. */
export function valueSpanAt(src: YamlSource, path: YamlPath, root?: unknown): Span | undefined {
  const { pair, node } = findAt(src, path, root);
  const span = nodeSpan(src, node);
  // An empty value (`key:` with nothing after it) has an empty range: point at the key instead.
  if ((!span || span.start === span.end) && pair) return nodeSpan(src, pair.key) ?? span;
  return span;
}

/** The text a scalar was written as (`4.10` stays "4.10"), or undefined for non-scalars. */
export function scalarSource(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  if (typeof node.value === 'string') return node.value;
  if (typeof node.source === 'string') return node.source;
  return node.value === null || node.value === undefined ? undefined : String(node.value);
}

/**
 * Plain JS value of a node (never throws: YAML errors are reported separately, and an alias bomb
 * is cut off by `maxAliasCount` and yields undefined).
 */
export function toJs(src: YamlSource, node: unknown): unknown {
  if (node === null || node === undefined) return undefined;
  if (src.plain) return plainJs(node);
  try {
    return (node as Node).toJS(src.doc, { maxAliasCount: 100 });
  } catch {
    return undefined;
  }
}

/**
 * yaml's `toJS` for a tree of plain nodes (`YamlSource.plain`), without its conversion context:
 * a scalar's value, a list's values, a mapping as an object whose keys are its keys' values as
 * strings (null as ''), each an own property even when the name is also an inherited one.
 */
function plainJs(node: unknown): unknown {
  if (isScalar(node)) return node.value;
  if (isSeq(node)) return node.items.map(plainJs);
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      const k = plainJs(pair.key);
      const key = k === null ? '' : String(k);
      const value = plainJs(pair.value);
      if (key in out) Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }
  return undefined;
}

export interface YamlProblem {
  message: string;
  span: Span;
  /** yaml's error code; `RESOURCE_EXHAUSTION` for a text over the limits of `parseYaml`. */
  code?: string;
}

/**
 * The end of a span pulled back before a CR or CRLF line break at its end, so a range never
 * covers the CR and ends on its own line (an LF-only break is left as it was).
 */
function beforeCr(text: string, start: number, end: number): number {
  let e = end;
  while (e > start) {
    if (text.charCodeAt(e - 1) === 13) e--;
    else if (text.charCodeAt(e - 1) === 10 && e - 2 >= start && text.charCodeAt(e - 2) === 13) e -= 2;
    else break;
  }
  return e;
}

/**
 * YAML syntax errors with spans in the enclosing file (positions clamped into the text, never
 * covering a CR, so a range ends on its own line in CRLF and CR texts too). Messages quote
 * source text: any secret in them is redacted.
 */
export function yamlProblems(src: YamlSource): YamlProblem[] {
  const text = src.text;
  const len = text.length;
  return src.doc.errors.slice(0, MAX_YAML_PROBLEMS).map((e) => {
    let start = Math.min(e.pos[0], len);
    let end = Math.max(start, Math.min(e.pos[1], len));
    // An error reported past the end (missing closing bracket at EOF) is shown on the last character.
    if (start === end && start === len && len > 0) {
      start = beforeCr(text, 0, len);
      end = start === len ? len : start;
      if (start === len) start = len - 1;
    }
    // A point at a CR stays an empty range at the end of its line; elsewhere it covers the character.
    if (start === end && end < len && text.charCodeAt(start) !== 13) end = start + 1;
    // yaml often points at the first character of a key or scalar; show the whole token.
    if (end === start + 1) {
      while (end < len && /[^\s:,[\]{}#"']/.test(text.charAt(end)) && /[^\s:,[\]{}#"']/.test(text.charAt(start))) end++;
    }
    end = beforeCr(text, start, end);
    return { message: redactSecrets(e.message), span: { start: src.base + start, end: src.base + end }, code: e.code };
  });
}

/** YAML syntax errors as findings of `rule` (config-invalid, fixture-invalid, template-invalid). */
export function yamlFindings(rule: string, path: string, src: YamlSource, prefix = 'YAML syntax error'): Finding[] {
  return yamlProblems(src).map((p) => finding(rule, path, p.span, p.code === LIMIT ? p.message : `${prefix}: ${p.message}`));
}

export { isMap, isPair, isScalar, isSeq };
