/**
 * A fast reader for the plain YAML that fixtures are made of, building the very nodes the `yaml`
 * package would (Scalar, YAMLMap, YAMLSeq, Pair, with the same values, types, formats and source
 * ranges), without yaml's concrete syntax tree. A 1 MB fixture of evidence items took yaml's
 * lexer and composer 200–500 ms and left over a hundred megabytes of tokens for the collector;
 * this reads the same text in a few tens of milliseconds.
 *
 * It reads only a conservative subset: block mappings and sequences indented with spaces,
 * single-line plain, single- and double-quoted scalars, flow collections written on one line,
 * full-line comments at the indentation of the entry they precede, trailing comments. Anything
 * else (block scalars, multi-line scalars or flow collections, anchors, aliases, tags,
 * directives, several documents, tabs, CR, control characters, unusual escapes, duplicate keys,
 * limits close to `parseYaml`'s, any syntax error) makes it return undefined, and the caller
 * parses with `parseYaml`, the reference, which gives the located diagnostics. The one thing
 * it does not keep is comments (`comment`, `commentBefore`, `spaceBefore`): nothing in Context
 * Lens reads them. test/unit/yamlFast.test.ts checks it node for node against `parseYaml`.
 */
import { Document, Pair, Scalar, YAMLMap, YAMLSeq, isScalar } from 'yaml';
import type { Node, Schema } from 'yaml';
import { MAX_YAML_DEPTH, MAX_YAML_ENTRIES, MAX_YAML_TOTAL_ENTRIES, detached } from './yaml';
import type { YamlSource } from './yaml';

/** Thrown inside the reader when the text leaves the subset; caught by `readYamlFast`. */
class Unsure extends Error {}
const UNSURE = new Unsure();

/** A document marker or directive at the start of a line. */
const MARKER = /(^|\n)(---|\.\.\.)(?=[ \n]|$)|(^|\n)%/;
/** Characters that make a text leave the subset wherever they appear. */
const OUTSIDE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\r\u2028\u2029\ufeff\ufffe\uffff]/;
/** A surrogate that is not half of a pair (with the u flag, a pair is one character outside the class). */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

// Character codes.
const NL = 10;
const SP = 32;
const HASH = 35;
const DQ = 34;
const SQ = 39;
const DASH = 45;
const COLON = 58;
const COMMA = 44;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const BACKSLASH = 92;

/** First characters a plain scalar cannot start with (indicators), besides `-`, `?` and `:`. */
function isIndicator(c: number): boolean {
  return (
    c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE || c === HASH || c === 38 /* & */ || c === 42 /* * */ || c === 33 /* ! */ ||
    c === 124 /* | */ || c === 62 /* > */ || c === SQ || c === DQ || c === 37 /* % */ || c === 64 /* @ */ || c === 96 /* ` */
  );
}

/** A slice of the text that does not keep the text alive (see `detached`). */
function own(s: string, from: number, to: number): string {
  return detached(s.slice(from, to));
}

const isFlowIndicator = (c: number): boolean => c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE;

/** Escapes of double-quoted YAML that JSON spells and reads the same way. */
const JSON_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);

/**
 * The tests of yaml's core schema (null, bool, int, float), in its order. Each matches only texts
 * that start with one of CORE_FIRST's characters (or the empty text), so a plain scalar starting
 * otherwise is a string without running them; for any other schema every test runs.
 */
const CORE_TESTS = [
  '^(?:~|[Nn]ull|NULL)?$',
  '^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$',
  '^0o[0-7]+$',
  '^[-+]?[0-9]+$',
  '^0x[0-9a-fA-F]+$',
  '^(?:[-+]?\\.(?:inf|Inf|INF)|\\.nan|\\.NaN|\\.NAN)$',
  '^[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)[eE][-+]?[0-9]+$',
  '^[-+]?(?:\\.[0-9]+|[0-9]+\\.[0-9]*)$',
];
const CORE_FIRST = /^[~NnTtFf0-9+\-.]/;

