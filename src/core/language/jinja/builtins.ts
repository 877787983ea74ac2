/**
 * Jinja2's default filters and tests (jinja2/filters.py, jinja2/tests.py 3.1) and the globals of the
 * default namespace, over the value model of values.ts. Filters that cannot be reproduced
 * (`random`, `pprint`, `urlize`, `lipsum`) report unsupported-feature when they run.
 */
import { fixedDigits, floatRepr, roundFloat } from './pynum';
import { PY_WS, codePoints, htmlEscape, toAsciiDecimal, pyCapitalize, pyCenter, pyIsLower, pyIsUpper, pyLen, pyReplace, pySplitlines, pyStrip } from './pystr';
import { MAX_BUILD, MISSING, add, compare, intArg, lookupAttr, markupEscape, percentFormat } from './ops';
import {
  Cycler,
  DictView,
  HugeInt,
  Internal,
  Joiner,
  LimitError,
  Markup,
  Namespace,
  PyDict,
  PyError,
  PyFloat,
  PyFunc,
  PyIter,
  PyObj,
  PyRange,
  PyTuple,
  Undefined,
  Unsupported,
  hashKey,
  isIterable,
  isStr,
  bigOf,
  bigStr,
  floatOf as floatOfNum,
  intOut,
  numOf,
  pyCompare,
  pyContains,
  pyEq,
  pyIterate,
  pyLenOf,
  pyList,
  pyRepr,
  pyStr,
  strOf,
  truthy,
  typeError,
  typeName,
  valueError,
  markIterated,
  type Args,
  type Kwargs,
  type PyValue,
} from './values';

export interface BuiltinEnv {
  getattr(obj: PyValue, name: string): PyValue;
  getitem(obj: PyValue, key: PyValue): PyValue;
  callFilter(name: string, value: PyValue, args: Args, kwargs: Kwargs): PyValue;
  callTest(name: string, value: PyValue, args: Args, kwargs: Kwargs): boolean;
  call(fn: PyValue, args: Args, kwargs: Kwargs): PyValue;
  /** Count work (iterations); throws LimitError beyond the bound. */
  tick(n?: number): void;
  /** False for Jinja2's plain Environment (Prompty 0.1.x): mutating methods work and range() has no MAX_RANGE. */
  readonly sandboxed?: boolean;
}

type Filter = (env: BuiltinEnv, value: PyValue, args: Args, kwargs: Kwargs) => PyValue;
type Test = (env: BuiltinEnv, value: PyValue, args: Args, kwargs: Kwargs) => boolean;

const REQUIRED: unique symbol = Symbol('required');
type Param = [string, PyValue | typeof REQUIRED];

/** Python argument binding for a function taking `params` after the value. */
function bind(fname: string, args: Args, kwargs: Kwargs, params: Param[]): PyValue[] {
  if (args.length > params.length) throw typeError(`${fname}() takes from 1 to ${params.length + 1} positional arguments but ${args.length + 1} were given`);
  const out: (PyValue | typeof MISSING)[] = params.map(() => MISSING);
  args.forEach((a, i) => (out[i] = a));
  for (const [k, v] of kwargs) {
    const i = params.findIndex(([n]) => n === k);
    if (i < 0) throw typeError(`${fname}() got an unexpected keyword argument '${k}'`);
    if (out[i] !== MISSING) throw typeError(`${fname}() got multiple values for argument '${k}'`);
    out[i] = v;
  }
  return out.map((v, i) => {
    if (v !== MISSING) return v;
    const d = params[i][1];
    if (d === REQUIRED) throw typeError(`${fname}() missing 1 required positional argument: '${params[i][0]}'`);
    return d;
  });
}

/** markupsafe.soft_str */
function softStr(v: PyValue): string | Markup {
  if (typeof v === 'string' || v instanceof Markup) return v;
  return pyStr(v);
}

function keepMarkup(v: string | Markup, r: string): PyValue {
  return v instanceof Markup ? new Markup(r) : r;
}

function ignoreCase(v: PyValue): PyValue {
  if (typeof v === 'string') return v.toLowerCase();
  if (v instanceof Markup) return new Markup(v.s.toLowerCase());
  return v;
}

function attrParts(attr: PyValue): PyValue[] {
  if (attr === null) return [];
  if (typeof attr === 'string') return attr.split('.').map((x) => (/^[0-9]+$/.test(x) ? Number(x) : x));
  if (attr instanceof Markup) return attr.s.split('.').map((x) => (/^[0-9]+$/.test(x) ? Number(x) : x));
  return [attr];
}

function attrGetter(env: BuiltinEnv, attribute: PyValue, post?: (v: PyValue) => PyValue, dflt: PyValue = null): (item: PyValue) => PyValue {
  const parts = attrParts(attribute);
  return (item) => {
    let v = item;
    for (const p of parts) {
      v = env.getitem(v, p);
      if (dflt !== null && v instanceof Undefined) v = dflt;
    }
    return post ? post(v) : v;
  };
}

function multiAttrGetter(env: BuiltinEnv, attribute: PyValue, post?: (v: PyValue) => PyValue): (item: PyValue) => PyValue[] {
  const split: PyValue[] = typeof attribute === 'string' ? attribute.split(',') : [attribute];
  const parts = split.map(attrParts);
  return (item) =>
    parts.map((ps) => {
      let v = item;
      for (const p of ps) v = env.getitem(v, p);
      return post ? post(v) : v;
    });
}

function iterList(env: BuiltinEnv, v: PyValue): PyValue[] {
  const it = pyIterate(v);
  const out: PyValue[] = [];
  for (let r = it.next(); !r.done; r = it.next()) {
    env.tick();
    out.push(r.value);
  }
  return out;
}

function gen(typeName: string, g: Iterator<PyValue>): PyIter {
  return new PyIter(g, typeName);
}

/** Stable sort by keys with Python's `<` (TypeError on incomparable keys). */
function pySorted<T>(items: T[], key: (x: T) => PyValue, reverse: boolean): T[] {
  const keyed = items.map((x, i) => ({ x, k: key(x), i }));
  keyed.sort((a, b) => {
    const c = pyCompare(a.k, b.k, '<');
    const d = Number.isNaN(c) ? 0 : c;
    return reverse ? -d : d;
  });
  return keyed.map((e) => e.x);
}

function toIntStrict(v: PyValue, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof HugeInt) throw new PyError('OverflowError', 'Python int too large to convert to C ssize_t');
  if (v instanceof Undefined) throw v.fail();
  throw typeError(`'${typeName(v)}' object cannot be interpreted as an integer${what ? '' : ''}`);
}

