/**
 * Python operators and the sandboxed attribute / item access of Jinja2's
 * ImmutableSandboxedEnvironment (`getattr`, `getitem`), with the builtin methods of str, dict,
 * list, tuple and range that templates call.
 */
import { formatFloat, formatInt, formatStr, parseSpec, percentFloat, percentInt, percentPad } from './pynum';
import {
  codePoints,
  htmlEscape,
  pyCapitalize,
  pyCenter,
  pyCount,
  pyIsAlnum,
  pyIsDigit,
  pyIsLower,
  pyIsNumeric,
  pyIsTitle,
  pyIsUpper,
  pyLen,
  pyLjust,
  pyReplace,
  pyRjust,
  pyRsplit,
  pySplit,
  pySplitlines,
  pyStrip,
  pySwapcase,
  pyTitle,
  pyZfill,
  sliceArray,
  sliceIndices,
  ValueErr,
  PY_WS,
} from './pystr';
import {
  Cycler,
  DictView,
  HugeInt,
  Internal,
  Joiner,
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
  LimitError,
  isStr,
  bigOf,
  floatOf,
  intOut,
  mkInt,
  numOf,
  type Num,
  pyCompare,
  pyContains,
  pyEq,
  pyList,
  pyRepr,
  pyStr,
  strOf,
  typeError,
  typeName,
  valueError,
  wasIterated,
  type Args,
  type Kwargs,
  type PyValue,
} from './values';

/** Largest string / list an operator may build (the output bound is enforced separately). */
export const MAX_BUILD = 20_000_000;

// ---------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------

function undefinedOperand(a: PyValue, b?: PyValue): void {
  if (a instanceof Undefined) throw a.fail();
  if (b instanceof Undefined) throw b.fail();
}

function unsupportedOperand(op: string, a: PyValue, b: PyValue): PyError {
  return typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

function floatOut(n: number): PyFloat {
  return new PyFloat(n);
}

function checkSize(n: number): void {
  if (n > MAX_BUILD) throw new LimitError('a string or list longer than 20 million items');
}

export function markupEscape(v: PyValue): Markup {
  if (v instanceof Markup) return v;
  return new Markup(htmlEscape(pyStr(v)));
}

export function add(a: PyValue, b: PyValue): PyValue {
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (na && nb) {
    if (na.f || nb.f) return floatOut(floatOf(na) + floatOf(nb));
    if (na.big !== undefined || nb.big !== undefined) return intOut(bigOf(na) + bigOf(nb));
    return mkInt(na.n + nb.n, () => bigOf(na) + bigOf(nb));
  }
  if (a instanceof Markup && isStr(b)) return new Markup(a.s + markupEscape(b).s);
  if (b instanceof Markup && typeof a === 'string') return new Markup(markupEscape(a).s + b.s);
  if (typeof a === 'string' && typeof b === 'string') {
    checkSize(a.length + b.length);
    return a + b;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    checkSize(a.length + b.length);
    return a.concat(b);
  }
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple(a.items.concat(b.items));
  if (isStr(a) && !isStr(b)) throw typeError(`can only concatenate str (not "${typeName(b)}") to str`);
  if (Array.isArray(a)) throw typeError(`can only concatenate list (not "${typeName(b)}") to list`);
  throw unsupportedOperand('+', a, b);
}

export function sub(a: PyValue, b: PyValue): PyValue {
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (na && nb) {
    if (na.f || nb.f) return floatOut(floatOf(na) - floatOf(nb));
    if (na.big !== undefined || nb.big !== undefined) return intOut(bigOf(na) - bigOf(nb));
    return mkInt(na.n - nb.n, () => bigOf(na) - bigOf(nb));
  }
  if (a instanceof DictView || b instanceof DictView) throw new Unsupported('set operations on dict views');
  throw unsupportedOperand('-', a, b);
}

function repeat(seq: PyValue, count0: Num): PyValue {
  if (count0.big !== undefined) throw new PyError('OverflowError', "cannot fit 'int' into an index-sized integer");
  const count = Math.max(0, count0.n);
  if (typeof seq === 'string' || seq instanceof Markup) {
    const s = strOf(seq);
    checkSize(s.length * count);
    const r = s.repeat(count);
    return seq instanceof Markup ? new Markup(r) : r;
  }
  if (Array.isArray(seq)) {
    checkSize(seq.length * count);
    const out: PyValue[] = [];
    for (let i = 0; i < count; i++) out.push(...seq);
    return out;
  }
  const t = seq as PyTuple;
  checkSize(t.items.length * count);
  const out: PyValue[] = [];
  for (let i = 0; i < count; i++) out.push(...t.items);
  return new PyTuple(out);
}

const isSeq = (v: PyValue): boolean => typeof v === 'string' || v instanceof Markup || Array.isArray(v) || v instanceof PyTuple;

export function mul(a: PyValue, b: PyValue): PyValue {
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (na && nb) {
    if (na.f || nb.f) return floatOut(floatOf(na) * floatOf(nb));
    if (na.big !== undefined || nb.big !== undefined) return intOut(bigOf(na) * bigOf(nb));
    return mkInt(na.n * nb.n, () => bigOf(na) * bigOf(nb));
  }
  if (isSeq(a) && nb && !nb.f) return repeat(a, nb);
  if (isSeq(b) && na && !na.f) return repeat(b, na);
  if (isSeq(a) && nb) throw typeError("can't multiply sequence by non-int of type 'float'");
  if (isSeq(b) && na) throw typeError("can't multiply sequence by non-int of type 'float'");
  throw unsupportedOperand('*', a, b);
}

function bitLength(b: bigint): number {
  return b === 0n ? 0 : b.toString(2).length;
}

/** Python's int / int for ints beyond 2^53: the correctly rounded quotient. */
function bigTrueDiv(a: bigint, b: bigint): number {
  const neg = a < 0n !== b < 0n;
  let n = a < 0n ? -a : a;
  let d = b < 0n ? -b : b;
  if (n === 0n) return neg ? -0 : 0;
  const shift = bitLength(d) - bitLength(n) + 55;
  if (shift >= 0) n <<= BigInt(shift);
  else d <<= BigInt(-shift);
  let q = n / d;
  const rem = n % d;
  const extra = bitLength(q) - 53;
  const mask = (1n << BigInt(extra)) - 1n;
  const lower = q & mask;
  q >>= BigInt(extra);
  const half = 1n << BigInt(extra - 1);
  if (lower > half || (lower === half && (rem !== 0n || (q & 1n) === 1n))) q += 1n;
  const r = Number(q) * 2 ** (extra - shift);
  if (!Number.isFinite(r)) throw new PyError('OverflowError', 'integer division result too large for a float');
  return neg ? -r : r;
}

export function truediv(a: PyValue, b: PyValue): PyValue {
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (!na || !nb) throw unsupportedOperand('/', a, b);
  if (nb.n === 0 && nb.big === undefined) throw new PyError('ZeroDivisionError', na.f || nb.f ? 'float division by zero' : 'division by zero');
  if (!na.f && !nb.f && (na.big !== undefined || nb.big !== undefined || Math.abs(na.n) > 2 ** 53 || Math.abs(nb.n) > 2 ** 53)) return floatOut(bigTrueDiv(bigOf(na), bigOf(nb)));
  return floatOut(floatOf(na) / floatOf(nb));
}

/** CPython float_divmod. */
function floatDivmod(vx: number, wx: number): [number, number] {
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1.0;
    }
  } else mod = wx < 0 || Object.is(wx, -0) ? -0 : 0;
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    const q = vx / wx;
    floordiv = q < 0 || Object.is(q, -0) ? -0 : 0;
  }
  return [floordiv, mod];
}

