/**
 * What Context Lens reads of a `.baml` file itself: where its blocks are (functions with their
 * parameters, client and prompt; clients with provider and model; tests with the functions they
 * name and their `args`; generators with their version), so findings and lenses have spans. The
 * meaning of a file (types, Jinja, the output format, coercion) is BAML's runtime's alone
 * (runtime.ts): this scanner never decides whether a file is valid, and a block it cannot read is
 * left out, the runtime's own diagnostic says why.
 *
 * Test arguments are read with BAML's literal syntax (strings, `#"…"#` block strings, numbers,
 * booleans, `null`, lists, maps, unquoted strings): they are the values the runtime is given.
 */
import type { Span } from '../../types';

export interface BamlParam {
  name: string;
  /** The type as written (`string[]`, `Doc[]`, `image`, `map<string, int>`, `Chat?`). */
  type: string;
  span: Span;
}

export interface BamlFunction {
  name: string;
  nameSpan: Span;
  span: Span;
  params: BamlParam[];
  returns: string;
  /** The client as written: a client's name, or the `"provider/model"` shorthand (unquoted here). */
  client?: { value: string; span: Span; shorthand: boolean };
  /** The prompt's text (between the block string's quotes) and its span in the file. */
  prompt?: { text: string; span: Span };
}

export interface BamlClient {
  name: string;
  nameSpan: Span;
  span: Span;
  provider?: string;
  model?: { value: string; span: Span };
  /** Fallback and round-robin clients: the clients of `strategy`, in order. */
  strategy?: string[];
}

/** A value of BAML's literal syntax with its span. */
export type BamlValue =
  | { kind: 'string'; value: string; span: Span }
  | { kind: 'number'; value: number; span: Span }
  | { kind: 'bool'; value: boolean; span: Span }
  | { kind: 'null'; span: Span }
  | { kind: 'list'; items: BamlValue[]; span: Span }
  | { kind: 'map'; entries: Array<{ key: string; keySpan: Span; value: BamlValue }>; span: Span };

export interface BamlTest {
  name: string;
  nameSpan: Span;
  span: Span;
  functions: string[];
  args?: { entries: Array<{ key: string; keySpan: Span; value: BamlValue }>; span: Span };
}

export interface BamlFile {
  functions: BamlFunction[];
  clients: BamlClient[];
  tests: BamlTest[];
  templateStrings: Array<{ name: string; span: Span }>;
  generators: Array<{ name: string; span: Span; version?: { value: string; span: Span } }>;
}

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;