// ---------------------------------------------------------------------------
// Python's int() and float() of strings
// ---------------------------------------------------------------------------

const WS_STRIP = (s: string): string => pyStrip(s, null, true, true);

export function parsePyFloat(s: string): number | undefined {
  const t = WS_STRIP(toAsciiDecimal(s));
  const m = /^([+-]?)(?:(inf|infinity)|(nan))$/i.exec(t);
  if (m) return m[2] ? (m[1] === '-' ? -Infinity : Infinity) : NaN;
  if (!/^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(t)) return undefined;
  return Number(t.replace(/_/g, ''));
}

function parsePyInt(s: string, base: number): number | HugeInt | undefined {
  let t = WS_STRIP(toAsciiDecimal(s));
  let sign = 1;
  if (t[0] === '+' || t[0] === '-') {
    if (t[0] === '-') sign = -1;
    t = t.slice(1);
  }
  let b = base;
  const prefix = /^0([xob])/i.exec(t);
  if (b === 0) {
    if (prefix) {
      b = { x: 16, o: 8, b: 2 }[prefix[1].toLowerCase() as 'x' | 'o' | 'b'];
      t = t.slice(2);
      if (t.startsWith('_')) t = t.slice(1);
    } else {
      b = 10;
      if (/^0+(?:_?0)*$/.test(t)) return 0;
      if (/^0/.test(t)) return undefined;
    }
  } else if (prefix && { x: 16, o: 8, b: 2 }[prefix[1].toLowerCase() as 'x' | 'o' | 'b'] === b) {
    t = t.slice(2);
    if (t.startsWith('_')) t = t.slice(1);
  }
  if (b < 2 || b > 36) throw valueError('int() base must be >= 2 and <= 36, or 0');
  const digits = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, b);
  const re = new RegExp(`^[${digits}](?:_?[${digits}])*$`, 'i');
  if (!re.test(t)) return undefined;
  const clean = t.replace(/_/g, '').toLowerCase();
  if (b === 10 && clean.length > 4300) return undefined;
  let v = 0n;
  for (const c of clean) v = v * BigInt(b) + BigInt(digits.indexOf(c));
  return intOut(sign < 0 ? -v : v);
}

function floatOf(v: PyValue): number | 'type' | 'value' {
  if (v instanceof Undefined) throw v.fail();
  if (typeof v === 'string' || v instanceof Markup) {
    const r = parsePyFloat(strOf(v));
    return r === undefined ? 'value' : r;
  }
  const n = numOf(v);
  if (n) {
    if (n.big !== undefined && !Number.isFinite(n.n)) throw new PyError('OverflowError', 'int too large to convert to float');
    return n.n;
  }
  return 'type';
}

/** int(x) of a finite float. */
function truncInt(f: number): PyValue {
  const t = Math.trunc(f);
  if (Number.isSafeInteger(t)) return t === 0 ? 0 : t;
  return intOut(BigInt(t));
}

// ---------------------------------------------------------------------------
// JSON (json.dumps with sort_keys=True, ensure_ascii=True) for tojson
// ---------------------------------------------------------------------------

function jsonStr(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

function jsonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return floatRepr(x);
}

function jsonKey(k: PyValue): string {
  if (typeof k === 'string') return k;
  if (k instanceof Markup) return k.s;
  if (k instanceof PyFloat) return jsonFloat(k.v);
  if (k === true) return 'true';
  if (k === false) return 'false';
  if (k === null) return 'null';
  if (typeof k === 'number') return String(k);
  throw typeError(`keys must be str, int, float, bool or None, not ${typeName(k)}`);
}

function jsonDumps(v: PyValue, indent: string | null, level: number, stack: Set<object>): string {
  if (level > 64) throw new LimitError('values nested deeper than 64 levels');
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return jsonStr(v);
  if (v instanceof Markup) return jsonStr(v.s);
  if (v instanceof PyFloat) return jsonFloat(v.v);
  if (v instanceof HugeInt) return bigStr(v.v);
  const nl = (n: number): string => (indent === null ? '' : '\n' + indent.repeat(n));
  const sep = indent === null ? ', ' : ',';
  if (Array.isArray(v) || v instanceof PyTuple) {
    const items = Array.isArray(v) ? v : v.items;
    if (!items.length) return '[]';
    if (stack.has(v)) throw valueError('Circular reference detected');
    stack.add(v);
    const parts = items.map((x) => jsonDumps(x, indent, level + 1, stack));
    stack.delete(v);
    return '[' + nl(level + 1) + parts.join(sep + nl(level + 1)) + nl(level) + ']';
  }
  if (v instanceof PyDict) {
    if (!v.size) return '{}';
    if (stack.has(v)) throw valueError('Circular reference detected');
    stack.add(v);
    const entries = pySorted(v.entries(), (e) => e[0], false);
    const parts = entries.map(([k, x]) => jsonStr(jsonKey(k)) + ': ' + jsonDumps(x, indent, level + 1, stack));
    stack.delete(v);
    return '{' + nl(level + 1) + parts.join(sep + nl(level + 1)) + nl(level) + '}';
  }
  throw typeError(`Object of type ${typeName(v)} is not JSON serializable`);
}