export function floordiv(a: PyValue, b: PyValue): PyValue {
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (!na || !nb) throw unsupportedOperand('//', a, b);
  if (nb.n === 0 && nb.big === undefined) throw new PyError('ZeroDivisionError', na.f || nb.f ? 'float floor division by zero' : 'integer division or modulo by zero');
  if (na.f || nb.f) return floatOut(floatDivmod(floatOf(na), floatOf(nb))[0]);
  const x = bigOf(na);
  const y = bigOf(nb);
  let q = x / y;
  if (x % y !== 0n && x < 0n !== y < 0n) q -= 1n;
  return intOut(q);
}

export function mod(a: PyValue, b: PyValue): PyValue {
  // str.__mod__ runs first: an Undefined argument is a mapping to it (it has __getitem__)
  if (isStr(a)) return percentFormat(a, b);
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (!na || !nb) throw unsupportedOperand('%', a, b);
  if (nb.n === 0 && nb.big === undefined) throw new PyError('ZeroDivisionError', na.f || nb.f ? 'float modulo' : 'integer division or modulo by zero');
  if (na.f || nb.f) return floatOut(floatDivmod(floatOf(na), floatOf(nb))[1]);
  if (na.big === undefined && nb.big === undefined) {
    const r = na.n % nb.n;
    return (r !== 0 && r < 0 !== nb.n < 0 ? r + nb.n : r) || 0;
  }
  const x = bigOf(na);
  const y = bigOf(nb);
  const r = x % y;
  return intOut(r !== 0n && r < 0n !== y < 0n ? r + y : r);
}

/** Ints above this many bits are not computed (Python could, but cannot print them: 4300 digits). */
const MAX_POW_BITS = 200_000;

export function pow(a: PyValue, b: PyValue): PyValue {
  undefinedOperand(a, b);
  const na = numOf(a);
  const nb = numOf(b);
  if (!na || !nb) throw unsupportedOperand('** or pow()', a, b);
  if (!na.f && !nb.f) {
    const x = bigOf(na);
    const y = bigOf(nb);
    if (y >= 0n) {
      if (x === 0n) return y === 0n ? 1 : 0;
      if (x === 1n) return 1;
      if (x === -1n) return y % 2n === 0n ? 1 : -1;
      if (y * BigInt(bitLength(x < 0n ? -x : x)) > BigInt(MAX_POW_BITS)) throw new LimitError(`an integer of more than ${MAX_POW_BITS} bits`);
      return intOut(x ** y);
    }
    if (x === 0n) throw new PyError('ZeroDivisionError', '0.0 cannot be raised to a negative power');
    return floatOut(floatPow(floatOf(na), floatOf(nb)));
  }
  const x = floatOf(na);
  const y = floatOf(nb);
  if (x === 0 && y < 0) throw new PyError('ZeroDivisionError', '0.0 cannot be raised to a negative power');
  if (x < 0 && !Number.isInteger(y) && Number.isFinite(y)) throw new Unsupported('a negative number raised to a fractional power (a complex number in Python)');
  return floatOut(floatPow(x, y));
}

function floatPow(x: number, y: number): number {
  const r = Math.pow(x, y);
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) throw new PyError('OverflowError', "(34, 'Numerical result out of range')");
  if (y === 0 || y === 1) return r;
  if (y === 2) return x * x;
  // exact results: integers below 2^53, and powers of two
  if (Number.isInteger(r) && Math.abs(r) < 2 ** 53 && Number.isInteger(x)) return r;
  if (Number.isInteger(x) && Number.isInteger(y) && Number.isInteger(Math.log2(Math.abs(x))) && x !== 0) return r;
  // Math.pow is not guaranteed to round like C's pow() elsewhere
  throw new Unsupported('floating-point powers (JavaScript and C may round them differently)');
}

export function neg(a: PyValue): PyValue {
  undefinedOperand(a);
  const n = numOf(a);
  if (!n) throw typeError(`bad operand type for unary -: '${typeName(a)}'`);
  if (n.f) return floatOut(-n.n);
  return n.big !== undefined ? intOut(-n.big) : mkInt(-n.n);
}

export function pos(a: PyValue): PyValue {
  undefinedOperand(a);
  const n = numOf(a);
  if (!n) throw typeError(`bad operand type for unary +: '${typeName(a)}'`);
  if (n.f) return floatOut(n.n);
  return typeof a === 'boolean' ? n.n : a;
}

export function compare(op: string, a: PyValue, b: PyValue): boolean {
  switch (op) {
    case 'eq':
      return pyEq(a, b);
    case 'ne':
      return !pyEq(a, b);
    case 'in':
      return pyContains(b, a);
    case 'notin':
      return !pyContains(b, a);
  }
  const symbol = op === 'lt' ? '<' : op === 'lteq' ? '<=' : op === 'gt' ? '>' : '>=';
  if (a instanceof DictView || b instanceof DictView) throw new Unsupported('ordering dict views');
  const c = pyCompare(a, b, symbol);
  if (Number.isNaN(c)) return false;
  switch (op) {
    case 'lt':
      return c < 0;
    case 'lteq':
      return c <= 0;
    case 'gt':
      return c > 0;
    default:
      return c >= 0;
  }
}

// ---------------------------------------------------------------------------
// printf-style formatting (str % args)
// ---------------------------------------------------------------------------

const PERCENT_RE = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?[hlL]?([diouxXeEfFgGcrsa%])?/g;