/** A cursor over the file's text. */
class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  /** Skips whitespace and `//` comments (with `newlines` false, stops at a line end). */
  skip(newlines = true): void {
    const t = this.text;
    for (;;) {
      const c = t[this.pos];
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) this.pos++;
      else if (c === '/' && t[this.pos + 1] === '/') {
        const nl = t.indexOf('\n', this.pos);
        this.pos = nl < 0 ? t.length : nl;
      } else if (c === '{' && t[this.pos + 1] === '#') {
        // A `{# … #}` block comment.
        const end = t.indexOf('#}', this.pos + 2);
        this.pos = end < 0 ? t.length : end + 2;
      } else return;
    }
  }

  ident(): { name: string; span: Span } | undefined {
    IDENT.lastIndex = this.pos;
    const m = IDENT.exec(this.text);
    if (!m) return undefined;
    const span = { start: this.pos, end: this.pos + m[0].length };
    this.pos = span.end;
    return { name: m[0], span };
  }

  /** A `#"…"#` block string (any number of `#`) at the cursor: its inner text and spans. */
  blockString(): { text: string; inner: Span; span: Span } | undefined {
    const t = this.text;
    let i = this.pos;
    let hashes = 0;
    while (t[i] === '#') {
      hashes++;
      i++;
    }
    if (!hashes || t[i] !== '"') return undefined;
    const close = '"' + '#'.repeat(hashes);
    const end = t.indexOf(close, i + 1);
    if (end < 0) return undefined;
    const inner = { start: i + 1, end };
    const span = { start: this.pos, end: end + close.length };
    this.pos = span.end;
    return { text: t.slice(inner.start, inner.end), inner, span };
  }

  /** A `"…"` string at the cursor (BAML's quoted strings have the JSON escapes). */
  quoted(): { value: string; span: Span } | undefined {
    const t = this.text;
    if (t[this.pos] !== '"') return undefined;
    let i = this.pos + 1;
    let out = '';
    while (i < t.length && t[i] !== '"' && t[i] !== '\n') {
      if (t[i] === '\\' && i + 1 < t.length) {
        const e = t[i + 1];
        const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f' };
        if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(t.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(t.slice(i + 2, i + 6), 16));
          i += 6;
          continue;
        }
        out += map[e] ?? e;
        i += 2;
        continue;
      }
      out += t[i++];
    }
    if (t[i] !== '"') return undefined;
    const span = { start: this.pos, end: i + 1 };
    this.pos = i + 1;
    return { value: out, span };
  }

  /** Moves past the balanced `{ … }` at the cursor (strings, block strings and comments inside skipped); false if unclosed. */
  balanced(open = '{', close = '}'): boolean {
    const t = this.text;
    let depth = 0;
    while (this.pos < t.length) {
      const c = t[this.pos];
      if (c === '#' && this.blockString()) continue;
      if (c === '"') {
        if (!this.quoted()) this.pos++;
        continue;
      }
      if (c === '/' && t[this.pos + 1] === '/') {
        this.skip(false);
        continue;
      }
      this.pos++;
      if (c === open) depth++;
      else if (c === close && --depth === 0) return true;
    }
    return false;
  }
}

/** Dedents a block string as BAML does: drops the first and last line when blank, then the lines' common indentation. */
export function dedentBlock(text: string): string {
  let lines = text.split('\n');
  if (lines.length && !lines[0].trim()) lines = lines.slice(1);
  if (lines.length && !lines[lines.length - 1].trim()) lines = lines.slice(0, -1);
  let indent = Infinity;
  for (const l of lines) {
    if (!l.trim()) continue;
    const n = /^[ \t]*/.exec(l)![0].length;
    if (n < indent) indent = n;
  }
  if (!Number.isFinite(indent)) indent = 0;
  return lines.map((l) => l.slice(Math.min(indent, /^[ \t]*/.exec(l)![0].length))).join('\n');
}

function readValue(r: Reader, depth = 0): BamlValue | undefined {
  r.skip();
  const t = r.text;
  const start = r.pos;
  const c = t[r.pos];
  if (depth > 64) return undefined;
  if (c === '#') {
    const b = r.blockString();
    if (b) return { kind: 'string', value: dedentBlock(b.text), span: b.span };
  }
  if (c === '"') {
    const q = r.quoted();
    if (q) return { kind: 'string', value: q.value, span: q.span };
  }
  if (c === '[') {
    r.pos++;
    const items: BamlValue[] = [];
    for (;;) {
      r.skip();
      if (r.pos >= t.length) return undefined;
      if (t[r.pos] === ']') {
        r.pos++;
        return { kind: 'list', items, span: { start, end: r.pos } };
      }
      const v = readValue(r, depth + 1);
      if (!v) return undefined;
      items.push(v);
      r.skip();
      if (t[r.pos] === ',') r.pos++;
    }
  }
  if (c === '{') {
    r.pos++;
    const entries = readEntries(r, depth + 1);
    if (!entries) return undefined;
    return { kind: 'map', entries, span: { start, end: r.pos } };
  }
  // A number, a keyword, or an unquoted string (to the end of the line, a comma or a closing bracket).
  const m = /[^\n,\]}]*/y;
  m.lastIndex = r.pos;
  const raw = m.exec(t)![0].replace(/\s*\/\/.*$/, '').trimEnd();
  if (!raw) return undefined;
  r.pos += raw.length;
  const span = { start, end: r.pos };
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) return { kind: 'number', value: Number(raw), span };
  if (raw === 'true' || raw === 'false') return { kind: 'bool', value: raw === 'true', span };
  if (raw === 'null') return { kind: 'null', span };
  return { kind: 'string', value: raw, span };
}

