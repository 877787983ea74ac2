/**
 * Shared YAML helpers for every YAML-backed format (context configs, fixtures, template front
 * matter): parse with the `yaml` package keeping source ranges, find the key or value node at a
 * path, turn node ranges into spans of the *enclosing* file (YAML embedded at `base`), and turn
 * YAML syntax errors into located findings.
 */
import { isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { Document, Node, Pair } from 'yaml';
import { finding } from '../rules/registry';
import type { Finding, Span } from '../types';

export type YamlPath = ReadonlyArray<string | number>;

/** A parsed YAML text and where it sits in the file it came from. */
export interface YamlSource {
  doc: Document.Parsed;
  /** The YAML text itself (a slice of the file when embedded). */
  text: string;
  /** Offset of `text` in the enclosing file; every span below is shifted by it. */
  base: number;
}

export function parseYaml(text: string, base = 0): YamlSource {
  // prettyErrors:false keeps messages to one line; the position goes into the span instead.
  // logLevel 'error': yaml must not print warnings to the console of a language server.
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, keepSourceTokens: false, logLevel: 'error' });
  return { doc, text, base };
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

function keyMatches(pair: Pair, key: string | number): boolean {
  const k = isScalar(pair.key) ? pair.key.value : pair.key;
  return k !== null && k !== undefined && String(k) === String(key);
}

/** The pair (for mapping keys) and node at `path` below `root` (default: the document's root). */
export function findAt(src: YamlSource, path: YamlPath, root?: unknown): { pair?: Pair; node?: unknown } {
  let node: unknown = root === undefined ? src.doc.contents : root;
  let pair: Pair | undefined;
  for (const seg of path) {
    pair = undefined;
    if (isMap(node)) {
      const found = node.items.find((p) => keyMatches(p, seg));
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
  try {
    return (node as Node).toJS(src.doc, { maxAliasCount: 100 });
  } catch {
    return undefined;
  }
}

export interface YamlProblem {
  message: string;
  span: Span;
}

/** YAML syntax errors with spans in the enclosing file (positions clamped into the text). */
export function yamlProblems(src: YamlSource): YamlProblem[] {
  return src.doc.errors.map((e) => {
    const len = src.text.length;
    let start = Math.min(e.pos[0], len);
    let end = Math.max(start, Math.min(e.pos[1], len));
    // An error reported past the end (missing closing bracket at EOF) is shown on the last character.
    if (start === end && start === len && len > 0) start = Math.max(0, len - 1);
    if (start === end && end < len) end = start + 1;
    // yaml often points at the first character of a key or scalar; show the whole token.
    if (end === start + 1) {
      while (end < len && /[^\s:,[\]{}#"']/.test(src.text.charAt(end)) && /[^\s:,[\]{}#"']/.test(src.text.charAt(start))) end++;
    }
    return { message: e.message, span: { start: src.base + start, end: src.base + end } };
  });
}

/** YAML syntax errors as findings of `rule` (config-invalid, fixture-invalid, template-invalid). */
export function yamlFindings(rule: string, path: string, src: YamlSource, prefix = 'YAML syntax error'): Finding[] {
  return yamlProblems(src).map((p) => finding(rule, path, p.span, `${prefix}: ${p.message}`));
}

export { isMap, isPair, isScalar, isSeq };