type Tag = {
  default?: boolean | 'key';
  test?: RegExp;
  format?: string;
  resolve: (value: string, onError: (message: string) => void, options: object) => unknown;
};

class Reader {
  private pos = 0;
  private total = 0;
  private readonly tags: readonly Tag[];
  private readonly end: number;

  constructor(
    private readonly s: string,
    private readonly schema: Schema,
    private readonly options: object,
  ) {
    this.end = s.length;
    this.tags = (schema as unknown as { tags: Tag[] }).tags;
    const tests = this.tags.filter((t) => t.default === true && t.test).map((t) => t.test!.source);
    this.typedFirst = tests.length === CORE_TESTS.length && tests.every((t, i) => t === CORE_TESTS[i]) ? CORE_FIRST : undefined;
  }

  /** The first characters a typed (non-string) plain scalar can start with, when the schema's tests are the core schema's. */
  private readonly typedFirst: RegExp | undefined;

  // -- lines ---------------------------------------------------------------

  /** Spaces from `p` on. */
  private spaces(p: number): number {
    let q = p;
    while (q < this.end && this.s.charCodeAt(q) === SP) q++;
    return q - p;
  }

  /** The last answer of `nextContent`: collections that end together ask it from the same offset. */
  private lastNext: { from: number; at: number; indent: number; comments: boolean } | undefined;

  /**
   * The next content line after an entry of a block collection indented `indent` whose value
   * ends at `offset`: undefined when the collection ends there (the reader continues from that
   * line); a deeper line is left to yaml.
   */
  private nextEntry(offset: number, indent: number): { at: number; indent: number; comments: boolean } | undefined {
    const next = this.nextContent(offset);
    if (next.indent < indent) {
      this.pos = next.at;
      return undefined;
    }
    if (next.indent > indent) throw UNSURE;
    return next;
  }

  /**
   * From a line start, past blank lines and comment lines to the start of the next content
   * line; its indentation, or -1 at the end. A comment line must sit at that indentation (then
   * yaml keeps it in front of the entry, outside every range).
   */
  private nextContent(lineStart: number): { at: number; indent: number; comments: boolean } {
    if (this.lastNext?.from === lineStart) return this.lastNext;
    const next = this.scanToContent(lineStart);
    this.lastNext = { from: lineStart, ...next };
    return next;
  }

  private scanToContent(lineStart: number): { at: number; indent: number; comments: boolean } {
    let p = lineStart;
    let comments = -1;
    for (;;) {
      if (p >= this.end) {
        if (comments >= 0) throw UNSURE;
        return { at: this.end, indent: -1, comments: false };
      }
      const ind = this.spaces(p);
      const q = p + ind;
      const c = q < this.end ? this.s.charCodeAt(q) : NL;
      if (c === NL) {
        p = q + 1;
        continue;
      }
      if (c === HASH) {
        if (comments >= 0 && comments !== ind) throw UNSURE;
        comments = ind;
        this.total++;
        const nl = this.s.indexOf('\n', q);
        p = nl < 0 ? this.end : nl + 1;
        continue;
      }
      if (comments >= 0 && comments !== ind) throw UNSURE;
      return { at: p, indent: ind, comments: comments >= 0 };
    }
  }

  /** After a value: spaces, an optional comment, the line break. Returns the offset past them. */
  private lineEnd(p: number): number {
    const q = p + this.spaces(p);
    if (q >= this.end) return q;
    const c = this.s.charCodeAt(q);
    if (c === HASH) {
      if (q === p) throw UNSURE; // `#` right after a value is part of it, not a comment
      const nl = this.s.indexOf('\n', q);
      return nl < 0 ? this.end : nl + 1;
    }
    if (c === NL) return q + 1;
    throw UNSURE;
  }

  // -- scalars -------------------------------------------------------------