/** The `key value` entries of a map or `args` block after its `{`, through its `}`. */
function readEntries(r: Reader, depth: number): Array<{ key: string; keySpan: Span; value: BamlValue }> | undefined {
  const t = r.text;
  const entries: Array<{ key: string; keySpan: Span; value: BamlValue }> = [];
  for (;;) {
    r.skip();
    if (r.pos >= t.length) return undefined;
    if (t[r.pos] === '}') {
      r.pos++;
      return entries;
    }
    let key: { name: string; span: Span } | undefined;
    if (t[r.pos] === '"') {
      const q = r.quoted();
      if (q) key = { name: q.value, span: q.span };
    } else key = r.ident();
    if (!key) return undefined;
    r.skip(false);
    if (t[r.pos] === ':') r.pos++;
    const value = readValue(r, depth);
    if (!value) return undefined;
    entries.push({ key: key.name, keySpan: key.span, value });
    r.skip();
    if (t[r.pos] === ',') r.pos++;
  }
}

/** The plain value of a literal (what the runtime is given). */
export function plainOf(v: BamlValue): unknown {
  switch (v.kind) {
    case 'string':
    case 'number':
    case 'bool':
      return v.value;
    case 'null':
      return null;
    case 'list':
      return v.items.map(plainOf);
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const e of v.entries) Object.defineProperty(out, e.key, { value: plainOf(e.value), enumerable: true, writable: true, configurable: true });
      return out;
    }
  }
}

/** The blocks of a `.baml` file. Never throws; what it cannot read it leaves out. */
export function scanBaml(text: string): BamlFile {
  const out: BamlFile = { functions: [], clients: [], tests: [], templateStrings: [], generators: [] };
  const r = new Reader(text);
  while (r.pos < text.length) {
    r.skip();
    if (r.pos >= text.length) break;
    const start = r.pos;
    const kw = r.ident();
    if (!kw) {
      // Not a block: move to the next line.
      const nl = text.indexOf('\n', r.pos);
      r.pos = nl < 0 ? text.length : nl + 1;
      continue;
    }
    try {
      if (kw.name === 'function') readFunction(r, start, out);
      else if (kw.name === 'client') readClient(r, start, out);
      else if (kw.name === 'test') readTest(r, start, out);
      else if (kw.name === 'template_string') readTemplateString(r, start, out);
      else if (kw.name === 'generator') readGenerator(r, start, out);
      else skipBlock(r);
    } catch {
      skipBlock(r);
    }
  }
  return out;
}

/** Moves past the rest of a block: to its balanced `}` when one opens on this line, else to the line's end. */
function skipBlock(r: Reader): void {
  const t = r.text;
  const nl = t.indexOf('\n', r.pos);
  const lineEnd = nl < 0 ? t.length : nl;
  const brace = t.indexOf('{', r.pos);
  if (brace >= 0 && brace < lineEnd) {
    r.pos = brace;
    if (!r.balanced()) r.pos = t.length;
  } else r.pos = lineEnd;
}