export function toIntForFormat(v: PyValue, conv: string): number | bigint {
  const n = numOf(v);
  if (n) {
    if (n.f) {
      if (conv === 'x' || conv === 'X' || conv === 'o' || conv === 'c') throw typeError(`%${conv} format: an integer is required, not float`);
      if (!Number.isFinite(n.n)) throw new PyError(Number.isNaN(n.n) ? 'ValueError' : 'OverflowError', 'cannot convert float to integer');
      const t = Math.trunc(n.n);
      return Number.isSafeInteger(t) ? t : BigInt(t);
    }
    return n.big ?? n.n;
  }
  throw typeError(`%${conv} format: a real number is required, not ${typeName(v)}`);
}

function toFloatForFormat(v: PyValue, conv: string): number {
  const n = numOf(v);
  if (n) return floatOf(n);
  throw typeError(`must be real number, not ${typeName(v)}`);
  void conv;
}

export function percentFormat(fmt: string | Markup, args: PyValue): PyValue {
  if (fmt instanceof Markup) throw new Unsupported("'%' formatting of Markup (escaped) strings");
  const s = fmt;
  let items: PyValue[];
  let mapping: PyValue | null = null;
  if (args instanceof PyTuple) items = args.items;
  else {
    items = [args];
    if ((args instanceof PyDict || Array.isArray(args) || args instanceof PyRange || args instanceof PyObj || args instanceof DictView || args instanceof Undefined) && !isStr(args)) mapping = args;
  }
  let idx = 0;
  let out = '';
  let last = 0;
  PERCENT_RE.lastIndex = 0;
  const nextArg = (): PyValue => {
    if (idx >= items.length) throw typeError('not enough arguments for format string');
    return items[idx++];
  };
  for (let m = PERCENT_RE.exec(s); m; m = PERCENT_RE.exec(s)) {
    out += s.slice(last, m.index);
    last = m.index + m[0].length;
    const [, key, flagsRaw, widthRaw, precRaw, conv] = m;
    if (!conv) throw valueError(`incomplete format`);
    if (conv === '%' && key === undefined && !flagsRaw && widthRaw === undefined && precRaw === undefined) {
      out += '%';
      continue;
    }
    let value: PyValue;
    let width = 0;
    let precision: number | undefined;
    const flags = flagsRaw ?? '';
    if (widthRaw === '*') {
      const w = nextArg();
      if (typeof w !== 'number') throw typeError('* wants int');
      width = w;
    } else if (widthRaw) width = Number(widthRaw);
    if (precRaw === '*') {
      const p = nextArg();
      if (typeof p !== 'number') throw typeError('* wants int');
      precision = p;
    } else if (precRaw !== undefined) precision = precRaw === '' ? 0 : Number(precRaw);
    let fl = flags;
    if (width < 0) {
      fl += '-';
      width = -width;
    }
    if (key !== undefined) {
      if (mapping instanceof Undefined) throw mapping.fail();
      const fields = mapping instanceof PyDict ? mapping : mapping instanceof PyObj ? mapping.fields : null;
      if (!fields) throw typeError(mapping === null ? 'format requires a mapping' : `${typeName(mapping)} indices must be integers or slices, not str`);
      if (!fields.has(key)) throw new PyError('KeyError', pyRepr(key));
      value = fields.get(key)!;
    } else if (conv === '%') {
      value = null;
    } else value = nextArg();
    let piece: string;
    switch (conv) {
      case 's':
      case 'r':
      case 'a': {
        if (conv === 'a') throw new Unsupported("'%a' formatting");
        if (value instanceof Markup) throw new Unsupported("'%' formatting with Markup arguments");
        let t = conv === 's' ? pyStr(value) : pyRepr(value);
        if (precision !== undefined) t = codePoints(t).slice(0, precision).join('');
        piece = percentPad('', t, fl.replace('0', ''), width, false);
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X':
        if (value instanceof Undefined) throw value.fail();
        piece = wrapValue(() => percentInt(toIntForFormat(value, conv), fl, width, precision, conv === 'i' || conv === 'u' ? 'd' : conv));
        break;
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G':
        if (value instanceof Undefined) throw value.fail();
        piece = percentFloat(toFloatForFormat(value, conv), fl, width, precision, conv);
        break;
      case 'c': {
        let ch: string;
        if (typeof value === 'string' && pyLen(value) === 1) ch = value;
        else if (typeof value === 'number') {
          if (value < 0 || value > 0x10ffff) throw new PyError('OverflowError', '%c arg not in range(0x110000)');
          ch = String.fromCodePoint(value);
        } else throw typeError('%c requires int or char');
        piece = percentPad('', ch, fl.replace('0', ''), width, false);
        break;
      }
      case '%':
        piece = percentPad('', '%', fl.replace('0', ''), width, false);
        break;
      default:
        throw valueError(`unsupported format character '${conv}'`);
    }
    out += piece;
  }
  const rest = s.slice(last);
  if (rest.includes('%')) throw valueError('incomplete format');
  out += rest;
  if (idx < items.length && mapping === null) throw typeError('not all arguments converted during string formatting');
  return out;
}

// ---------------------------------------------------------------------------
// format(value, spec) and str.format
// ---------------------------------------------------------------------------

export function pyFormat(v: PyValue, spec: string): string {
  if (v instanceof Undefined) {
    if (spec) throw typeError('unsupported format string passed to Undefined.__format__');
    return '';
  }
  if (typeof v === 'boolean' && spec === '') return pyStr(v);
  if (typeof v === 'number' || typeof v === 'boolean') return wrapValue(() => formatInt(typeof v === 'boolean' ? (v ? 1 : 0) : v, wrapSpec(spec)));
  if (v instanceof HugeInt) return wrapValue(() => formatInt(v.v, wrapSpec(spec)));
  if (v instanceof PyFloat) return wrapValue(() => formatFloat(v.v, wrapSpec(spec)));
  if (typeof v === 'string' || v instanceof Markup) return wrapValue(() => formatStr(strOf(v), wrapSpec(spec)));
  if (spec !== '') throw typeError(`unsupported format string passed to ${typeName(v)}.__format__`);
  return pyStr(v);
}

function wrapValue(f: () => string): string {
  try {
    return f();
  } catch (e) {
    if (e instanceof ValueErr) throw valueError(e.message);
    throw e;
  }
}

function wrapSpec(spec: string): ReturnType<typeof parseSpec> {
  try {
    return parseSpec(spec);
  } catch (e) {
    if (e instanceof ValueErr) throw valueError(e.message);
    throw e;
  }
}

/**
 * str.format through jinja's SandboxedFormatter: string.Formatter.vformat (not CPython's C
 * str.format: its auto/manual numbering check is looser) with sandboxed attribute / item access.
 * Without the sandbox (Prompty 0.1.x) it is CPython's own str.format: the numbering check reads
 * the field's first part, and `.name` / `[key]` are plain getattr / getitem, which raise.
 */
export function strFormat(env: OpsEnv, fmt: string, args: Args, kwargs: Kwargs): string {
  return vformat(env, fmt, args, kwargs, 2, 0)[0];
}

function vformat(env: OpsEnv, fmt: string, args: Args, kwargs: Kwargs, depth: number, autoIn: number | false): [string, number | false] {
  if (depth < 0) throw valueError('Max string recursion exceeded');
  let auto = autoIn;
  let out = '';
  let i = 0;
  const n = fmt.length;
  while (i < n) {
    const c = fmt[i];
    if (c === '{') {
      if (fmt[i + 1] === '{') {
        out += '{';
        i += 2;
        continue;
      }
      // the field runs to the matching '}' (MarkupIterator: braces nest, ':' restarts the count)
      let j = i + 1;
      let level = 1;
      while (j < n) {
        const d = fmt[j];
        if (d === ':') level = 1;
        else if (d === '{') level++;
        else if (d === '}' && --level === 0) break;
        j++;
      }
      if (j >= n) throw valueError("expected '}' before end of string");
      const field = fmt.slice(i + 1, j);
      i = j + 1;
      let k = 0;
      let br = false;
      for (; k < field.length; k++) {
        const d = field[k];
        if (br) {
          if (d === ']') br = false;
        } else if (d === '[') br = true;
        else if (d === '!' || d === ':') break;
      }
      let name = field.slice(0, k);
      let conv = '';
      let spec = '';
      let rest = field.slice(k);
      if (rest.startsWith('!')) {
        if (rest.length < 2) throw valueError('end of string while looking for conversion specifier');
        conv = rest[1];
        rest = rest.slice(2);
        if (rest && !rest.startsWith(':')) throw valueError("expected ':' after conversion specifier");
      }
      if (rest.startsWith(':')) spec = rest.slice(1);
      const plain = env.sandboxed === false;
      const head = plain ? /^[^.[]*/.exec(name)![0] : name;
      if (head === '') {
        if (auto === false) throw valueError('cannot switch from manual field specification to automatic field numbering');
        name = String(auto) + name;
        auto += 1;
      } else if (/^[0-9]+$/.test(head)) {
        if (auto) throw valueError('cannot switch from manual field specification to automatic field numbering');
        auto = false;
      }
      const m = /^([^.[]*)([\s\S]*)$/.exec(name)!;
      const first = m[1];
      let obj: PyValue;
      if (/^[0-9]+$/.test(first)) {
        const ix = Number(first);
        if (ix >= args.length) throw new PyError('IndexError', 'tuple index out of range');
        obj = args[ix];
      } else {
        if (!kwargs.has(first)) throw new PyError('KeyError', pyRepr(first));
        obj = kwargs.get(first)!;
      }
      let tail = m[2];
      while (tail) {
        const a = /^\.([^.[]+)/.exec(tail);
        if (a) {
          if (plain) {
            const r = lookupAttr(env, obj, a[1]);
            if (r === MISSING) throw new PyError('AttributeError', `'${typeName(obj)}' object has no attribute ${pyRepr(a[1])}`);
            obj = r;
          } else obj = env.getattr(obj, a[1]);
          tail = tail.slice(a[0].length);
          continue;
        }
        const b = /^\[([^\]]+)\]/.exec(tail);
        if (b) {
          const key: PyValue = /^[0-9]+$/.test(b[1]) ? Number(b[1]) : b[1];
          if (plain) {
            const r = lookupItem(obj, key);
            if (r === MISSING) {
              if (obj instanceof PyDict) throw new PyError('KeyError', pyRepr(key));
              const seq = Array.isArray(obj) || obj instanceof PyTuple || typeof obj === 'string' || obj instanceof Markup || obj instanceof PyRange;
              if (seq && typeof key === 'number') throw new PyError('IndexError', `${typeName(obj)} index out of range`);
              throw typeError(seq ? `${typeName(obj)} indices must be integers or slices, not str` : `'${typeName(obj)}' object is not subscriptable`);
            }
            obj = r;
          } else obj = env.getitem(obj, key);
          tail = tail.slice(b[0].length);
          continue;
        }
        throw valueError("Only '.' or '[' may follow ']' in format field specifier");
      }
      if (conv === 'r') obj = pyRepr(obj);
      else if (conv === 's') obj = pyStr(obj);
      else if (conv === 'a') throw new Unsupported('!a conversions');
      else if (conv) throw valueError(`Unknown conversion specifier ${conv}`);
      if (spec.includes('{')) [spec, auto] = vformat(env, spec, args, kwargs, depth - 1, auto);
      out += pyFormat(obj, spec);
      continue;
    }
    if (c === '}') {
      if (fmt[i + 1] === '}') {
        out += '}';
        i += 2;
        continue;
      }
      throw valueError("Single '}' encountered in format string");
    }
    out += c;
    i++;
  }
  return [out, auto];
}

// ---------------------------------------------------------------------------
// Attribute and item access
// ---------------------------------------------------------------------------

export interface OpsEnv {
  getattr(obj: PyValue, name: string): PyValue;
  getitem(obj: PyValue, key: PyValue): PyValue;
  /** False for Jinja2's plain Environment (Prompty 0.1.x): the mutating methods of list and dict work. */
  readonly sandboxed?: boolean;
  /** Jinja2's (mutable) SandboxedEnvironment (promptflow): sandboxed, but the mutating methods of list and dict work. */
  readonly mutable?: boolean;
}

export const MISSING: unique symbol = Symbol('missing');

const STR_ATTRS = new Set('capitalize casefold center count encode endswith expandtabs find format format_map index isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join ljust lower lstrip maketrans partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate upper zfill'.split(' '));
const INT_ATTRS = new Set('as_integer_ratio bit_count bit_length conjugate denominator from_bytes imag numerator real to_bytes'.split(' '));
const FLOAT_ATTRS = new Set('as_integer_ratio conjugate fromhex hex imag is_integer real'.split(' '));
const LIST_UNSAFE = new Set('append clear extend insert pop remove reverse sort'.split(' '));
const DICT_UNSAFE = new Set('clear pop popitem setdefault update'.split(' '));

export class PySlice {
  constructor(
    readonly start: PyValue,
    readonly stop: PyValue,
    readonly step: PyValue,
  ) {}
}

function unsafe(obj: PyValue, name: string): Undefined {
  return new Undefined(`access to attribute '${name}' of '${typeName(obj)}' object is unsafe.`, obj, name, 'security', true);
}

function method(name: string, fn: (args: Args, kwargs: Kwargs) => PyValue): PyFunc {
  return new PyFunc(name, fn);
}

/**
 * Python's `getattr(obj, name)` for our types (no item fallback); MISSING when it raises
 * AttributeError. A method of a builtin value prints as Python's repr of a bound method, whose
 * memory address cannot be known: it is written `0xADDR`, and the interpreter notes the print
 * as not reproduced exactly.
 */
export function lookupAttr(env: OpsEnv, obj: PyValue, name: string): PyValue | typeof MISSING {
  const r = lookupAttrRaw(env, obj, name);
  if (r instanceof PyFunc && r.reprText === undefined && (typeof obj === 'string' || typeof obj === 'number' || typeof obj === 'boolean' || obj instanceof PyFloat || obj instanceof HugeInt || Array.isArray(obj) || obj instanceof PyDict)) {
    return new PyFunc(r.name, r.fn, `<built-in method ${name} of ${typeName(obj)} object at ${ADDRESS}>`);
  }
  return r;
}

/** What a memory address in a Python repr is printed as (the golden renderings mask it the same way). */
export const ADDRESS = '0xADDR';

function lookupAttrRaw(env: OpsEnv, obj: PyValue, name: string): PyValue | typeof MISSING {
  if (/^__.*__$/.test(name)) throw new Unsupported(`access to the special attribute '${name}'`);
  if (obj instanceof Undefined) throw obj.fail();
  if (typeof obj === 'string' || obj instanceof Markup) {
    if (STR_ATTRS.has(name)) return strMethod(env, obj, name);
    if (obj instanceof Markup && (name === 'escape' || name === 'striptags' || name === 'unescape')) throw new Unsupported(`Markup.${name}`);
    return MISSING;
  }
  if (typeof obj === 'number' || typeof obj === 'boolean' || obj instanceof HugeInt) {
    if (INT_ATTRS.has(name)) return intAttr(obj, name);
    return MISSING;
  }
  if (obj instanceof PyFloat) {
    if (FLOAT_ATTRS.has(name)) return floatAttr(obj, name);
    return MISSING;
  }
  if (obj === null) return MISSING;
  if (Array.isArray(obj) || obj instanceof PyTuple) {
    const items = Array.isArray(obj) ? obj : obj.items;
    if (obj instanceof PyTuple && obj.names) {
      const i = obj.names.indexOf(name);
      if (i >= 0) return obj.items[i];
    }
    if (Array.isArray(obj) && LIST_UNSAFE.has(name)) return env.sandboxed === false || env.mutable === true ? listMutator(obj, name) : unsafe(obj, name);
    if (Array.isArray(obj) && name === 'copy') return method('copy', (a, k) => (noArgs('copy', a, k), items.slice()));
    if (name === 'count') return method('count', (a, k) => (arity('count', a, k, 1, 1), items.filter((x) => x === a[0] || pyEq(x, a[0])).length));
    if (name === 'index') return method('index', (a, k) => seqIndex(items, a, k));
    return MISSING;
  }
  if (obj instanceof PyDict) {
    if (DICT_UNSAFE.has(name)) return env.sandboxed === false || env.mutable === true ? dictMutator(env, obj, name) : unsafe(obj, name);
    switch (name) {
      case 'get':
        return method('get', (a, k) => {
          arity('get', a, k, 1, 2);
          const v = obj.has(a[0]) ? obj.get(a[0])! : (a[1] ?? null);
          return v;
        });
      case 'items':
      case 'keys':
      case 'values':
        return method(name, (a, k) => (noArgs(name, a, k), new DictView(name, obj)));
      case 'copy':
        return method('copy', (a, k) => {
          noArgs('copy', a, k);
          const d = new PyDict();
          for (const [x, y] of obj.entries()) d.set(x, y);
          return d;
        });
      case 'fromkeys':
        throw new Unsupported('dict.fromkeys');
    }
    return MISSING;
  }
  if (obj instanceof PyObj) return obj.fields.has(name) ? obj.fields.get(name)! : MISSING;
  if (obj instanceof Namespace) return obj.attrs.has(name) ? obj.attrs.get(name)! : MISSING;
  if (obj instanceof PyRange) {
    if (name === 'start' || name === 'stop' || name === 'step') return obj[name];
    if (name === 'count') return method('count', (a, k) => (arity('count', a, k, 1, 1), pyContains(obj, a[0]) ? 1 : 0));
    if (name === 'index')
      return method('index', (a, k) => {
        arity('index', a, k, 1, 1);
        if (!pyContains(obj, a[0])) throw valueError(`${pyRepr(a[0])} is not in range`);
        return ((numOf(a[0])!.n - obj.start) / obj.step) | 0;
      });
    return MISSING;
  }
  if (obj instanceof DictView) {
    if (name === 'mapping' || name === 'isdisjoint') throw new Unsupported(`dict view .${name}`);
    return MISSING;
  }
  if (obj instanceof PyIter) {
    if (['close', 'send', 'throw', 'gi_running', 'gi_suspended', 'gi_yieldfrom', 'gi_code', 'gi_frame'].includes(name)) throw new Unsupported(`generator .${name}`);
    return MISSING;
  }
  if (obj instanceof Cycler) {
    switch (name) {
      case 'current':
        return obj.items[obj.pos];
      case 'items':
        return new PyTuple(obj.items);
      case 'pos':
        return obj.pos;
      case 'next':
        return method('next', (a, k) => {
          noArgs('next', a, k);
          const v = obj.items[obj.pos];
          obj.pos = (obj.pos + 1) % obj.items.length;
          return v;
        });
      case 'reset':
        return method('reset', (a, k) => {
          noArgs('reset', a, k);
          obj.pos = 0;
          return null;
        });
    }
    return MISSING;
  }
  if (obj instanceof Joiner) {
    if (name === 'sep') return obj.sep;
    if (name === 'used') return obj.used;
    return MISSING;
  }
  if (obj instanceof PyFunc) return MISSING;
  if (obj instanceof Internal) {
    const v = obj.getattr(name);
    return v === undefined ? MISSING : v;
  }
  return MISSING;
}

/**
 * A mutating method of a list or dict, as Jinja2 without its sandbox calls it (Prompty 0.1.x).
 * A container the render has iterated is refused (see wasIterated): Python's iteration would see
 * the change, the copy iterated here would not.
 */
function guardMutation(obj: PyValue[] | PyDict, name: string): void {
  if (wasIterated(obj)) throw new Unsupported(`${typeName(obj)}.${name}() on a ${typeName(obj)} the template has already iterated (Python's iteration sees the change)`);
}

function growth(n: number): void {
  if (n > MAX_BUILD) throw new LimitError(`a list of more than ${MAX_BUILD} items`);
}

function listMutator(obj: PyValue[], name: string): PyFunc {
  return method(name, (a, k) => {
    guardMutation(obj, name);
    switch (name) {
      case 'append':
        arity('append', a, k, 1, 1);
        growth(obj.length + 1);
        obj.push(a[0]);
        return null;
      case 'extend': {
        arity('extend', a, k, 1, 1);
        if (Array.isArray(a[0])) growth(obj.length + a[0].length);
        const items = pyList(a[0], MAX_BUILD);
        growth(obj.length + items.length);
        for (const x of items) obj.push(x);
        return null;
      }
      case 'insert': {
        arity('insert', a, k, 2, 2);
        const n = obj.length;
        let i = intArg(a[0]);
        if (i < 0) i = Math.max(0, i + n);
        if (i > n) i = n;
        growth(n + 1);
        obj.splice(i, 0, a[1]);
        return null;
      }
      case 'pop': {
        arity('pop', a, k, 0, 1);
        if (!obj.length) throw new PyError('IndexError', 'pop from empty list');
        let i = a.length ? intArg(a[0]) : obj.length - 1;
        if (i < 0) i += obj.length;
        if (i < 0 || i >= obj.length) throw new PyError('IndexError', 'pop index out of range');
        return obj.splice(i, 1)[0];
      }
      case 'remove': {
        arity('remove', a, k, 1, 1);
        const i = obj.findIndex((x) => x === a[0] || pyEq(x, a[0]));
        if (i < 0) throw valueError('list.remove(x): x not in list');
        obj.splice(i, 1);
        return null;
      }
      case 'reverse':
        noArgs('reverse', a, k);
        obj.reverse();
        return null;
      case 'clear':
        noArgs('clear', a, k);
        obj.length = 0;
        return null;
    }
    throw new Unsupported(`list.${name}()`);
  });
}

function dictMutator(env: OpsEnv, obj: PyDict, name: string): PyFunc {
  return method(name, (a, k) => {
    guardMutation(obj, name);
    switch (name) {
      case 'clear':
        noArgs('clear', a, k);
        obj.clear();
        return null;
      case 'pop': {
        arity('pop', a, k, 1, 2);
        if (obj.has(a[0])) {
          const v = obj.get(a[0])!;
          obj.delete(a[0]);
          return v;
        }
        if (a.length > 1) return a[1];
        throw new PyError('KeyError', pyRepr(a[0]));
      }
      case 'popitem': {
        noArgs('popitem', a, k);
        const entries = obj.entries();
        if (!entries.length) throw new PyError('KeyError', "'popitem(): dictionary is empty'");
        const [key, v] = entries[entries.length - 1];
        obj.delete(key);
        return new PyTuple([key, v]);
      }
      case 'setdefault': {
        arity('setdefault', a, k, 1, 2);
        if (obj.has(a[0])) return obj.get(a[0])!;
        const v = a.length > 1 ? a[1] : null;
        obj.set(a[0], v);
        return v;
      }
      case 'update': {
        if (a.length > 1) throw typeError(`update expected at most 1 argument, got ${a.length}`);
        const pairs: [PyValue, PyValue][] = [];
        if (a.length) {
          const other = a[0];
          if (other instanceof PyDict) pairs.push(...other.entries());
          else if (other instanceof Undefined) throw other.fail();
          else {
            // A sequence of pairs (an object with keys() would be read as a mapping; none of ours has one besides dict).
            let i = 0;
            for (const item of pyList(other, MAX_BUILD)) {
              if (!(Array.isArray(item) || item instanceof PyTuple || typeof item === 'string')) throw typeError(`cannot convert dictionary update sequence element #${i} to a sequence`);
              const kv = pyList(item, 3);
              if (kv.length !== 2) throw valueError(`dictionary update sequence element #${i} has length ${kv.length}; 2 is required`);
              pairs.push([kv[0], kv[1]]);
              i++;
            }
          }
        }
        for (const [key, v] of k) pairs.push([key, v]);
        growth(obj.size + pairs.length);
        for (const [key, v] of pairs) obj.set(key, v);
        void env;
        return null;
      }
    }
    throw new Unsupported(`dict.${name}()`);
  });
}

/** Python item access `obj[key]`; MISSING when it raises TypeError / LookupError. */
export function lookupItem(obj: PyValue, key: PyValue): PyValue | typeof MISSING {
  if (obj instanceof Undefined) throw obj.fail();
  if (obj instanceof PyDict) {
    if (key instanceof PySlice || Array.isArray(key) || key instanceof PyDict) return MISSING;
    return obj.has(key) ? obj.get(key)! : MISSING;
  }
  if (obj instanceof PyObj) {
    if (key instanceof PySlice || Array.isArray(key) || key instanceof PyDict) return MISSING;
    return obj.fields.has(key) ? obj.fields.get(key)! : MISSING;
  }
  const seq = Array.isArray(obj) ? obj : obj instanceof PyTuple ? obj.items : undefined;
  if (seq || typeof obj === 'string' || obj instanceof Markup || obj instanceof PyRange) {
    if (key instanceof PySlice) {
      const ix = (v: PyValue): number | null | typeof MISSING =>
        v === null ? null : typeof v === 'number' ? v : typeof v === 'boolean' ? (v ? 1 : 0) : v instanceof HugeInt ? (v.v < 0n ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER) : MISSING;
      const a = ix(key.start);
      const b = ix(key.stop);
      const c = ix(key.step);
      if (a === MISSING || b === MISSING || c === MISSING) return MISSING;
      if (c === 0) throw valueError('slice step cannot be zero');
      if (seq) {
        const r = sliceArray(seq, a, b, c);
        return Array.isArray(obj) ? r : new PyTuple(r);
      }
      if (obj instanceof PyRange) {
        const [s, e, st] = sliceIndices(obj.length, a, b, c);
        const start = obj.at(s);
        const stop = obj.start + e * obj.step;
        return new PyRange(start, stop, obj.step * st);
      }
      const cps = codePoints(strOf(obj as string | Markup));
      const r = sliceArray(cps, a, b, c).join('');
      return obj instanceof Markup ? new Markup(r) : r;
    }
    let i: number;
    if (typeof key === 'number') i = key;
    else if (typeof key === 'boolean') i = key ? 1 : 0;
    else return MISSING;
    if (obj instanceof PyRange) {
      const n = obj.length;
      if (i < 0) i += n;
      return i >= 0 && i < n ? obj.at(i) : MISSING;
    }
    const items = seq ?? codePoints(strOf(obj as string | Markup));
    if (i < 0) i += items.length;
    if (i < 0 || i >= items.length) return MISSING;
    return items[i];
  }
  return MISSING;
}

/** `obj[a:b:c]`: jinja2 compiles slices to plain Python subscription (no sandbox getitem, errors propagate). */
export function directSlice(obj: PyValue, sl: PySlice): PyValue {
  if (obj instanceof Undefined) throw obj.fail();
  const bound = (v: PyValue): number | null => {
    if (v === null) return null;
    if (typeof v === 'number') return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v instanceof HugeInt) return v.v < 0n ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
    throw typeError('slice indices must be integers or None or have an __index__ method');
  };
  const seq = Array.isArray(obj) || obj instanceof PyTuple || typeof obj === 'string' || obj instanceof Markup || obj instanceof PyRange;
  if (!seq) {
    if (obj instanceof PyDict || obj instanceof PyObj) throw typeError("unhashable type: 'slice'");
    throw typeError(`'${typeName(obj)}' object is not subscriptable`);
  }
  const a = bound(sl.start);
  const b = bound(sl.stop);
  const c = bound(sl.step);
  if (c === 0) throw valueError('slice step cannot be zero');
  const r = lookupItem(obj, new PySlice(a, b, c) as unknown as PyValue);
  if (r === MISSING) throw typeError('slice indices must be integers or None or have an __index__ method');
  return r;
}

// ---------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------

export function arity(name: string, a: Args, k: Kwargs, min: number, max: number): void {
  if (k.size) throw typeError(`${name}() takes no keyword arguments`);
  if (a.length < min || a.length > max) throw typeError(`${name}() takes ${min === max ? `exactly ${min}` : `at most ${max}`} argument${max === 1 ? '' : 's'} (${a.length} given)`);
}

function noArgs(name: string, a: Args, k: Kwargs): void {
  arity(name, a, k, 0, 0);
}

function seqIndex(items: PyValue[], a: Args, k: Kwargs): number {
  arity('index', a, k, 1, 3);
  const n = items.length;
  let start = a.length > 1 ? intArg(a[1]) : 0;
  let stop = a.length > 2 ? intArg(a[2]) : n;
  if (start < 0) start = Math.max(0, start + n);
  if (stop < 0) stop = Math.max(0, stop + n);
  for (let i = start; i < Math.min(stop, n); i++) if (items[i] === a[0] || pyEq(items[i], a[0])) return i;
  throw valueError(`${pyRepr(a[0])} is not in list`);
}

export function intArg(v: PyValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof HugeInt) throw new PyError('OverflowError', 'Python int too large to convert to C ssize_t');
  if (v instanceof Undefined) throw v.fail();
  throw typeError(`'${typeName(v)}' object cannot be interpreted as an integer`);
}

function strArg(v: PyValue, what: string): string {
  if (typeof v === 'string') return v;
  if (v instanceof Markup) throw new Unsupported('Markup arguments to string methods');
  throw typeError(`${what} must be str, not ${typeName(v)}`);
}

function optStrArg(v: PyValue | undefined, what: string): string | null {
  if (v === undefined || v === null) return null;
  return strArg(v, what);
}

function intAttr(obj: number | boolean | HugeInt, name: string): PyValue {
  const n = typeof obj === 'boolean' ? (obj ? 1 : 0) : obj;
  switch (name) {
    case 'real':
    case 'numerator':
      return n;
    case 'imag':
      return 0;
    case 'denominator':
      return 1;
  }
  throw new Unsupported(`int.${name}`);
}

function floatAttr(obj: PyFloat, name: string): PyValue {
  switch (name) {
    case 'real':
      return obj;
    case 'imag':
      return new PyFloat(0);
    case 'is_integer':
      return method('is_integer', (a, k) => (noArgs('is_integer', a, k), Number.isInteger(obj.v)));
  }
  throw new Unsupported(`float.${name}`);
}

/** `(start, end)` code point window of str.find/count/startswith… as [slice, offset]. */
function window(s: string, a: Args, from: number): [string, number] {
  const hasStart = a.length > from && a[from] !== null;
  const hasEnd = a.length > from + 1 && a[from + 1] !== null;
  if (!hasStart && !hasEnd) return [s, 0];
  const cps = codePoints(s);
  const [st, en] = sliceIndices(cps.length, hasStart ? intArg(a[from]) : null, hasEnd ? intArg(a[from + 1]) : null, 1);
  return [cps.slice(st, Math.max(st, en)).join(''), st];
}

function cpIndex(s: string, unitIndex: number): number {
  return pyLen(s.slice(0, unitIndex));
}

const PY_SPACE_RE = new RegExp(`^[${PY_WS}]+$`);

function strMethod(env: OpsEnv, obj: string | Markup, name: string): PyFunc {
  const s = strOf(obj);
  const isMarkup = obj instanceof Markup;
  const wrap = (r: string): PyValue => (isMarkup ? new Markup(r) : r);
  const f = (fn: (a: Args, k: Kwargs) => PyValue): PyFunc => method(name, fn);
  if (isMarkup && ['join', 'replace', 'format', 'format_map', 'partition', 'rpartition', 'center', 'ljust', 'rjust', 'split', 'rsplit', 'splitlines', 'strip', 'lstrip', 'rstrip', 'removeprefix', 'removesuffix', 'zfill', 'expandtabs'].includes(name))
    return f(() => {
      throw new Unsupported(`Markup.${name} (it escapes its arguments)`);
    });
  switch (name) {
    case 'upper':
      return f((a, k) => (noArgs(name, a, k), wrap(s.toUpperCase())));
    case 'lower':
      return f((a, k) => (noArgs(name, a, k), wrap(s.toLowerCase())));
    case 'casefold':
      return f((a, k) => {
        noArgs(name, a, k);
        if (/[^\x00-\x7f]/.test(s)) throw new Unsupported('str.casefold of non-ASCII text');
        return s.toLowerCase();
      });
    case 'title':
      return f((a, k) => (noArgs(name, a, k), wrap(pyTitle(s))));
    case 'capitalize':
      return f((a, k) => (noArgs(name, a, k), wrap(pyCapitalize(s))));
    case 'swapcase':
      return f((a, k) => (noArgs(name, a, k), wrap(pySwapcase(s))));
    case 'strip':
    case 'lstrip':
    case 'rstrip':
      return f((a, k) => {
        arity(name, a, k, 0, 1);
        return pyStrip(s, optStrArg(a[0], `${name} arg`), name !== 'rstrip', name !== 'lstrip');
      });
    case 'split':
    case 'rsplit':
      return f((a, k) => {
        if (a.length > 2) throw typeError(`${name}() takes at most 2 arguments (${a.length} given)`);
        for (const key of k.keys()) if (key !== 'sep' && key !== 'maxsplit') throw typeError(`${name}() got an unexpected keyword argument '${key}'`);
        const sepV = a.length > 0 ? a[0] : k.has('sep') ? k.get('sep')! : null;
        const maxV = a.length > 1 ? a[1] : k.has('maxsplit') ? k.get('maxsplit')! : -1;
        const sep = optStrArg(sepV, 'must be str or None, not');
        const max = intArg(maxV);
        try {
          return name === 'split' ? pySplit(s, sep, max) : pyRsplit(s, sep, max);
        } catch (e) {
          if (e instanceof ValueErr) throw valueError(e.message);
          throw e;
        }
      });
    case 'splitlines':
      return f((a, k) => {
        if (a.length > 1) throw typeError('splitlines() takes at most 1 argument');
        const keep = a.length ? a[0] : (k.get('keepends') ?? false);
        for (const key of k.keys()) if (key !== 'keepends') throw typeError(`splitlines() got an unexpected keyword argument '${key}'`);
        return pySplitlines(s, truthyArg(keep));
      });
    case 'startswith':
    case 'endswith':
      return f((a, k) => {
        arity(name, a, k, 1, 3);
        const [w] = window(s, a, 1);
        const opts = a[0] instanceof PyTuple ? a[0].items : [a[0]];
        return opts.some((o) => {
          const t = strArg(o, `${name} first arg must be str or a tuple of str, not`);
          return name === 'startswith' ? w.startsWith(t) : w.endsWith(t);
        });
      });
    case 'replace':
      return f((a, k) => {
        arity(name, a, k, 2, 3);
        return pyReplace(s, strArg(a[0], 'replace() argument 1'), strArg(a[1], 'replace() argument 2'), a.length > 2 ? intArg(a[2]) : -1);
      });
    case 'find':
    case 'rfind':
    case 'index':
    case 'rindex':
      return f((a, k) => {
        arity(name, a, k, 1, 3);
        const sub = strArg(a[0], 'must be str, not');
        const [w, off] = window(s, a, 1);
        const at = name === 'find' || name === 'index' ? w.indexOf(sub) : w.lastIndexOf(sub);
        if (at < 0) {
          if (name === 'index' || name === 'rindex') throw valueError('substring not found');
          return -1;
        }
        return off + cpIndex(w, at);
      });
    case 'count':
      return f((a, k) => {
        arity(name, a, k, 1, 3);
        const [w] = window(s, a, 1);
        return pyCount(w, strArg(a[0], 'must be str, not'));
      });
    case 'join':
      return f((a, k) => {
        arity(name, a, k, 1, 1);
        const parts = pyList(a[0]);
        return parts
          .map((p, i) => {
            if (typeof p === 'string') return p;
            if (p instanceof Markup) return p.s;
            throw typeError(`sequence item ${i}: expected str instance, ${typeName(p)} found`);
          })
          .join(s);
      });
    case 'center':
    case 'ljust':
    case 'rjust':
      return f((a, k) => {
        arity(name, a, k, 1, 2);
        const width = intArg(a[0]);
        const fill = a.length > 1 ? strArg(a[1], 'The fill character must be a unicode character, not') : ' ';
        if (pyLen(fill) !== 1) throw typeError('The fill character must be exactly one character long');
        if (width > MAX_BUILD) throw new LimitError('a string longer than 20 million characters');
        return name === 'center' ? pyCenter(s, width, fill) : name === 'ljust' ? pyLjust(s, width, fill) : pyRjust(s, width, fill);
      });
    case 'zfill':
      return f((a, k) => {
        arity(name, a, k, 1, 1);
        const width = intArg(a[0]);
        if (width > MAX_BUILD) throw new LimitError('a string longer than 20 million characters');
        return pyZfill(s, width);
      });
    case 'partition':
    case 'rpartition':
      return f((a, k) => {
        arity(name, a, k, 1, 1);
        const sep = strArg(a[0], 'must be str, not');
        if (sep === '') throw valueError('empty separator');
        const at = name === 'partition' ? s.indexOf(sep) : s.lastIndexOf(sep);
        if (at < 0) return name === 'partition' ? new PyTuple([s, '', '']) : new PyTuple(['', '', s]);
        return new PyTuple([s.slice(0, at), sep, s.slice(at + sep.length)]);
      });
    case 'removeprefix':
      return f((a, k) => {
        arity(name, a, k, 1, 1);
        const p = strArg(a[0], 'removeprefix() argument must be str, not');
        return p && s.startsWith(p) ? s.slice(p.length) : s;
      });
    case 'removesuffix':
      return f((a, k) => {
        arity(name, a, k, 1, 1);
        const p = strArg(a[0], 'removesuffix() argument must be str, not');
        return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
      });
    case 'expandtabs':
      return f((a, k) => {
        arity(name, a, k, 0, 1);
        const size = a.length ? intArg(a[0]) : 8;
        let out = '';
        let col = 0;
        for (const c of s) {
          if (c === '\t') {
            if (size > 0) {
              const nsp = size - (col % size);
              out += ' '.repeat(nsp);
              col += nsp;
            }
          } else {
            out += c;
            col = c === '\n' || c === '\r' ? 0 : col + 1;
          }
        }
        return out;
      });
    case 'format':
      return f((a, k) => strFormat(env, s, a, k));
    case 'isspace':
      return f((a, k) => (noArgs(name, a, k), s.length > 0 && PY_SPACE_RE.test(s)));
    case 'isalpha':
      return f((a, k) => (noArgs(name, a, k), s.length > 0 && /^\p{L}+$/u.test(s)));
    case 'isascii':
      return f((a, k) => (noArgs(name, a, k), /^[\x00-\x7f]*$/.test(s)));
    case 'isdecimal':
      return f((a, k) => (noArgs(name, a, k), s.length > 0 && /^\p{Nd}+$/u.test(s)));
    case 'isdigit':
      return f((a, k) => (noArgs(name, a, k), pyIsDigit(s)));
    case 'isnumeric':
      return f((a, k) => (noArgs(name, a, k), pyIsNumeric(s)));
    case 'isalnum':
      return f((a, k) => (noArgs(name, a, k), pyIsAlnum(s)));
    case 'isidentifier':
      return f((a, k) => {
        noArgs(name, a, k);
        if (/[^\x00-\x7f]/.test(s)) throw new Unsupported('str.isidentifier of non-ASCII text');
        return /^[A-Za-z_][A-Za-z0-9_]*$/.test(s);
      });
    case 'islower':
      return f((a, k) => (noArgs(name, a, k), pyIsLower(s)));
    case 'isupper':
      return f((a, k) => (noArgs(name, a, k), pyIsUpper(s)));
    case 'istitle':
      return f((a, k) => (noArgs(name, a, k), pyIsTitle(s)));
    case 'isprintable':
      return f((a, k) => (noArgs(name, a, k), !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u.test(s.replace(/ /g, ''))));
  }
  return f(() => {
    throw new Unsupported(`str.${name}`);
  });
}

function truthyArg(v: PyValue): boolean {
  if (v === null || v === false || v === 0 || v === '') return false;
  if (v instanceof PyFloat) return v.v !== 0;
  return true;
}