export function tojson(v: PyValue, indentV: PyValue): Markup {
  let indent: string | null = null;
  if (indentV !== null) {
    if (typeof indentV === 'string') indent = indentV;
    else if (typeof indentV === 'number' || typeof indentV === 'boolean') indent = ' '.repeat(Math.max(0, Number(indentV)));
    else throw typeError(`can't multiply sequence by non-int of type '${typeName(indentV)}'`);
  }
  const s = jsonDumps(v, indent, 0, new Set());
  return new Markup(s.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/'/g, '\\u0027'));
}

// ---------------------------------------------------------------------------
// textwrap (for wordwrap): TextWrapper(width, expand_tabs=False, replace_whitespace=False, …)
// ---------------------------------------------------------------------------

const TW_WS = '\\t\\n\\v\\f\\r ';
const W = '[\\p{L}\\p{N}_]';
const LT = '[\\p{L}\\p{Nl}\\p{No}_]';
const WP = `[\\p{L}\\p{N}_!"'&.,?]`;
const WORDSEP = new RegExp(
  `([${TW_WS}]+|(?<=${WP})-{2,}(?=${W})|[^${TW_WS}]+?(?:-(?:(?<=${LT}{2}-)|(?<=${LT}-${LT}-))(?=${LT}-?${LT})|(?=[${TW_WS}]|$)|(?<=${WP})(?=-{2,}${W})))`,
  'u',
);
const WORDSEP_SIMPLE = new RegExp(`([${TW_WS}]+)`);

function twWrap(text: string, width: number, breakLong: boolean, breakHyphens: boolean): string[] {
  const chunks = text.split(breakHyphens ? WORDSEP : WORDSEP_SIMPLE).filter((c) => c);
  if (width <= 0) throw valueError(`invalid width ${width} (must be > 0)`);
  const lines: string[] = [];
  chunks.reverse();
  const isBlank = (c: string): boolean => pyStrip(c, null, true, true) === '';
  while (chunks.length) {
    const cur: string[] = [];
    let curLen = 0;
    if (isBlank(chunks[chunks.length - 1]) && lines.length) chunks.pop();
    while (chunks.length) {
      const l = pyLen(chunks[chunks.length - 1]);
      if (curLen + l <= width) {
        cur.push(chunks.pop()!);
        curLen += l;
      } else break;
    }
    if (chunks.length && pyLen(chunks[chunks.length - 1]) > width) {
      const spaceLeft = width < 1 ? 1 : width - curLen;
      if (breakLong) {
        let end = spaceLeft;
        const chunk = codePoints(chunks[chunks.length - 1]);
        if (breakHyphens && chunk.length > spaceLeft) {
          const head = chunk.slice(0, spaceLeft).join('');
          const hyphen = head.lastIndexOf('-');
          if (hyphen > 0) {
            const hcp = pyLen(head.slice(0, hyphen));
            if (chunk.slice(0, hcp).some((c) => c !== '-')) end = hcp + 1;
          }
        }
        cur.push(chunk.slice(0, end).join(''));
        chunks[chunks.length - 1] = chunk.slice(end).join('');
      } else if (!cur.length) cur.push(chunks.pop()!);
      curLen = cur.reduce((n, c) => n + pyLen(c), 0);
    }
    if (cur.length && isBlank(cur[cur.length - 1])) {
      curLen -= pyLen(cur[cur.length - 1]);
      cur.pop();
    }
    if (cur.length) lines.push(cur.join(''));
  }
  return lines;
}

// ---------------------------------------------------------------------------
// striptags (markupsafe 3): comments, tags, whitespace, then html.unescape
// ---------------------------------------------------------------------------

function striptags(input: string): string {
  let value = input;
  for (;;) {
    const start = value.indexOf('<!--');
    if (start < 0) break;
    const end = value.indexOf('-->', start);
    if (end < 0) break;
    value = value.slice(0, start) + value.slice(end + 3);
  }
  for (;;) {
    const start = value.indexOf('<');
    if (start < 0) break;
    const end = value.indexOf('>', start);
    if (end < 0) break;
    value = value.slice(0, start) + value.slice(end + 1);
  }
  value = value.split(new RegExp(`[${PY_WS}]+`)).filter((x) => x).join(' ');
  if (!value.includes('&')) return value;
  return value.replace(/&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)/g, (m, body: string) => {
    const named: Record<string, string> = { 'amp;': '&', 'lt;': '<', 'gt;': '>', 'quot;': '"', 'apos;': "'", 'nbsp;': '\u00a0' };
    if (body in named) return named[body];
    const num = /^#([xX])?([0-9a-fA-F]+);?$/.exec(body);
    if (num) {
      const cp = parseInt(num[2], num[1] ? 16 : 10);
      if ((cp >= 0x20 && cp < 0x7f) || (cp >= 0xa0 && cp < 0xd800) || (cp > 0xdfff && cp < 0xfdd0)) return String.fromCodePoint(cp);
    }
    throw new Unsupported(`striptags of the HTML entity '${m}' (html.unescape's full entity table is not reproduced)`);
  });
}

// ---------------------------------------------------------------------------
// urlencode
// ---------------------------------------------------------------------------

function urlQuote(v: PyValue, forQs: boolean): string {
  const s = typeof v === 'string' ? v : v instanceof Markup ? v.s : pyStr(v);
  const bytes = new TextEncoder().encode(s);
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9_.\-~]/.test(c) || (!forQs && c === '/')) out += c;
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return forQs ? out.replace(/%20/g, '+') : out;
}

// ---------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------

function lenOf(v: PyValue): number {
  return pyLenOf(v);
}

function reversedOf(env: BuiltinEnv, v: PyValue): PyValue {
  if (typeof v === 'string' || v instanceof Markup) return keepMarkup(v, codePoints(strOf(v)).reverse().join(''));
  markIterated(v);
  const rev = (items: PyValue[], tn: string): PyIter => gen(tn, items.slice().reverse()[Symbol.iterator]());
  if (Array.isArray(v)) return rev(v, 'list_reverseiterator');
  if (v instanceof PyTuple) return rev(v.items, 'reversed');
  if (v instanceof PyDict) return rev(v.keys(), 'dict_reversekeyiterator');
  if (v instanceof DictView) return rev(pyList(v), v.kind === 'keys' ? 'dict_reversekeyiterator' : v.kind === 'values' ? 'dict_reversevalueiterator' : 'dict_reverseitemiterator');
  if (v instanceof PyRange) return rev(pyList(v), 'range_iterator');
  if (v instanceof Undefined) return rev([], 'reversed');
  if (v instanceof Internal && v.pyTypeName === 'LoopContext') throw new Unsupported('reversing a loop object');
  if (v instanceof PyIter) return iterList(env, v).reverse();
  if (v instanceof PyObj) throw new PyError('KeyError', '0');
  throw new PyError('FilterArgumentError', 'argument must be iterable');
}

function selectOrReject(env: BuiltinEnv, value: PyValue, args: Args, kwargs: Kwargs, select: boolean, lookupAttr: boolean): PyValue {
  const g = function* (): Generator<PyValue> {
    if (!truthy(value)) return;
    let trans: (x: PyValue) => PyValue = (x) => x;
    let off = 0;
    if (lookupAttr) {
      if (!args.length) throw new PyError('FilterArgumentError', 'Missing parameter for attribute name');
      trans = attrGetter(env, args[0]);
      off = 1;
    }
    let test: (x: PyValue) => boolean;
    if (args.length > off) {
      const name = args[off];
      const rest = args.slice(1 + off);
      test = (x) => env.callTest(typeof name === 'string' ? name : '\u0000', x, rest, kwargs);
    } else test = (x) => truthy(x);
    const it = pyIterate(value);
    for (let r = it.next(); !r.done; r = it.next()) {
      env.tick();
      if (test(trans(r.value)) === select) yield r.value;
    }
  };
  return gen('generator', g());
}