  private plain(value: string, start: number, end: number, atKey: boolean): Scalar {
    let tag: Tag | undefined;
    // Most plain scalars are words no tag's test can match (see CORE_TESTS): they are strings.
    const tags = this.typedFirst && value.length > 0 && !this.typedFirst.test(value) ? [] : this.tags;
    for (const t of tags) {
      if ((t.default === true || (atKey && t.default === 'key')) && t.test?.test(value)) {
        tag = t;
        break;
      }
    }
    let scalar: Scalar;
    if (tag) {
      let failed = false;
      const res = tag.resolve(value, () => (failed = true), this.options);
      if (failed) throw UNSURE;
      scalar = isScalar(res) ? res : new Scalar(res);
      if (tag.format) scalar.format = tag.format;
    } else scalar = new Scalar(value);
    scalar.range = [start, end, end];
    scalar.source = value;
    scalar.type = Scalar.PLAIN;
    return scalar;
  }

  /** A quoted scalar at `p` (on one line); its node with range [p, after the quote, same]. */
  private quoted(p: number): Scalar {
    const s = this.s;
    const q = s.charCodeAt(p);
    let value: string;
    let e: number;
    if (q === SQ) {
      let i = p + 1;
      let out = '';
      let from = i;
      const nl = s.indexOf('\n', i);
      for (;;) {
        const j = s.indexOf("'", i);
        if (j < 0 || (nl >= 0 && nl < j)) throw UNSURE;
        if (s.charCodeAt(j + 1) === SQ) {
          out += s.slice(from, j + 1);
          i = from = j + 2;
          continue;
        }
        out += s.slice(from, j);
        e = j + 1;
        break;
      }
      value = detached(out);
    } else {
      let i = p + 1;
      let escaped = false;
      for (;;) {
        if (i >= this.end) throw UNSURE;
        const c = s.charCodeAt(i);
        if (c === DQ) break;
        if (c === NL) throw UNSURE;
        if (c === BACKSLASH) {
          if (!JSON_ESCAPES.has(s.charAt(i + 1))) throw UNSURE;
          escaped = true;
          i += 2;
          continue;
        }
        i++;
      }
      e = i + 1;
      if (escaped) {
        try {
          value = JSON.parse(s.slice(p, e)) as string;
        } catch {
          throw UNSURE;
        }
      } else value = own(s, p + 1, i);
    }
    const scalar = new Scalar(value);
    scalar.range = [p, e, e];
    scalar.source = value;
    scalar.type = q === SQ ? Scalar.QUOTE_SINGLE : Scalar.QUOTE_DOUBLE;
    return scalar;
  }

  /** Can a plain scalar start at `p` (context `flow`: inside a flow collection)? */
  private plainStart(p: number, flow: boolean): boolean {
    if (p >= this.end) return false;
    const c = this.s.charCodeAt(p);
    if (c === SP || c === NL || isIndicator(c)) return false;
    if (c === DASH || c === 63 /* ? */ || c === COLON) {
      const n = p + 1 < this.end ? this.s.charCodeAt(p + 1) : NL;
      if (n === SP || n === NL || (flow && isFlowIndicator(n))) return false;
    }
    return true;
  }

  /**
   * The end of a plain scalar from `p` on its line: before ` #`, `: ` (a key) or the line
   * break, and in flow context before `,`, `]`, `}` too. Trailing spaces are not part of it.
   */
  private plainEnd(p: number, flow: boolean): number {
    const s = this.s;
    let i = p;
    let last = p;
    while (i < this.end) {
      const c = s.charCodeAt(i);
      if (c === NL) break;
      if (c === SP) {
        i++;
        continue;
      }
      if (c === HASH && s.charCodeAt(i - 1) === SP) break;
      if (c === COLON) {
        const n = i + 1 < this.end ? s.charCodeAt(i + 1) : NL;
        if (n === SP || n === NL || (flow && isFlowIndicator(n))) break;
      }
      if (flow && isFlowIndicator(c)) break;
      i++;
      last = i;
    }
    return last;
  }

  // -- flow collections ------------------------------------------------------

  private skipFlowSpace(p: number): number {
    const q = p + this.spaces(p);
    if (q >= this.end || this.s.charCodeAt(q) === NL || this.s.charCodeAt(q) === HASH) throw UNSURE;
    return q;
  }

