/**
 * Python number formatting over JS doubles: `repr(float)`, exact (correctly rounded, half-even)
 * fixed / exponent / general formatting as CPython's dtoa does, the format-spec mini-language and
 * printf-style `%`. Ints are JS safe integers; the callers keep them in range.
 */
import { pyLen, ValueErr } from './pystr';

/** `repr(float)` / `str(float)`. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, expS] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const e = Number(expS);
  const decpt = e + 1;
  if (decpt > -4 && decpt <= 16) return sign + placeFixed(digits, decpt, true);
  return sign + digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
}

function placeFixed(digits: string, decpt: number, dot0: boolean): string {
  if (decpt <= 0) return '0.' + '0'.repeat(-decpt) + digits;
  if (decpt >= digits.length) return digits + '0'.repeat(decpt - digits.length) + (dot0 ? '.0' : '');
  return digits.slice(0, decpt) + '.' + digits.slice(decpt);
}

/** |x| = m * 2^e exactly. */
function decompose(x: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  const mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp === 0) return { m: mant, e: -1074 };
  return { m: mant | (1n << 52n), e: exp - 1075 };
}

const TEN = 10n;

/** round_half_even(|x| * 10^s) as a BigInt (x finite). */
export function roundScaled(x: number, s: number): bigint {
  const { m, e } = decompose(x);
  let num = m;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  if (s >= 0) num *= TEN ** BigInt(s);
  else den *= TEN ** BigInt(-s);
  const q = num / den;
  const r = num - q * den;
  const twice = r * 2n;
  if (twice > den || (twice === den && (q & 1n) === 1n)) return q + 1n;
  return q;
}

function isNeg(x: number): boolean {
  return x < 0 || Object.is(x, -0);
}

/** Digits of `%.{p}f` without sign. */
export function fixedDigits(x: number, p: number): string {
  const q = roundScaled(x, p).toString();
  if (p === 0) return q;
  const s = q.padStart(p + 1, '0');
  return s.slice(0, s.length - p) + '.' + s.slice(s.length - p);
}

/** Mantissa digits (p+1 of them) and decimal exponent of `%.{p}e`. */
function expParts(x: number, p: number): { digits: string; exp: number } {
  if (x === 0) return { digits: '0'.repeat(p + 1), exp: 0 };
  let e0 = Math.floor(Math.log10(Math.abs(x)));
  for (let guard = 0; guard < 4; guard++) {
    const q = roundScaled(x, p - e0);
    const s = q.toString();
    if (s.length > p + 1) {
      e0++;
      continue;
    }
    if (s.length < p + 1) {
      e0--;
      continue;
    }
    return { digits: s, exp: e0 };
  }
  const s = roundScaled(x, p - e0).toString();
  return { digits: s.slice(0, p + 1), exp: e0 };
}

function expString(digits: string, exp: number, upper: boolean, alt: boolean): string {
  return digits[0] + (digits.length > 1 || alt ? '.' : '') + digits.slice(1) + (upper ? 'E' : 'e') + (exp < 0 ? '-' : '+') + String(Math.abs(exp)).padStart(2, '0');
}

/** Unsigned body of a float formatted with a type letter (e, f, g, %, or '' for the repr-like general form). */
function floatBody(ax: number, type: string, precision: number | undefined, alt: boolean): string {
  const upper = type === 'E' || type === 'F' || type === 'G';
  if (!Number.isFinite(ax)) {
    const s = Number.isNaN(ax) ? 'nan' : 'inf';
    return upper ? s.toUpperCase() : s;
  }
  switch (type) {
    case 'f':
    case 'F': {
      const s = fixedDigits(ax, precision ?? 6);
      return alt && !s.includes('.') ? s + '.' : s;
    }
    case 'e':
    case 'E': {
      const p = precision ?? 6;
      const { digits, exp } = expParts(ax, p);
      return expString(digits, exp, upper, alt);
    }
    case '%': {
      const s = fixedDigits(ax * 100, precision ?? 6);
      return (alt && !s.includes('.') ? s + '.' : s) + '%';
    }
    case 'g':
    case 'G':
    case 'n':
    case '': {
      if (type === '' && precision === undefined) return floatRepr(ax);
      let p = precision ?? 6;
      if (p === 0) p = 1;
      const { exp } = expParts(ax, p - 1);
      const limit = type === '' ? p - 1 : p;
      let s: string;
      if (exp >= -4 && exp < limit) s = fixedDigits(ax, p - 1 - exp);
      else {
        const ep = expParts(ax, p - 1);
        s = expString(ep.digits, ep.exp, upper, alt);
      }
      if (!alt) {
        const [mant, ex] = s.split(/(?=[eE])/);
        let m = mant;
        if (m.includes('.')) m = m.replace(/0+$/, '').replace(/\.$/, '');
        s = m + (ex ?? '');
      }
      if (type === '' && !/[.eE]/.test(s)) s += '.0';
      return s;
    }
  }
  throw new ValueErr(`Unknown format code '${type}' for object of type 'float'`);
}

