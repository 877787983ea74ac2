/**
 * Python's `str` semantics over JS strings: code points (not UTF-16 units), Python's whitespace
 * set (`str.isspace`, `\s` of `re`), `splitlines` breaks, `repr` quoting, and the methods
 * Jinja templates call. Unicode data is the host's (`\p{…}`); Python 3.11 uses Unicode 14.
 */

/** `str.isspace()` / `re`'s `\s` for str patterns. */
export const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WS_SET = new Set<number>([9, 10, 11, 12, 13, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);

export function isPySpaceCode(c: number): boolean {
  return WS_SET.has(c);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** The code points of a string (Python's indexing units). */
export function codePoints(s: string): string[] {
  return SURROGATE.test(s) ? Array.from(s) : s.split('');
}

export function pyLen(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function pyStrip(s: string, chars: string | null | undefined, left: boolean, right: boolean): string {
  if (chars == null) {
    // Python's whitespace is all in the BMP: strip UTF-16 units directly
    let a = 0;
    let b = s.length;
    if (left) while (a < b && WS_SET.has(s.charCodeAt(a))) a++;
    if (right) while (b > a && WS_SET.has(s.charCodeAt(b - 1))) b--;
    return a === 0 && b === s.length ? s : s.slice(a, b);
  }
  const cps = codePoints(s);
  let a = 0;
  let b = cps.length;
  const set = new Set(codePoints(chars));
  if (left) while (a < b && set.has(cps[a])) a++;
  if (right) while (b > a && set.has(cps[b - 1])) b--;
  return a === 0 && b === cps.length ? s : cps.slice(a, b).join('');
}

/** Line breaks of `str.splitlines`. */
const LINE_BREAK = /\r\n|[\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029]/g;

export function pySplitlines(s: string, keepends = false): string[] {
  const out: string[] = [];
  let last = 0;
  LINE_BREAK.lastIndex = 0;
  for (let m = LINE_BREAK.exec(s); m; m = LINE_BREAK.exec(s)) {
    out.push(s.slice(last, keepends ? m.index + m[0].length : m.index));
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

/** `str.split(sep=None, maxsplit)`. */
export function pySplit(s: string, sep: string | null, maxsplit: number): string[] {
  if (sep === null) {
    const cps = codePoints(s);
    const out: string[] = [];
    let i = 0;
    const n = cps.length;
    while (i < n) {
      while (i < n && WS_SET.has(cps[i].codePointAt(0)!)) i++;
      if (i >= n) break;
      if (maxsplit >= 0 && out.length >= maxsplit) {
        out.push(cps.slice(i).join(''));
        return out;
      }
      let j = i;
      while (j < n && !WS_SET.has(cps[j].codePointAt(0)!)) j++;
      out.push(cps.slice(i, j).join(''));
      i = j;
    }
    return out;
  }
  if (sep === '') throw new ValueErr('empty separator');
  const out: string[] = [];
  let from = 0;
  while (maxsplit < 0 || out.length < maxsplit) {
    const at = s.indexOf(sep, from);
    if (at < 0) break;
    out.push(s.slice(from, at));
    from = at + sep.length;
  }
  out.push(s.slice(from));
  return out;
}

export function pyRsplit(s: string, sep: string | null, maxsplit: number): string[] {
  if (maxsplit < 0) return pySplit(s, sep, -1);
  if (sep === null) {
    const cps = codePoints(s);
    const out: string[] = [];
    let i = cps.length;
    while (i > 0) {
      while (i > 0 && WS_SET.has(cps[i - 1].codePointAt(0)!)) i--;
      if (i <= 0) break;
      if (out.length >= maxsplit) {
        out.push(cps.slice(0, i).join(''));
        return out.reverse();
      }
      let j = i;
      while (j > 0 && !WS_SET.has(cps[j - 1].codePointAt(0)!)) j--;
      out.push(cps.slice(j, i).join(''));
      i = j;
    }
    return out.reverse();
  }
  if (sep === '') throw new ValueErr('empty separator');
  const out: string[] = [];
  let to = s.length;
  while (out.length < maxsplit) {
    const at = to - sep.length < 0 ? -1 : s.lastIndexOf(sep, to - sep.length);
    if (at < 0) break;
    out.push(s.slice(at + sep.length, to));
    to = at;
  }
  out.push(s.slice(0, to));
  return out.reverse();
}

/** Thrown by string helpers for Python's ValueError / TypeError; the interpreter turns them into render errors. */
export class ValueErr extends Error {}

/** `str.replace(old, new, count)` with Python's empty-`old` rule (insert between code points). */
export function pyReplace(s: string, old: string, rep: string, count: number): string {
  if (count === 0) return s;
  if (old === '') {
    const cps = codePoints(s);
    let out = '';
    let n = 0;
    for (let i = 0; i <= cps.length; i++) {
      if (count < 0 || n < count) {
        out += rep;
        n++;
      }
      if (i < cps.length) out += cps[i];
    }
    return out;
  }
  if (count < 0) return s.split(old).join(rep);
  let out = '';
  let from = 0;
  let n = 0;
  while (n < count) {
    const at = s.indexOf(old, from);
    if (at < 0) break;
    out += s.slice(from, at) + rep;
    from = at + old.length;
    n++;
  }
  return out + s.slice(from);
}

/** `str.count(sub)` (non-overlapping; an empty sub counts len+1). */
export function pyCount(s: string, sub: string): number {
  if (sub === '') return pyLen(s) + 1;
  let n = 0;
  for (let at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length)) n++;
  return n;
}

const TITLE_SPECIAL = new Map<number, string>();
for (const e of 'df:53,73 1c4:1c5 1c5:1c5 1c6:1c5 1c7:1c8 1c8:1c8 1c9:1c8 1ca:1cb 1cb:1cb 1cc:1cb 1f1:1f2 1f2:1f2 1f3:1f2 587:535,582 10d0:10d0 10d1:10d1 10d2:10d2 10d3:10d3 10d4:10d4 10d5:10d5 10d6:10d6 10d7:10d7 10d8:10d8 10d9:10d9 10da:10da 10db:10db 10dc:10dc 10dd:10dd 10de:10de 10df:10df 10e0:10e0 10e1:10e1 10e2:10e2 10e3:10e3 10e4:10e4 10e5:10e5 10e6:10e6 10e7:10e7 10e8:10e8 10e9:10e9 10ea:10ea 10eb:10eb 10ec:10ec 10ed:10ed 10ee:10ee 10ef:10ef 10f0:10f0 10f1:10f1 10f2:10f2 10f3:10f3 10f4:10f4 10f5:10f5 10f6:10f6 10f7:10f7 10f8:10f8 10f9:10f9 10fa:10fa 10fd:10fd 10fe:10fe 10ff:10ff 1f80:1f88 1f81:1f89 1f82:1f8a 1f83:1f8b 1f84:1f8c 1f85:1f8d 1f86:1f8e 1f87:1f8f 1f88:1f88 1f89:1f89 1f8a:1f8a 1f8b:1f8b 1f8c:1f8c 1f8d:1f8d 1f8e:1f8e 1f8f:1f8f 1f90:1f98 1f91:1f99 1f92:1f9a 1f93:1f9b 1f94:1f9c 1f95:1f9d 1f96:1f9e 1f97:1f9f 1f98:1f98 1f99:1f99 1f9a:1f9a 1f9b:1f9b 1f9c:1f9c 1f9d:1f9d 1f9e:1f9e 1f9f:1f9f 1fa0:1fa8 1fa1:1fa9 1fa2:1faa 1fa3:1fab 1fa4:1fac 1fa5:1fad 1fa6:1fae 1fa7:1faf 1fa8:1fa8 1fa9:1fa9 1faa:1faa 1fab:1fab 1fac:1fac 1fad:1fad 1fae:1fae 1faf:1faf 1fb2:1fba,345 1fb3:1fbc 1fb4:386,345 1fb7:391,342,345 1fbc:1fbc 1fc2:1fca,345 1fc3:1fcc 1fc4:389,345 1fc7:397,342,345 1fcc:1fcc 1ff2:1ffa,345 1ff3:1ffc 1ff4:38f,345 1ff7:3a9,342,345 1ffc:1ffc fb00:46,66 fb01:46,69 fb02:46,6c fb03:46,66,69 fb04:46,66,6c fb05:53,74 fb06:53,74 fb13:544,576 fb14:544,565 fb15:544,56b fb16:54e,576 fb17:544,56d'.split(' ')) {
  const [k, v] = e.split(':');
  TITLE_SPECIAL.set(parseInt(k, 16), String.fromCodePoint(...v.split(',').map((x) => parseInt(x, 16))));
}

/** Title case of one code point (`str.title`/`capitalize` of a single character). */
export function titleChar(c: string): string {
  return TITLE_SPECIAL.get(c.codePointAt(0)!) ?? c.toUpperCase();
}

export function pyCapitalize(s: string): string {
  if (s === '') return s;
  const cps = codePoints(s);
  return titleChar(cps[0]) + cps.slice(1).join('').toLowerCase();
}

const CASED = /[\p{Lowercase}\p{Uppercase}\p{Lt}]/u;
const UPPER_OR_TITLE = /[\p{Uppercase}\p{Lt}]/u;
const LOWER = /\p{Lowercase}/u;

/** `str.title()`. */
export function pyTitle(s: string): string {
  let prevCased = false;
  let out = '';
  for (const c of s) {
    out += prevCased ? c.toLowerCase() : titleChar(c);
    prevCased = CASED.test(c);
  }
  return out;
}

export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (UPPER_OR_TITLE.test(c)) return false;
    if (LOWER.test(c)) cased = true;
  }
  return cased;
}

export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (LOWER.test(c) || /\p{Lt}/u.test(c)) return false;
    if (/\p{Uppercase}/u.test(c)) cased = true;
  }
  return cased;
}

export function pyIsTitle(s: string): boolean {
  let cased = false;
  let prevCased = false;
  for (const c of s) {
    if (UPPER_OR_TITLE.test(c)) {
      if (prevCased) return false;
      prevCased = true;
      cased = true;
    } else if (LOWER.test(c)) {
      if (!prevCased) return false;
      prevCased = true;
      cased = true;
    } else prevCased = false;
  }
  return cased;
}

export function pySwapcase(s: string): string {
  let out = '';
  for (const c of s) out += /\p{Uppercase}/u.test(c) ? c.toLowerCase() : LOWER.test(c) ? c.toUpperCase() : c;
  return out;
}

/** `str.center(width, fill)`: Python puts the extra space on the right only when the margin and width are both odd. */
export function pyCenter(s: string, width: number, fill = ' '): string {
  const n = pyLen(s);
  if (width <= n) return s;
  const marg = width - n;
  const left = Math.floor(marg / 2) + (marg & width & 1);
  return fill.repeat(left) + s + fill.repeat(marg - left);
}

export function pyLjust(s: string, width: number, fill = ' '): string {
  const n = pyLen(s);
  return width <= n ? s : s + fill.repeat(width - n);
}

export function pyRjust(s: string, width: number, fill = ' '): string {
  const n = pyLen(s);
  return width <= n ? s : fill.repeat(width - n) + s;
}

export function pyZfill(s: string, width: number): string {
  const n = pyLen(s);
  if (width <= n) return s;
  const pad = '0'.repeat(width - n);
  if (s[0] === '+' || s[0] === '-') return s[0] + pad + s.slice(1);
  return pad + s;
}

/** Python slice indices (`slice.indices(len)`). */
export function sliceIndices(len: number, start: number | null, stop: number | null, step: number | null): [number, number, number] {
  const st = step ?? 1;
  if (st === 0) throw new ValueErr('slice step cannot be zero');
  let a: number;
  let b: number;
  if (st > 0) {
    a = start === null ? 0 : start < 0 ? Math.max(0, start + len) : Math.min(start, len);
    b = stop === null ? len : stop < 0 ? Math.max(0, stop + len) : Math.min(stop, len);
  } else {
    a = start === null ? len - 1 : start < 0 ? Math.max(-1, start + len) : Math.min(start, len - 1);
    b = stop === null ? -1 : stop < 0 ? Math.max(-1, stop + len) : Math.min(stop, len - 1);
  }
  return [a, b, st];
}

export function sliceArray<T>(items: readonly T[], start: number | null, stop: number | null, step: number | null): T[] {
  const [a, b, st] = sliceIndices(items.length, start, stop, step);
  const out: T[] = [];
  if (st > 0) for (let i = a; i < b; i += st) out.push(items[i]);
  else for (let i = a; i > b; i += st) out.push(items[i]);
  return out;
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** `repr(str)`. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    if (c === quote || c === '\\') out += '\\' + c;
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp < 0x7f) out += c;
    else if (c !== ' ' && NON_PRINTABLE.test(c)) {
      if (cp < 0x100) out += '\\x' + cp.toString(16).padStart(2, '0');
      else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
      else out += '\\U' + cp.toString(16).padStart(8, '0');
    } else out += c;
  }
  return out + quote;
}