  private flowScalar(p: number, atKey: boolean): Scalar {
    const c = this.s.charCodeAt(p);
    if (c === DQ || c === SQ) return this.quoted(p);
    if (!this.plainStart(p, true)) throw UNSURE;
    const e = this.plainEnd(p, true);
    return this.plain(own(this.s, p, e), p, e, atKey);
  }

  private flowNode(p: number, depth: number, atKey: boolean): Node {
    const c = this.s.charCodeAt(p);
    if (c === LBRACE || c === LBRACKET) {
      if (atKey) throw UNSURE;
      return this.flowCollection(p, depth + 1);
    }
    return this.flowScalar(p, atKey);
  }

  /** A flow collection at `p`, on one line; the node's range ends after its closing bracket. */
  private flowCollection(p: number, depth: number): YAMLMap | YAMLSeq {
    if (depth > MAX_YAML_DEPTH / 2) throw UNSURE;
    const isMap = this.s.charCodeAt(p) === LBRACE;
    const close = isMap ? RBRACE : RBRACKET;
    const coll = isMap ? new YAMLMap(this.schema) : new YAMLSeq(this.schema);
    coll.flow = true;
    const seen = isMap ? new Set<unknown>() : undefined;
    let q = this.skipFlowSpace(p + 1);
    if (this.s.charCodeAt(q) !== close) {
      for (;;) {
        if (isMap) {
          const key = this.flowScalar(q, true);
          q = key.range![1];
          if (this.s.charCodeAt(q) !== COLON) throw UNSURE;
          // `key:value` is one plain scalar in flow context, and `{ a }` a key without a value: left to yaml.
          if (this.s.charCodeAt(q + 1) !== SP) throw UNSURE;
          q = this.skipFlowSpace(q + 1);
          const c = this.s.charCodeAt(q);
          if (c === COMMA || c === close) throw UNSURE;
          const value = this.flowNode(q, depth, false);
          q = value.range![1];
          if (seen!.has(key.value)) throw UNSURE;
          seen!.add(key.value);
          (coll as YAMLMap).items.push(new Pair(key, value));
        } else {
          const value = this.flowNode(q, depth, false);
          q = value.range![1];
          // `[a: b]` is a list of one mapping: left to yaml.
          if (this.s.charCodeAt(q) === COLON) throw UNSURE;
          (coll as YAMLSeq).items.push(value);
        }
        this.count(coll.items.length);
        q = this.skipFlowSpace(q);
        // yaml's range of an entry's value ends after the spaces that follow it.
        const last = isMap ? ((coll as YAMLMap).items[coll.items.length - 1].value as Node) : ((coll as YAMLSeq).items[coll.items.length - 1] as Node);
        last.range![2] = q;
        const c = this.s.charCodeAt(q);
        if (c === close) break;
        if (c !== COMMA) throw UNSURE;
        q = this.skipFlowSpace(q + 1);
        // A trailing comma before the bracket is left to yaml.
        if (this.s.charCodeAt(q) === close) throw UNSURE;
      }
    }
    const e = q + 1;
    coll.range = [p, e, e];
    return coll;
  }

  private count(items: number): void {
    this.total++;
    if (items >= MAX_YAML_ENTRIES - 16 || this.total >= MAX_YAML_TOTAL_ENTRIES - 16) throw UNSURE;
  }

  // -- block collections -----------------------------------------------------

  /**
   * A value written on the line of its key or dash, at `p`: a scalar or flow collection with its
   * range's last offset past the line's end. Returns undefined when the line ends at `p` (the
   * value is on the next lines).
   */
  private inlineValue(p: number, depth: number): Node | undefined {
    const q = p + this.spaces(p);
    if (q >= this.end) return undefined;
    const c = this.s.charCodeAt(q);
    if (c === NL) return undefined;
    if (c === HASH) {
      if (q === p) throw UNSURE;
      return undefined;
    }
    if (q === p) throw UNSURE;
    let node: Node;
    if (c === LBRACE || c === LBRACKET) node = this.flowCollection(q, depth + 1);
    else if (c === DQ || c === SQ) node = this.quoted(q);
    else {
      if (!this.plainStart(q, false)) throw UNSURE;
      const e = this.plainEnd(q, false);
      // `a: b: c` (a mapping in a mapping on one line) is an error: left to yaml.
      if (e < this.end && this.s.charCodeAt(e) === COLON) throw UNSURE;
      node = this.plain(own(this.s, q, e), q, e, false);
    }
    node.range![2] = this.lineEnd(node.range![1]);
    return node;
  }