export interface FormatSpec {
  fill: string;
  align: string;
  sign: string;
  z: boolean;
  alt: boolean;
  zero: boolean;
  width: number;
  grouping: string;
  precision: number | undefined;
  type: string;
}

const SPEC_RE = /^(?:([\s\S])?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/u;

export function parseSpec(spec: string): FormatSpec {
  const m = SPEC_RE.exec(spec);
  if (!m) throw new ValueErr('Invalid format specifier');
  return {
    fill: m[1] ?? '',
    align: m[2] ?? '',
    sign: m[3] ?? '',
    z: m[4] !== undefined,
    alt: m[5] !== undefined,
    zero: m[6] !== undefined,
    width: m[7] !== undefined ? Number(m[7]) : 0,
    grouping: m[8] ?? '',
    precision: m[9] !== undefined ? Number(m[9]) : undefined,
    type: m[10] ?? '',
  };
}

function group(intDigits: string, sep: string, every: number): string {
  if (!sep) return intDigits;
  let out = '';
  for (let i = 0; i < intDigits.length; i++) {
    if (i > 0 && (intDigits.length - i) % every === 0) out += sep;
    out += intDigits[i];
  }
  return out;
}

function pad(body: string, signStr: string, spec: FormatSpec, defaultAlign: string): string {
  let fill = spec.fill || ' ';
  let align = spec.align || defaultAlign;
  if (spec.zero && !spec.align) {
    fill = spec.fill || '0';
    align = '=';
  }
  const len = pyLen(signStr) + pyLen(body);
  if (spec.width <= len) return signStr + body;
  const n = spec.width - len;
  switch (align) {
    case '<':
      return signStr + body + fill.repeat(n);
    case '>':
      return fill.repeat(n) + signStr + body;
    case '^': {
      const left = Math.floor(n / 2);
      return fill.repeat(left) + signStr + body + fill.repeat(n - left);
    }
    default:
      return signStr + fill.repeat(n) + body;
  }
}

function signOf(neg: boolean, sign: string): string {
  return neg ? '-' : sign === '+' ? '+' : sign === ' ' ? ' ' : '';
}

export function formatStr(s: string, spec: FormatSpec): string {
  if (spec.type && spec.type !== 's') throw new ValueErr(`Unknown format code '${spec.type}' for object of type 'str'`);
  if (spec.sign) throw new ValueErr('Sign not allowed in string format specifier');
  if (spec.alt) throw new ValueErr('Alternate form (#) not allowed in string format specifier');
  if (spec.align === '=') throw new ValueErr("'=' alignment not allowed in string format specifier");
  if (spec.grouping) throw new ValueErr("Cannot specify ',' with 's'.");
  let body = s;
  if (spec.precision !== undefined) body = Array.from(s).slice(0, spec.precision).join('');
  const sp = { ...spec };
  if (sp.zero && !sp.align) {
    sp.zero = false;
    sp.fill = sp.fill || '0';
    sp.align = '<';
  }
  return pad(body, '', sp, '<');
}

function decimalDigits(a: bigint): string {
  const d = a.toString();
  if (d.length > 4300) throw new ValueErr('Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit');
  return d;
}

export function formatInt(v: number | bigint, spec: FormatSpec): string {
  const t = spec.type;
  if ('eEfFgG%'.includes(t) && t !== '') {
    const f = Number(v);
    if (!Number.isFinite(f)) throw new ValueErr('int too large to convert to float');
    return formatFloat(f, spec);
  }
  if (spec.precision !== undefined) throw new ValueErr('Precision not allowed in integer format specifier');
  const big = BigInt(v);
  const neg = big < 0n;
  const a = neg ? -big : big;
  let body: string;
  let prefix = '';
  switch (t) {
    case '':
    case 'd':
    case 'n':
      body = group(decimalDigits(a), spec.grouping, 3);
      break;
    case 'x':
    case 'X':
      if (spec.grouping === ',') throw new ValueErr("Cannot specify ',' with 'x'.");
      body = group(a.toString(16), spec.grouping === '_' ? '_' : '', 4);
      if (t === 'X') body = body.toUpperCase();
      if (spec.alt) prefix = t === 'X' ? '0X' : '0x';
      break;
    case 'o':
      body = group(a.toString(8), spec.grouping === '_' ? '_' : '', 4);
      if (spec.alt) prefix = '0o';
      break;
    case 'b':
      body = group(a.toString(2), spec.grouping === '_' ? '_' : '', 4);
      if (spec.alt) prefix = '0b';
      break;
    case 'c':
      if (spec.sign) throw new ValueErr("Sign not allowed with integer format specifier 'c'");
      if (big < 0n || big > 0x10ffffn) throw new ValueErr('%c arg not in range(0x110000)');
      body = String.fromCodePoint(Number(big));
      return pad(body, '', spec, '<');
    default:
      throw new ValueErr(`Unknown format code '${t}' for object of type 'int'`);
  }
  if (spec.zero && !spec.align && spec.grouping && (t === '' || t === 'd')) {
    // zero padding with grouping groups the padding too
    const signStr = signOf(neg, spec.sign) + prefix;
    const need = spec.width - pyLen(signStr);
    let digits = a.toString();
    let g = group(digits, spec.grouping, 3);
    while (g.length < need) {
      digits = '0' + digits;
      g = group(digits, spec.grouping, 3);
    }
    return signStr + g;
  }
  return pad(body, signOf(neg, spec.sign) + prefix, spec, '>');
}

export function formatFloat(v: number, spec: FormatSpec): string {
  const t = spec.type;
  if (!'eEfFgGn%'.includes(t) && t !== '') throw new ValueErr(`Unknown format code '${t}' for object of type 'float'`);
  let neg = isNeg(v) && !Number.isNaN(v);
  let body = floatBody(Math.abs(v), t, spec.precision, spec.alt);
  if (spec.z && neg && /^[0.%eE+\-]*$/.test(body.replace(/[eE][+-]\d+$/, ''))) neg = false;
  if (spec.grouping) {
    const m = /^(\d+)([\s\S]*)$/.exec(body);
    if (m) body = group(m[1], spec.grouping, 3) + m[2];
  }
  if (spec.zero && !spec.align && spec.grouping) {
    const signStr = signOf(neg, spec.sign);
    const m = /^(\d[\d,_]*)([\s\S]*)$/.exec(body);
    if (m) {
      let digits = m[1].replace(/[,_]/g, '');
      let g = group(digits, spec.grouping, 3);
      while (pyLen(signStr) + g.length + m[2].length < spec.width) {
        digits = '0' + digits;
        g = group(digits, spec.grouping, 3);
      }
      return signStr + g + m[2];
    }
  }
  return pad(body, signOf(neg, spec.sign), spec, '>');
}

/** printf-style conversion of one float (`%e %f %g …`) with flags. */
export function percentFloat(v: number, flags: string, width: number, precision: number | undefined, type: string): string {
  const alt = flags.includes('#');
  const neg = isNeg(v) && !Number.isNaN(v);
  let body: string;
  const ax = Math.abs(v);
  if (type === 'g' || type === 'G') {
    let p = precision ?? 6;
    if (p === 0) p = 1;
    body = floatBody(ax, type, p, alt);
  } else body = floatBody(ax, type, precision ?? 6, alt);
  const sign = neg ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
  return percentPad(sign, body, flags, width, Number.isFinite(v));
}

export function percentPad(sign: string, body: string, flags: string, width: number, zeroOk: boolean): string {
  const len = sign.length + pyLen(body);
  if (width <= len) return sign + body;
  if (flags.includes('-')) return sign + body + ' '.repeat(width - len);
  if (flags.includes('0') && zeroOk) return sign + '0'.repeat(width - len) + body;
  return ' '.repeat(width - len) + sign + body;
}

export function percentInt(v: number | bigint, flags: string, width: number, precision: number | undefined, type: string): string {
  const big = BigInt(v);
  const neg = big < 0n;
  const a = neg ? -big : big;
  let digits = type === 'x' || type === 'X' ? a.toString(16) : type === 'o' ? a.toString(8) : decimalDigits(a);
  if (type === 'X') digits = digits.toUpperCase();
  if (precision !== undefined && digits.length < precision) digits = digits.padStart(precision, '0');
  let prefix = '';
  if (flags.includes('#')) prefix = type === 'x' ? '0x' : type === 'X' ? '0X' : type === 'o' ? '0o' : '';
  const sign = neg ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
  return percentPad(sign + prefix, digits, precision !== undefined ? flags.replace('0', '') : flags, width, true);
}

/** Python's `round(x, n)` for a float: correctly rounded, half-even on the exact value. */
export function roundFloat(x: number, n: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  if (n > 330) return x;
  if (n < -330) return isNeg(x) ? -0 : 0;
  const q = roundScaled(x, n);
  const neg = isNeg(x);
  let r: number;
  if (n >= 0) r = Number(`${q}e-${n}`);
  else r = Number(`${q}e${-n}`);
  if (!Number.isFinite(r)) throw new ValueErr('rounded value too large to represent');
  return neg ? -r : r;
}