/** Python's `str` ordering: by code point (JS compares UTF-16 units). */
export function pyStrCompare(a: string, b: string): number {
  if (a === b) return 0;
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  const x = codePoints(a);
  const y = codePoints(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

/** markupsafe.escape of a plain string. */
export function htmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&#34;' : '&#39;'));
}

/** Characters Python's str.isdigit() accepts beyond \\p{Nd} (superscripts, circled digits …; Unicode 14). */
const DIGIT_EXTRA = '\u{b2}-\u{b3}\u{b9}\u{1369}-\u{1371}\u{19da}\u{2070}\u{2074}-\u{2079}\u{2080}-\u{2089}\u{2460}-\u{2468}\u{2474}-\u{247c}\u{2488}-\u{2490}\u{24ea}\u{24f5}-\u{24fd}\u{24ff}\u{2776}-\u{277e}\u{2780}-\u{2788}\u{278a}-\u{2792}\u{10a40}-\u{10a43}\u{10e60}-\u{10e68}\u{11052}-\u{1105a}\u{1f100}-\u{1f10a}';
/** Characters Python's str.isnumeric() accepts beyond \\p{N} (CJK numerals …; Unicode 14). */
const NUMERIC_EXTRA = '\u{3405}\u{3483}\u{382a}\u{3b4d}\u{4e00}\u{4e03}\u{4e07}\u{4e09}\u{4e5d}\u{4e8c}\u{4e94}\u{4e96}\u{4ebf}-\u{4ec0}\u{4edf}\u{4ee8}\u{4f0d}\u{4f70}\u{5104}\u{5146}\u{5169}\u{516b}\u{516d}\u{5341}\u{5343}-\u{5345}\u{534c}\u{53c1}-\u{53c4}\u{56db}\u{58f1}\u{58f9}\u{5e7a}\u{5efe}-\u{5eff}\u{5f0c}-\u{5f0e}\u{5f10}\u{62fe}\u{634c}\u{67d2}\u{6f06}\u{7396}\u{767e}\u{8086}\u{842c}\u{8cae}\u{8cb3}\u{8d30}\u{9621}\u{9646}\u{964c}\u{9678}\u{96f6}\u{f96b}\u{f973}\u{f978}\u{f9b2}\u{f9d1}\u{f9d3}\u{f9fd}\u{20001}\u{20064}\u{200e2}\u{20121}\u{2092a}\u{20983}\u{2098c}\u{2099c}\u{20aea}\u{20afd}\u{20b19}\u{22390}\u{22998}\u{23b1b}\u{2626d}\u{2f890}';
const IS_DIGIT = new RegExp(`^[\\p{Nd}${DIGIT_EXTRA}]+$`, 'u');
const IS_NUMERIC = new RegExp(`^[\\p{N}${NUMERIC_EXTRA}]+$`, 'u');
const IS_ALNUM = new RegExp(`^[\\p{L}\\p{N}${NUMERIC_EXTRA}]+$`, 'u');

export const pyIsDigit = (s: string): boolean => IS_DIGIT.test(s);
export const pyIsNumeric = (s: string): boolean => IS_NUMERIC.test(s);
export const pyIsAlnum = (s: string): boolean => IS_ALNUM.test(s);

const ND = /\p{Nd}/u;

/**
 * _PyUnicode_TransformDecimalAndSpaceToASCII, as int() and float() apply it: decimal digits of any
 * script become ASCII digits, Unicode whitespace becomes ' ', other non-ASCII characters '?'.
 */
export function toAsciiDecimal(s: string): string {
  if (!/[^\x00-\x7f]/.test(s)) return s;
  let out = '';
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    if (cp < 0x80) out += c;
    else if (WS_SET.has(cp)) out += ' ';
    else if (ND.test(c)) {
      // decimal digits come in runs of ten, 0 to 9 (Unicode stability policy)
      let start = cp;
      while (ND.test(String.fromCodePoint(start - 1))) start--;
      out += String((cp - start) % 10);
    } else out += '?';
  }
  return out;
}