  /** The value of a key or dash whose line ended: a block collection on the following lines. */
  private valueBelow(lineStart: number, parentIndent: number, depth: number, seqOk: boolean): Node {
    const next = this.nextContent(lineStart);
    if (next.indent < 0) throw UNSURE; // an empty value: left to yaml
    const first = next.at + next.indent;
    const isDash = this.s.charCodeAt(first) === DASH && this.isSpaceOrEnd(first + 1);
    if (next.indent > parentIndent) return this.blockNode(next.at, next.indent, depth + 1);
    // `key:` followed by `- item` at the key's own column: a sequence.
    if (seqOk && next.indent === parentIndent && isDash) return this.blockSeq(next.at, next.indent, depth + 1, true);
    throw UNSURE;
  }

  private isSpaceOrEnd(p: number): boolean {
    if (p >= this.end) return true;
    const c = this.s.charCodeAt(p);
    return c === SP || c === NL;
  }

  /** A block mapping or sequence whose first line starts at `lineStart`, indented `indent`. */
  private blockNode(lineStart: number, indent: number, depth: number): YAMLMap | YAMLSeq {
    const first = lineStart + indent;
    if (this.s.charCodeAt(first) === DASH && this.isSpaceOrEnd(first + 1)) return this.blockSeq(lineStart, indent, depth);
    return this.blockMap(first, indent, depth);
  }

  /** The key at `p` and the offset after its `:` (which must be followed by a space or the line's end). */
  private key(p: number): { key: Scalar; after: number } {
    const c = this.s.charCodeAt(p);
    let key: Scalar;
    if (c === DQ || c === SQ) key = this.quoted(p);
    else {
      if (!this.plainStart(p, false)) throw UNSURE;
      const e = this.plainEnd(p, false);
      key = this.plain(own(this.s, p, e), p, e, true);
    }
    const e = key.range![1];
    if (e - p > 1000) throw UNSURE;
    // A space before the colon is allowed by YAML, but kept out of the subset.
    if (this.s.charCodeAt(e) !== COLON || !this.isSpaceOrEnd(e + 1)) throw UNSURE;
    return { key, after: e + 1 };
  }

  /**
   * A block mapping whose first key is at `p` (column `indent`; the key may follow a `- ` on its
   * line). Its entries are the lines indented `indent` after it.
   */
  private blockMap(p: number, indent: number, depth: number): YAMLMap {
    if (depth > MAX_YAML_DEPTH / 2) throw UNSURE;
    const map = new YAMLMap(this.schema);
    const seen = new Set<unknown>();
    let at = p;
    let offset = p;
    for (;;) {
      const { key, after } = this.key(at);
      let value = this.inlineValue(after, depth);
      if (!value) {
        const nl = this.s.indexOf('\n', after);
        const lineEnd = nl < 0 ? this.end : nl + 1;
        value = this.valueBelow(lineEnd, indent, depth, true);
      }
      if (seen.has(key.value)) throw UNSURE;
      seen.add(key.value);
      map.items.push(new Pair(key, value));
      this.count(map.items.length);
      offset = value.range![2];
      const next = this.nextEntry(offset, indent);
      if (!next) break;
      at = next.at + indent;
      // A sequence at the mapping's column after a scalar entry is an error: left to yaml.
      if (this.s.charCodeAt(at) === DASH && this.isSpaceOrEnd(at + 1)) throw UNSURE;
    }
    map.range = [p, offset, offset];
    return map;
  }