function doRound(value: PyValue, precision: PyValue, method: PyValue): PyValue {
  if (!(method === 'common' || method === 'ceil' || method === 'floor')) throw new PyError('FilterArgumentError', 'method must be common, ceil or floor');
  if (value instanceof Undefined) throw typeError("type Undefined doesn't define __round__ method");
  const n = numOf(value);
  if (!n) throw typeError(`type ${typeName(value)} doesn't define __round__ method`);
  if (typeof precision !== 'number' && typeof precision !== 'boolean') throw typeError(`'${typeName(precision)}' object cannot be interpreted as an integer`);
  const p = Number(precision);
  if (method === 'common') {
    if (!n.f) {
      if (p >= 0) return typeof value === 'boolean' ? n.n : value;
      if (-p > 400) return 0;
      const x = bigOf(n);
      const q = 10n ** BigInt(-p);
      let base = x / q;
      let r = x % q;
      if (r < 0n) {
        r += q;
        base -= 1n;
      }
      if (r * 2n > q || (r * 2n === q && base % 2n !== 0n)) base += 1n;
      return intOut(base * q);
    }
    return new PyFloat(roundFloat(n.n, p));
  }
  const scale = p >= 0 ? 10 ** p : 10 ** p;
  if (p >= 0 && !Number.isSafeInteger(scale)) throw new Unsupported('rounding with a huge precision');
  const prod = floatOfNum(n) * scale;
  if (!Number.isFinite(prod)) throw new PyError('OverflowError', 'cannot convert float infinity to integer');
  const r = method === 'ceil' ? Math.ceil(prod) : Math.floor(prod);
  if (!Number.isSafeInteger(r)) throw new Unsupported('an integer beyond 2^53');
  return new PyFloat(r / scale);
}

function filesizeformat(value: PyValue, binary: PyValue): string {
  const f = floatOf(value);
  if (f === 'type') throw typeError(`float() argument must be a string or a real number, not '${typeName(value)}'`);
  if (f === 'value') throw valueError(`could not convert string to float: ${pyRepr(value)}`);
  const bytes = f;
  const bin = truthy(binary);
  const base = bin ? 1024 : 1000;
  const prefixes = bin ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'] : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  if (bytes === 1) return '1 Byte';
  if (bytes < base) {
    if (!Number.isFinite(bytes)) throw new PyError('OverflowError', 'cannot convert float infinity to integer');
    return `${Math.trunc(bytes)} Bytes`;
  }
  let unit = 0;
  let prefix = '';
  for (let i = 0; i < prefixes.length; i++) {
    unit = base ** (i + 2);
    prefix = prefixes[i];
    if (bytes < unit) break;
  }
  return `${fixedDigits((base * bytes) / unit, 1)} ${prefix}`;
}

function indent(s: PyValue, width: PyValue, first: PyValue, blank: PyValue): PyValue {
  if (s instanceof Undefined) throw s.fail();
  if (!isStr(s)) throw typeError(`unsupported operand type(s) for +=: '${typeName(s)}' and 'str'`);
  if (s instanceof Markup) throw new Unsupported('indent of Markup (escaped) strings');
  let ind: string;
  if (typeof width === 'string') ind = width;
  else if (width instanceof Markup) throw new Unsupported('indent with a Markup width');
  else {
    const w = numOf(width);
    if (!w || w.f) throw typeError(`can't multiply sequence by non-int of type '${typeName(width)}'`);
    ind = ' '.repeat(Math.max(0, w.n));
  }
  const text = s + '\n';
  let rv: string;
  if (truthy(blank)) rv = pySplitlines(text).join('\n' + ind);
  else {
    const lines = pySplitlines(text);
    rv = lines.shift() ?? '';
    if (lines.length) rv += '\n' + lines.map((l) => (l ? ind + l : l)).join('\n');
  }
  if (truthy(first)) rv = ind + rv;
  return rv;
}

function truncate(s: PyValue, length: PyValue, killwords: PyValue, end: PyValue, leeway: PyValue): PyValue {
  const len = toIntStrict(length, '');
  const endLen = lenOf(end);
  const lw = leeway === null ? 5 : toIntStrict(leeway, '');
  if (!(len >= endLen)) throw new PyError('AssertionError', `expected length >= ${endLen}, got ${len}`);
  if (!(lw >= 0)) throw new PyError('AssertionError', `expected leeway >= 0, got ${lw}`);
  if (lenOf(s) <= len + lw) return s;
  if (!isStr(s)) {
    if (truthy(killwords)) throw typeError(`can only concatenate ${typeName(s)} (not "str") to ${typeName(s)}`);
    throw new PyError('AttributeError', `'${typeName(s)}' object has no attribute 'rsplit'`);
  }
  if (s instanceof Markup || end instanceof Markup) throw new Unsupported('truncate of Markup (escaped) strings');
  if (typeof end !== 'string') throw typeError(`can only concatenate str (not "${typeName(end)}") to str`);
  const cps = codePoints(s);
  const cut = Math.max(0, len - endLen);
  const head = cps.slice(0, cut < 0 ? 0 : cut).join('');
  if (truthy(killwords)) return head + end;
  const sp = head.lastIndexOf(' ');
  return (sp >= 0 ? head.slice(0, sp) : head) + end;
}

function doTitle(s: string): string {
  const parts = s.split(new RegExp(`([-${PY_WS}({\\[<]+)`));
  let out = '';
  for (const item of parts) {
    if (!item) continue;
    const cps = codePoints(item);
    out += cps[0].toUpperCase() + cps.slice(1).join('').toLowerCase();
  }
  return out;
}

function wordcount(s: string): number {
  return (s.match(/[\p{L}\p{N}_]+/gu) ?? []).length;
}

function minMax(env: BuiltinEnv, value: PyValue, caseSensitive: PyValue, attribute: PyValue, isMax: boolean): PyValue {
  const items = iterList(env, value);
  if (!items.length) return new Undefined('No aggregated item, sequence was empty.');
  const key = attrGetter(env, attribute, truthy(caseSensitive) ? undefined : ignoreCase);
  let best = items[0];
  let bestKey = key(best);
  for (let i = 1; i < items.length; i++) {
    const k = key(items[i]);
    if (compare(isMax ? 'gt' : 'lt', k, bestKey)) {
      best = items[i];
      bestKey = k;
    }
  }
  return best;
}

function dictItems(value: PyValue): [PyValue, PyValue][] {
  if (value instanceof PyDict) return value.entries();
  if (value instanceof Undefined) throw value.fail();
  if (value instanceof PyObj) {
    if (value.fields.has('items')) throw new Unsupported("calling an item's 'items' field");
    throw new PyError('UndefinedError', `'Item object' has no attribute 'items'`);
  }
  throw new PyError('AttributeError', `'${typeName(value)}' object has no attribute 'items'`);
}