function params(r: Reader): BamlParam[] {
  const t = r.text;
  const out: BamlParam[] = [];
  if (t[r.pos] !== '(') return out;
  const open = r.pos;
  r.pos++;
  const save = r.pos;
  // Find the closing parenthesis (types hold `<`, `,` and `|`, never parentheses of their own except unions in parentheses).
  let depth = 1;
  let i = r.pos;
  while (i < t.length && depth > 0) {
    if (t[i] === '(') depth++;
    else if (t[i] === ')') depth--;
    i++;
  }
  const close = i - 1;
  const inner = t.slice(save, close);
  // Split on top-level commas.
  let level = 0;
  let from = 0;
  const pieces: Array<[number, number]> = [];
  for (let k = 0; k <= inner.length; k++) {
    const ch = inner[k];
    if (ch === '<' || ch === '(' || ch === '[' || ch === '{') level++;
    else if (ch === '>' || ch === ')' || ch === ']' || ch === '}') level--;
    if ((ch === ',' && level === 0) || k === inner.length) {
      pieces.push([from, k]);
      from = k + 1;
    }
  }
  for (const [a, b] of pieces) {
    const piece = inner.slice(a, b);
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([\s\S]*?)\s*$/.exec(piece);
    if (!m) continue;
    const nameStart = save + a + piece.indexOf(m[1]);
    out.push({ name: m[1], type: m[2].replace(/\s+/g, ' '), span: { start: nameStart, end: nameStart + m[1].length } });
  }
  r.pos = close + 1;
  void open;
  return out;
}

function readFunction(r: Reader, start: number, out: BamlFile): void {
  r.skip();
  const name = r.ident();
  if (!name) return skipBlock(r);
  r.skip();
  const ps = params(r);
  r.skip();
  let returns = '';
  if (r.text.startsWith('->', r.pos)) {
    const brace = r.text.indexOf('{', r.pos);
    if (brace < 0) return skipBlock(r);
    returns = r.text.slice(r.pos + 2, brace).trim();
    r.pos = brace;
  }
  if (r.text[r.pos] !== '{') return skipBlock(r);
  const f: BamlFunction = { name: name.name, nameSpan: name.span, span: { start, end: start }, params: ps, returns };
  r.pos++;
  const t = r.text;
  for (;;) {
    r.skip();
    if (r.pos >= t.length) break;
    if (t[r.pos] === '}') {
      r.pos++;
      break;
    }
    const key = r.ident();
    if (!key) {
      if (t[r.pos] === '@') {
        // A block attribute (`@@assert(…)`): to the line's end.
        const nl = t.indexOf('\n', r.pos);
        r.pos = nl < 0 ? t.length : nl;
        continue;
      }
      r.pos++;
      continue;
    }
    r.skip(false);
    if (key.name === 'client') {
      const q = r.quoted();
      if (q) f.client = { value: q.value, span: q.span, shorthand: true };
      else {
        const id = /[^\s}]+/y;
        id.lastIndex = r.pos;
        const m = id.exec(t);
        if (m) {
          f.client = { value: m[0], span: { start: r.pos, end: r.pos + m[0].length }, shorthand: m[0].includes('/') };
          r.pos += m[0].length;
        }
      }
    } else if (key.name === 'prompt') {
      const b = r.blockString();
      if (b) f.prompt = { text: b.text, span: b.inner };
      else {
        const q = r.quoted();
        if (q) f.prompt = { text: q.value, span: { start: q.span.start + 1, end: q.span.end - 1 } };
      }
    } else {
      // Any other field: its value to the line's end, or a balanced block.
      if (t[r.pos] === '{') r.balanced();
      else if (t[r.pos] === '#') r.blockString();
      else {
        const nl = t.indexOf('\n', r.pos);
        r.pos = nl < 0 ? t.length : nl;
      }
    }
  }
  f.span = { start, end: r.pos };
  out.functions.push(f);
}