  /** A block sequence whose first `- ` starts the line at `lineStart`, indented `indent`. */
  private blockSeq(lineStart: number, indent: number, depth: number, atKeyColumn = false): YAMLSeq {
    if (depth > MAX_YAML_DEPTH / 2) throw UNSURE;
    const seq = new YAMLSeq(this.schema);
    const p = lineStart + indent;
    let dash = p;
    let offset = p;
    for (;;) {
      // After `- `: a scalar or flow value, a compact mapping (`- id: x`), or a value below.
      const q = dash + 1 + this.spaces(dash + 1);
      let value: Node | undefined;
      const c = q < this.end ? this.s.charCodeAt(q) : NL;
      if (q > dash + 1 && c !== NL && c !== HASH && this.startsMapEntry(q)) {
        value = this.blockMap(q, q - this.lineStartOf(q), depth + 1);
      } else if (c === DASH && this.isSpaceOrEnd(q + 1)) {
        throw UNSURE; // `- - a`: left to yaml
      } else {
        value = this.inlineValue(dash + 1, depth);
        if (!value) {
          const nl = this.s.indexOf('\n', dash + 1);
          value = this.valueBelow(nl < 0 ? this.end : nl + 1, indent, depth, false);
        }
      }
      seq.items.push(value);
      this.count(seq.items.length);
      offset = value.range![2];
      const next = this.nextEntry(offset, indent);
      if (!next) break;
      dash = next.at + indent;
      if (!(this.s.charCodeAt(dash) === DASH && this.isSpaceOrEnd(dash + 1))) {
        // A sequence written at its key's column ends at the next key (yaml counts comment lines
        // before that key as the sequence's: left to it).
        if (!atKeyColumn || next.comments) throw UNSURE;
        this.pos = next.at;
        break;
      }
    }
    seq.range = [p, offset, offset];
    return seq;
  }

  /** Column of `p` in its line. */
  private lineStartOf(p: number): number {
    return this.s.lastIndexOf('\n', p - 1) + 1;
  }

  /** Whether the content at `q` is a mapping entry (`key: ...`) rather than a scalar. */
  private startsMapEntry(q: number): boolean {
    const c = this.s.charCodeAt(q);
    if (c === DQ || c === SQ) {
      // A quoted key: the scalar (a text it cannot read leaves the subset), then `:`.
      return this.s.charCodeAt(this.quoted(q).range![1]) === COLON;
    }
    if (c === LBRACE || c === LBRACKET || !this.plainStart(q, false)) return false;
    const e = this.plainEnd(q, false);
    return e < this.end && this.s.charCodeAt(e) === COLON;
  }

  // -- document --------------------------------------------------------------

  read(): Node {
    const next = this.nextContent(0);
    // An empty document, or content indented at the top: left to yaml.
    if (next.indent !== 0) throw UNSURE;
    const c = this.s.charCodeAt(next.at);
    // Directives and document markers: left to yaml.
    if (c === 37 /* % */ || this.s.startsWith('---', next.at) || this.s.startsWith('...', next.at)) throw UNSURE;
    const root = this.blockNode(next.at, 0, 1);
    if (this.pos < this.end) throw UNSURE;
    return root;
  }
}

// yaml's composer is given these options in parseYaml; the document made here carries the same.
const OPTIONS = { prettyErrors: false, uniqueKeys: false, keepSourceTokens: false, logLevel: 'error' } as const;

/**
 * The text read by the fast path, as `parseYaml` would give it, or undefined when the text
 * leaves the subset this reader is sure of (the caller then uses `parseYaml`).
 */
export function readYamlFast(text: string, base = 0): YamlSource | undefined {
  if (OUTSIDE.test(text) || MARKER.test(text) || LONE_SURROGATE.test(text)) return undefined;
  const doc = new Document(null, OPTIONS) as Document.Parsed;
  try {
    const reader = new Reader(text, doc.schema, (doc as unknown as { options: object }).options);
    const root = reader.read();
    doc.contents = root as Document.Parsed['contents'];
    doc.range = [0, root.range![1], text.length];
    return { doc, text, base, plain: true };
  } catch {
    // Unsure, a stack overflow or any other surprise: the reference parse decides.
    return undefined;
  }
}