export const FILTERS: Record<string, Filter> = {
  abs: (_e, v, a, k) => {
    bind('abs', a, k, []);
    if (v instanceof Undefined) throw typeError("bad operand type for abs(): 'Undefined'");
    const n = numOf(v);
    if (!n) throw typeError(`bad operand type for abs(): '${typeName(v)}'`);
    if (n.big !== undefined) return intOut(n.big < 0n ? -n.big : n.big);
    return n.f ? new PyFloat(Math.abs(n.n)) : Math.abs(n.n);
  },
  attr: (env, v, a, k) => {
    const [name] = bind('attr', a, k, [['name', REQUIRED]]);
    if (typeof name !== 'string') throw typeError('attribute name must be string');
    if (v instanceof Undefined) throw v.fail();
    const r = lookupAttr(env, v, name);
    if (r === MISSING) return new Undefined(undefined, v, name, 'undefined', true);
    if (/^_/.test(name)) return new Undefined(`access to attribute '${name}' of '${typeName(v)}' object is unsafe.`, v, name, 'security', true);
    return r;
  },
  batch: (env, v, a, k) => {
    const [lc, fill] = bind('batch', a, k, [
      ['linecount', REQUIRED],
      ['fill_with', null],
    ]);
    const g = function* (): Generator<PyValue> {
      const n = numOf(lc);
      let tmp: PyValue[] = [];
      const it = pyIterate(v);
      for (let r = it.next(); !r.done; r = it.next()) {
        env.tick();
        if (n && tmp.length === n.n) {
          yield tmp;
          tmp = [];
        }
        if (!n) throw typeError(`'==' comparison of int and ${typeName(lc)}`);
        tmp.push(r.value);
      }
      if (tmp.length) {
        if (fill !== null && n && tmp.length < n.n) {
          const missing = n.n - tmp.length;
          for (let i = 0; i < missing; i++) tmp.push(fill);
        }
        yield tmp;
      }
    };
    return gen('generator', g());
  },
  capitalize: (_e, v, a, k) => {
    bind('capitalize', a, k, []);
    const s = softStr(v);
    return keepMarkup(s, pyCapitalize(strOf(s)));
  },
  center: (_e, v, a, k) => {
    const [w] = bind('center', a, k, [['width', 80]]);
    const s = softStr(v);
    const width = intArg(w);
    if (width > MAX_BUILD) throw new LimitError('a string longer than 20 million characters');
    return keepMarkup(s, pyCenter(strOf(s), width));
  },
  count: (_e, v, a, k) => (bind('count', a, k, []), lenOf(v)),
  length: (_e, v, a, k) => (bind('length', a, k, []), lenOf(v)),
  default: (_e, v, a, k) => {
    const [d, boolean] = bind('default', a, k, [
      ['default_value', ''],
      ['boolean', false],
    ]);
    return v instanceof Undefined || (truthy(boolean) && !truthy(v)) ? d : v;
  },
  dictsort: (_e, v, a, k) => {
    const [cs, by, reverse] = bind('dictsort', a, k, [
      ['case_sensitive', false],
      ['by', 'key'],
      ['reverse', false],
    ]);
    let pos: number;
    if (pyEq(by, 'key')) pos = 0;
    else if (pyEq(by, 'value')) pos = 1;
    else throw new PyError('FilterArgumentError', 'You can only sort by either "key" or "value"');
    const items = dictItems(v);
    return pySorted(items, (e) => (truthy(cs) ? e[pos] : ignoreCase(e[pos])), truthy(reverse)).map((e) => new PyTuple(e));
  },
  escape: (_e, v, a, k) => (bind('escape', a, k, []), markupEscape(v)),
  filesizeformat: (_e, v, a, k) => {
    const [binary] = bind('filesizeformat', a, k, [['binary', false]]);
    return filesizeformat(v, binary);
  },
  first: (_e, v, a, k) => {
    bind('first', a, k, []);
    const r = pyIterate(v).next();
    return r.done ? new Undefined('No first item, sequence was empty.') : r.value;
  },
  float: (_e, v, a, k) => {
    const [d] = bind('float', a, k, [['default', new PyFloat(0)]]);
    const f = floatOf(v);
    return typeof f === 'number' ? new PyFloat(f) : d;
  },
  forceescape: (_e, v, a, k) => (bind('forceescape', a, k, []), new Markup(htmlEscape(v instanceof Markup ? v.s : pyStr(v)))),
  format: (_e, v, a, k) => {
    if (a.length && k.size) throw new PyError('FilterArgumentError', "can't handle positional and keyword arguments at the same time");
    const s = softStr(v);
    let args: PyValue;
    if (k.size) {
      const d = new PyDict();
      for (const [x, y] of k) d.set(x, y);
      args = d;
    } else args = new PyTuple(a);
    return percentFormat(s, args);
  },
  groupby: (env, v, a, k) => {
    const [attribute, dflt, cs] = bind('groupby', a, k, [
      ['attribute', REQUIRED],
      ['default', null],
      ['case_sensitive', false],
    ]);
    const expr = attrGetter(env, attribute, truthy(cs) ? undefined : ignoreCase, dflt);
    const sorted = pySorted(iterList(env, v), expr, false);
    const groups: [PyValue, PyValue[]][] = [];
    for (const item of sorted) {
      const key = expr(item);
      const last = groups[groups.length - 1];
      if (last && pyEq(last[0], key)) last[1].push(item);
      else groups.push([key, [item]]);
    }
    const out = truthy(cs) ? groups : groups.map(([, vals]) => [attrGetter(env, attribute, undefined, dflt)(vals[0]), vals] as [PyValue, PyValue[]]);
    return out.map(([key, vals]) => new PyTuple([key, vals], ['grouper', 'list']));
  },
  indent: (_e, v, a, k) => {
    const [width, first, blank] = bind('indent', a, k, [
      ['width', 4],
      ['first', false],
      ['blank', false],
    ]);
    return indent(v, width, first, blank);
  },
  int: (_e, v, a, k) => {
    const [d, base] = bind('int', a, k, [
      ['default', 0],
      ['base', 10],
    ]);
    if (v instanceof Undefined) throw v.fail();
    const fallback = (): PyValue => {
      const f = floatOf(v);
      if (typeof f !== 'number' || !Number.isFinite(f)) return d;
      return truncInt(f);
    };
    if (typeof v === 'string' || v instanceof Markup) {
      const b = numOf(base);
      if (!b || b.f) return fallback();
      const r = parsePyInt(strOf(v), b.n);
      return r === undefined ? fallback() : r;
    }
    if (typeof v === 'number') return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v instanceof PyFloat) {
      if (Number.isNaN(v.v)) return d;
      if (!Number.isFinite(v.v)) throw new PyError('OverflowError', 'cannot convert float infinity to integer');
      return truncInt(v.v);
    }
    if (v instanceof HugeInt) return v;
    return d;
  },
  items: (env, v, a, k) => {
    bind('items', a, k, []);
    if (v instanceof Undefined) return gen('generator', [][Symbol.iterator]());
    if (!(v instanceof PyDict)) throw typeError('Can only get item pairs from a mapping.');
    void env;
    markIterated(v);
    return gen('generator', v.entries().map((e) => new PyTuple(e))[Symbol.iterator]());
  },
  join: (env, v, a, k) => {
    const [d, attribute] = bind('join', a, k, [
      ['d', ''],
      ['attribute', null],
    ]);
    let items = iterList(env, v);
    if (attribute !== null) items = items.map(attrGetter(env, attribute));
    const sep = pyStr(d);
    const parts = items.map(pyStr);
    const total = parts.reduce((n, p) => n + p.length, 0) + sep.length * Math.max(0, parts.length - 1);
    if (total > MAX_BUILD) throw new LimitError('a string longer than 20 million characters');
    return parts.join(sep);
  },
  last: (env, v, a, k) => {
    bind('last', a, k, []);
    if (v instanceof PyIter) throw typeError("'generator' object is not reversible");
    const r = reversedOf(env, v);
    const it = pyIterate(r);
    const x = it.next();
    return x.done ? new Undefined('No last item, sequence was empty.') : x.value;
  },
  list: (env, v, a, k) => (bind('list', a, k, []), iterList(env, v)),
  lower: (_e, v, a, k) => {
    bind('lower', a, k, []);
    const s = softStr(v);
    return keepMarkup(s, strOf(s).toLowerCase());
  },
  upper: (_e, v, a, k) => {
    bind('upper', a, k, []);
    const s = softStr(v);
    return keepMarkup(s, strOf(s).toUpperCase());
  },
  map: (env, v, a, k) => {
    const g = function* (): Generator<PyValue> {
      if (!truthy(v)) return;
      let fn: (x: PyValue) => PyValue;
      if (!a.length && k.has('attribute')) {
        const kw = new Map(k);
        const attribute = kw.get('attribute')!;
        kw.delete('attribute');
        const dflt = kw.has('default') ? kw.get('default')! : null;
        kw.delete('default');
        if (kw.size) throw new PyError('FilterArgumentError', `Unexpected keyword argument '${[...kw.keys()][0]}'`);
        fn = attrGetter(env, attribute, undefined, dflt);
      } else {
        if (!a.length) throw new PyError('FilterArgumentError', 'map requires a filter argument');
        const name = a[0];
        const rest = a.slice(1);
        fn = (x) => env.callFilter(typeof name === 'string' ? name : '\u0000', x, rest, k);
      }
      const it = pyIterate(v);
      for (let r = it.next(); !r.done; r = it.next()) {
        env.tick();
        yield fn(r.value);
      }
    };
    return gen('generator', g());
  },
  max: (env, v, a, k) => {
    const [cs, attribute] = bind('max', a, k, [
      ['case_sensitive', false],
      ['attribute', null],
    ]);
    return minMax(env, v, cs, attribute, true);
  },
  min: (env, v, a, k) => {
    const [cs, attribute] = bind('min', a, k, [
      ['case_sensitive', false],
      ['attribute', null],
    ]);
    return minMax(env, v, cs, attribute, false);
  },
  pprint: () => {
    throw new Unsupported("the 'pprint' filter");
  },
  random: () => {
    throw new Unsupported("the 'random' filter (its result is random)");
  },
  reject: (env, v, a, k) => selectOrReject(env, v, a, k, false, false),
  rejectattr: (env, v, a, k) => selectOrReject(env, v, a, k, false, true),
  select: (env, v, a, k) => selectOrReject(env, v, a, k, true, false),
  selectattr: (env, v, a, k) => selectOrReject(env, v, a, k, true, true),
  replace: (_e, v, a, k) => {
    const [old, nw, count] = bind('replace', a, k, [
      ['old', REQUIRED],
      ['new', REQUIRED],
      ['count', null],
    ]);
    const c = count === null ? -1 : intArg(count);
    const s = pyStr(v);
    const o = pyStr(old);
    const n = pyStr(nw);
    if (o === '' && n.length * (pyLen(s) + 1) > MAX_BUILD) throw new LimitError('a string longer than 20 million characters');
    const r = pyReplace(s, o, n, c);
    if (r.length > MAX_BUILD) throw new LimitError('a string longer than 20 million characters');
    return r;
  },
  reverse: (env, v, a, k) => (bind('reverse', a, k, []), reversedOf(env, v)),
  round: (_e, v, a, k) => {
    const [precision, method] = bind('round', a, k, [
      ['precision', 0],
      ['method', 'common'],
    ]);
    return doRound(v, precision, method);
  },
  safe: (_e, v, a, k) => (bind('safe', a, k, []), v instanceof Markup ? v : new Markup(pyStr(v))),
  slice: (env, v, a, k) => {
    const [slicesV, fill] = bind('slice', a, k, [
      ['slices', REQUIRED],
      ['fill_with', null],
    ]);
    const seq = iterList(env, v);
    const slices = intArg(slicesV);
    if (slices === 0) throw new PyError('ZeroDivisionError', 'integer division or modulo by zero');
    const g = function* (): Generator<PyValue> {
      const length = seq.length;
      const per = Math.floor(length / slices);
      const extra = ((length % slices) + slices) % slices;
      let offset = 0;
      for (let n = 0; n < slices; n++) {
        env.tick();
        const start = offset + n * per;
        if (n < extra) offset += 1;
        const end = offset + (n + 1) * per;
        const tmp = seq.slice(Math.max(0, start), Math.max(0, end));
        if (fill !== null && n >= extra) tmp.push(fill);
        yield tmp;
      }
    };
    return gen('generator', g());
  },
  sort: (env, v, a, k) => {
    const [reverse, cs, attribute] = bind('sort', a, k, [
      ['reverse', false],
      ['case_sensitive', false],
      ['attribute', null],
    ]);
    const key = multiAttrGetter(env, attribute, truthy(cs) ? undefined : ignoreCase);
    return pySorted(iterList(env, v), key, truthy(reverse));
  },
  string: (_e, v, a, k) => (bind('string', a, k, []), softStr(v)),
  striptags: (_e, v, a, k) => (bind('striptags', a, k, []), striptags(v instanceof Markup ? v.s : pyStr(v))),
  sum: (env, v, a, k) => {
    const [attribute, start] = bind('sum', a, k, [
      ['attribute', null],
      ['start', 0],
    ]);
    if (isStr(start)) throw typeError("sum() can't sum strings [use ''.join(seq) instead]");
    let items = iterList(env, v);
    if (attribute !== null) items = items.map(attrGetter(env, attribute));
    let acc: PyValue = start;
    for (const x of items) acc = add(acc, x);
    return acc;
  },
  title: (_e, v, a, k) => (bind('title', a, k, []), doTitle(strOf(softStr(v)))),
  tojson: (_e, v, a, k) => {
    const [ind] = bind('tojson', a, k, [['indent', null]]);
    return tojson(v, ind);
  },
  trim: (_e, v, a, k) => {
    const [chars] = bind('trim', a, k, [['chars', null]]);
    const s = softStr(v);
    if (chars !== null && typeof chars !== 'string') throw typeError(`strip arg must be None or str`);
    return keepMarkup(s, pyStrip(strOf(s), chars, true, true));
  },
  truncate: (_e, v, a, k) => {
    const [length, killwords, end, leeway] = bind('truncate', a, k, [
      ['length', 255],
      ['killwords', false],
      ['end', '...'],
      ['leeway', null],
    ]);
    return truncate(v, length, killwords, end, leeway);
  },
  unique: (env, v, a, k) => {
    const [cs, attribute] = bind('unique', a, k, [
      ['case_sensitive', false],
      ['attribute', null],
    ]);
    const getter = attrGetter(env, attribute, truthy(cs) ? undefined : ignoreCase);
    const g = function* (): Generator<PyValue> {
      const seen = new Set<string>();
      const it = pyIterate(v);
      for (let r = it.next(); !r.done; r = it.next()) {
        env.tick();
        const key = hashKey(getter(r.value));
        if (!seen.has(key)) {
          seen.add(key);
          yield r.value;
        }
      }
    };
    return gen('generator', g());
  },
  urlencode: (env, v, a, k) => {
    bind('urlencode', a, k, []);
    if (isStr(v) || !isIterable(v)) return urlQuote(v, false);
    const items = v instanceof PyDict ? v.entries().map((e) => new PyTuple(e)) : iterList(env, v);
    return items
      .map((it) => {
        const pair = pyList(it);
        if (pair.length !== 2) throw valueError(`too many values to unpack (expected 2)`);
        return `${urlQuote(pair[0], true)}=${urlQuote(pair[1], true)}`;
      })
      .join('&');
  },
  urlize: () => {
    throw new Unsupported("the 'urlize' filter");
  },
  wordcount: (_e, v, a, k) => (bind('wordcount', a, k, []), wordcount(strOf(softStr(v)))),
  wordwrap: (_e, v, a, k) => {
    const [width, breakLong, wrapstring, breakHyphens] = bind('wordwrap', a, k, [
      ['width', 79],
      ['break_long_words', true],
      ['wrapstring', null],
      ['break_on_hyphens', true],
    ]);
    if (!isStr(v)) {
      if (v instanceof Undefined) throw new PyError('UndefinedError', "'Undefined' has no attribute 'splitlines'");
      throw new PyError('AttributeError', `'${typeName(v)}' object has no attribute 'splitlines'`);
    }
    if (v instanceof Markup) throw new Unsupported('wordwrap of Markup strings');
    const ws = wrapstring === null ? '\n' : wrapstring;
    if (typeof ws !== 'string') throw typeError('sequence item 0: expected str instance');
    const w = intArg(width);
    return pySplitlines(v)
      .map((line) => twWrap(line, w, truthy(breakLong), truthy(breakHyphens)).join(ws))
      .join(ws);
  },
  xmlattr: (_e, v, a, k) => {
    const [autospace] = bind('xmlattr', a, k, [['autospace', true]]);
    const items: string[] = [];
    for (const [key, val] of dictItems(v)) {
      if (val === null || val instanceof Undefined) continue;
      const ks = pyStr(key);
      if (/[ \t\n\r\f\v/>=]/.test(ks)) throw valueError(`Invalid character in attribute name: ${pyRepr(key)}`);
      items.push(`${markupEscape(key).s}="${markupEscape(val).s}"`);
    }
    let rv = items.join(' ');
    if (truthy(autospace) && rv) rv = ' ' + rv;
    return rv;
  },
};
FILTERS.d = FILTERS.default;
FILTERS.e = FILTERS.escape;

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