function readClient(r: Reader, start: number, out: BamlFile): void {
  const t = r.text;
  // `client<llm> Name {`
  if (t[r.pos] === '<') {
    const gt = t.indexOf('>', r.pos);
    if (gt < 0) return skipBlock(r);
    r.pos = gt + 1;
  }
  r.skip();
  const name = r.ident();
  if (!name) return skipBlock(r);
  r.skip();
  if (t[r.pos] !== '{') return skipBlock(r);
  const bodyStart = r.pos;
  if (!r.balanced()) r.pos = t.length;
  const body = t.slice(bodyStart, r.pos);
  const c: BamlClient = { name: name.name, nameSpan: name.span, span: { start, end: r.pos } };
  const p = /^\s*provider\s+"?([A-Za-z0-9_\-/.]+)"?/m.exec(body);
  if (p) c.provider = p[1];
  const m = /^\s*model\s+("([^"\n]*)"|([^\s"{}]+))/m.exec(body);
  if (m) {
    const value = m[2] ?? m[3];
    const at = bodyStart + m.index + m[0].length - m[1].length + (m[2] !== undefined ? 1 : 0);
    c.model = { value, span: { start: at, end: at + value.length } };
  }
  const s = /^\s*strategy\s*\[([^\]]*)\]/m.exec(body);
  if (s) c.strategy = s[1].split(/[,\s]+/).map((x) => x.replace(/^"|"$/g, '')).filter(Boolean);
  out.clients.push(c);
}

function readTest(r: Reader, start: number, out: BamlFile): void {
  const t = r.text;
  r.skip();
  const name = r.ident();
  if (!name) return skipBlock(r);
  r.skip();
  if (t[r.pos] !== '{') return skipBlock(r);
  r.pos++;
  const test: BamlTest = { name: name.name, nameSpan: name.span, span: { start, end: start }, functions: [] };
  for (;;) {
    r.skip();
    if (r.pos >= t.length) break;
    if (t[r.pos] === '}') {
      r.pos++;
      break;
    }
    if (t[r.pos] === '@') {
      const nl = t.indexOf('\n', r.pos);
      r.pos = nl < 0 ? t.length : nl;
      continue;
    }
    const key = r.ident();
    if (!key) {
      r.pos++;
      continue;
    }
    r.skip();
    if (key.name === 'functions' && t[r.pos] === '[') {
      const end = t.indexOf(']', r.pos);
      if (end < 0) break;
      test.functions = t
        .slice(r.pos + 1, end)
        .split(/[,\s]+/)
        .filter(Boolean);
      r.pos = end + 1;
    } else if (key.name === 'args' && t[r.pos] === '{') {
      const at = r.pos;
      r.pos++;
      const entries = readEntries(r, 0);
      if (!entries) {
        r.pos = at;
        if (!r.balanced()) r.pos = t.length;
        continue;
      }
      test.args = { entries, span: { start: at, end: r.pos } };
    } else if (t[r.pos] === '{') r.balanced();
    else {
      const nl = t.indexOf('\n', r.pos);
      r.pos = nl < 0 ? t.length : nl;
    }
  }
  test.span = { start, end: r.pos };
  out.tests.push(test);
}

function readTemplateString(r: Reader, start: number, out: BamlFile): void {
  r.skip();
  const name = r.ident();
  if (!name) return skipBlock(r);
  r.skip();
  if (r.text[r.pos] === '(') params(r);
  r.skip();
  const b = r.blockString();
  if (!b) return skipBlock(r);
  out.templateStrings.push({ name: name.name, span: { start, end: r.pos } });
}

function readGenerator(r: Reader, start: number, out: BamlFile): void {
  r.skip();
  const name = r.ident();
  if (!name) return skipBlock(r);
  r.skip();
  if (r.text[r.pos] !== '{') return skipBlock(r);
  const bodyStart = r.pos;
  if (!r.balanced()) r.pos = r.text.length;
  const body = r.text.slice(bodyStart, r.pos);
  const m = /^\s*version\s+"([^"\n]*)"/m.exec(body);
  const g: BamlFile['generators'][number] = { name: name.name, span: { start, end: r.pos } };
  if (m) {
    const at = bodyStart + m.index + m[0].indexOf('"') + 1;
    g.version = { value: m[1], span: { start: at, end: at + m[1].length } };
  }
  out.generators.push(g);
}