function isCallable(v: PyValue): boolean {
  return v instanceof PyFunc || v instanceof Undefined || v instanceof Joiner || (v instanceof Internal && (v.pyTypeName === 'Macro' || v.pyTypeName === 'LoopContext'));
}

function cmpTest(op: string): Test {
  return (_e, v, a, k) => {
    const [other] = bind(op, a, k, [['b', REQUIRED]]);
    return compare(op, v, other);
  };
}

export const TESTS: Record<string, Test> = {
  odd: (_e, v, a, k) => (bind('test_odd', a, k, []), pyEq(percentOrMod(v, 2), 1)),
  even: (_e, v, a, k) => (bind('test_even', a, k, []), pyEq(percentOrMod(v, 2), 0)),
  divisibleby: (_e, v, a, k) => {
    const [num] = bind('test_divisibleby', a, k, [['num', REQUIRED]]);
    return pyEq(percentOrMod(v, num), 0);
  },
  defined: (_e, v, a, k) => (bind('test_defined', a, k, []), !(v instanceof Undefined)),
  undefined: (_e, v, a, k) => (bind('test_undefined', a, k, []), v instanceof Undefined),
  filter: (_e, v, a, k) => (bind('test_filter', a, k, []), isStr(v) && strOf(v) in FILTERS),
  test: (_e, v, a, k) => (bind('test_test', a, k, []), isStr(v) && strOf(v) in TESTS),
  none: (_e, v, a, k) => (bind('test_none', a, k, []), v === null),
  boolean: (_e, v, a, k) => (bind('test_boolean', a, k, []), typeof v === 'boolean'),
  false: (_e, v, a, k) => (bind('test_false', a, k, []), v === false),
  true: (_e, v, a, k) => (bind('test_true', a, k, []), v === true),
  integer: (_e, v, a, k) => (bind('test_integer', a, k, []), typeof v === 'number' || v instanceof HugeInt),
  float: (_e, v, a, k) => (bind('test_float', a, k, []), v instanceof PyFloat),
  lower: (_e, v, a, k) => (bind('test_lower', a, k, []), pyIsLower(pyStr(v))),
  upper: (_e, v, a, k) => (bind('test_upper', a, k, []), pyIsUpper(pyStr(v))),
  string: (_e, v, a, k) => (bind('test_string', a, k, []), isStr(v)),
  mapping: (_e, v, a, k) => (bind('test_mapping', a, k, []), v instanceof PyDict),
  number: (_e, v, a, k) => (bind('test_number', a, k, []), typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat || v instanceof HugeInt),
  sequence: (_e, v, a, k) => {
    bind('test_sequence', a, k, []);
    return isStr(v) || Array.isArray(v) || v instanceof PyTuple || v instanceof PyDict || v instanceof PyRange || v instanceof Undefined;
  },
  iterable: (_e, v, a, k) => (bind('test_iterable', a, k, []), isIterable(v)),
  callable: (_e, v, a, k) => (bind('callable', a, k, []), isCallable(v)),
  sameas: (_e, v, a, k) => {
    const [other] = bind('test_sameas', a, k, [['other', REQUIRED]]);
    if (v === null || typeof v === 'boolean' || other === null || typeof other === 'boolean') return v === other;
    if (typeof v === 'object' && typeof other === 'object' && !(v instanceof PyFloat) && !(other instanceof PyFloat)) {
      if (v === other) return true;
      if (v instanceof Undefined || other instanceof Undefined) return false;
      if (typeName(v) !== typeName(other)) return false;
    }
    if (typeName(v) !== typeName(other)) return false;
    throw new Unsupported("'sameas' on numbers or strings (object identity in Python)");
  },
  escaped: (_e, v, a, k) => (bind('test_escaped', a, k, []), v instanceof Markup),
  in: (_e, v, a, k) => {
    const [seq] = bind('test_in', a, k, [['seq', REQUIRED]]);
    return pyContains(seq, v);
  },
  '==': cmpTest('eq'),
  eq: cmpTest('eq'),
  equalto: cmpTest('eq'),
  '!=': cmpTest('ne'),
  ne: cmpTest('ne'),
  '>': cmpTest('gt'),
  gt: cmpTest('gt'),
  greaterthan: cmpTest('gt'),
  ge: cmpTest('gteq'),
  '>=': cmpTest('gteq'),
  '<': cmpTest('lt'),
  lt: cmpTest('lt'),
  lessthan: cmpTest('lt'),
  '<=': cmpTest('lteq'),
  le: cmpTest('lteq'),
};

function percentOrMod(v: PyValue, n: PyValue): PyValue {
  // value % num, with str % … being printf formatting as in Python
  return modOp(v, n);
}

import { mod as modOp } from './ops';

// ---------------------------------------------------------------------------
// Globals: range, dict, lipsum, cycler, joiner, namespace
// ---------------------------------------------------------------------------

export const MAX_RANGE = 100000;
/** Largest range() rendered where the sandbox does not bound it (Prompty 0.1.x). */
export const MAX_UNSANDBOXED_RANGE = 1_000_000;

export function makeGlobals(env: BuiltinEnv): Map<string, PyValue> {
  const g = new Map<string, PyValue>();
  g.set(
    'range',
    new PyFunc(
      'range',
      (a, k) => {
        if (k.size) throw typeError('range() takes no keyword arguments');
        if (a.length < 1 || a.length > 3) throw typeError(`range expected at most 3 arguments, got ${a.length}`);
        const ints = a.map((x) => toIntStrict(x, ''));
        const [start, stop, step] = ints.length === 1 ? [0, ints[0], 1] : [ints[0], ints[1], ints[2] ?? 1];
        if (step === 0) throw valueError('range() arg 3 must not be zero');
        const r = new PyRange(start, stop, step);
        if (env.sandboxed !== false && r.length > MAX_RANGE) throw new PyError('OverflowError', `Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`);
        // Without the sandbox Python's range has no bound; a range is lazy here, but a list of it is not.
        if (r.length > MAX_UNSANDBOXED_RANGE) throw new Unsupported(`range() of more than ${MAX_UNSANDBOXED_RANGE} items (Jinja2 without its sandbox, as Prompty 0.1.x renders, has no bound; Context Lens stops there)`);
        return r;
      },
      "<class 'range'>",
    ),
  );
  g.set(
    'dict',
    new PyFunc(
      'dict',
      (a, k) => {
        if (a.length > 1) throw typeError(`dict expected at most 1 argument, got ${a.length}`);
        const d = new PyDict();
        if (a.length) {
          const src = a[0];
          if (src instanceof PyDict) for (const [x, y] of src.entries()) d.set(x, y);
          else {
            for (const item of iterList(env, src)) {
              const pair = pyList(item);
              if (pair.length !== 2) throw valueError(`dictionary update sequence element has length ${pair.length}; 2 is required`);
              d.set(pair[0], pair[1]);
            }
          }
        }
        for (const [x, y] of k) d.set(x, y);
        return d;
      },
      "<class 'dict'>",
    ),
  );
  g.set(
    'lipsum',
    new PyFunc('lipsum', () => {
      throw new Unsupported("'lipsum' (random text)");
    }),
  );
  g.set(
    'cycler',
    new PyFunc(
      'cycler',
      (a, k) => {
        if (k.size) throw typeError("Cycler.__init__() got an unexpected keyword argument");
        if (!a.length) throw new PyError('RuntimeError', 'at least one item has to be provided');
        return new Cycler(a.slice());
      },
      "<class 'jinja2.utils.Cycler'>",
    ),
  );
  g.set(
    'joiner',
    new PyFunc(
      'joiner',
      (a, k) => {
        const [sep] = bind('Joiner.__init__', a, k, [['sep', ', ']]);
        return new Joiner(sep);
      },
      "<class 'jinja2.utils.Joiner'>",
    ),
  );
  g.set(
    'namespace',
    new PyFunc(
      'namespace',
      (a, k) => {
        const d = (g.get('dict') as PyFunc).fn(a, k) as PyDict;
        return new Namespace(d);
      },
      "<class 'jinja2.utils.Namespace'>",
    ),
  );
  return g;
}

/** Joiner.__call__ */
export function callJoiner(j: Joiner, a: Args, k: Kwargs): PyValue {
  if (a.length || k.size) throw typeError('Joiner.__call__() takes 1 positional argument');
  if (!j.used) {
    j.used = true;
    return '';
  }
  return j.sep;
}

