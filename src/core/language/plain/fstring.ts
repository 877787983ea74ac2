/**
 * Python's `str.format` as LangChain's `PromptTemplate` reads an f-string template: the fields of
 * `string.Formatter().parse` (CPython's MarkupIterator: `{{` and `}}` are literal braces, a single
 * `}` or an unclosed `{` is a ValueError), LangChain's checks when the template is made (a field
 * name with attribute access `.` or an index `[]`, an all-digit name, a nested field in a format
 * spec are refused), then `StrictFormatter.format(**values)`: keyword values only, a missing one is
 * a KeyError, `!s` / `!r` / `!a` conversions, and `format(value, spec)`.
 *
 * Values print as Python's `str()` of the runtime value (jinja/values.ts: lists and dicts as their
 * repr, `True`, `None`). Format specs are reproduced for strings (fill, alignment, width,
 * precision) and integers (width, alignment, zero padding, grouping); any other spec is an
 * `unsupported-feature` issue rather than a guess.
 */
import type { Span } from '../../types';
import { fromJs, pyRepr, pyStr, type PyValue } from '../jinja/values';

/** A piece of the template: literal text (escapes resolved), then optionally one field. */
export interface FPiece {
  literal: string;
  /** Source span of the literal text. */
  literalSpan: Span;
  field?: FField;
}

export interface FField {
  name: string;
  spec: string;
  conversion?: string;
  /** The whole `{…}`. */
  span: Span;
  /** The field name inside it. */
  nameSpan: Span;
}

/** A ValueError of the parse or LangChain's refusal, located. */
export interface FError {
  message: string;
  span: Span;
}

export interface FParse {
  pieces: FPiece[];
  /** The first error, as Python raises it (parsing stops there). */
  error?: FError;
}

/** string.Formatter().parse(template), with spans. */
export function parseFString(s: string): FParse {
  const pieces: FPiece[] = [];
  const n = s.length;
  let pos = 0;
  while (pos < n) {
    const start = pos;
    let c = '';
    let markup = false;
    while (pos < n) {
      c = s[pos++];
      if (c === '{' || c === '}') {
        markup = true;
        break;
      }
    }
    const atEnd = pos >= n;
    let len = pos - start;
    if (markup && c === '}' && (atEnd || s[pos] !== '}')) return { pieces, error: { message: "Single '}' encountered in format string", span: { start: pos - 1, end: pos } } };
    if (markup && atEnd && c === '{') return { pieces, error: { message: "Single '{' encountered in format string", span: { start: pos - 1, end: pos } } };
    if (markup) {
      if (s[pos] === c) {
        // An escaped brace: the literal keeps one of the two.
        pos++;
        markup = false;
      } else len--;
    }
    const literal = s.slice(start, start + len);
    const literalSpan = { start, end: markup ? pos - 1 : pos };
    if (!markup) {
      pieces.push({ literal, literalSpan });
      continue;
    }
    const open = pos - 1;
    const fstart = pos;
    let count = 1;
    let close = -1;
    while (pos < n) {
      const d = s[pos++];
      if (d === '{') count++;
      else if (d === '}' && --count <= 0) {
        close = pos - 1;
        break;
      }
    }
    if (close < 0) return { pieces, error: { message: "expected '}' before end of string", span: { start: open, end: n } } };
    const parsed = parseField(s, fstart, close);
    if ('message' in parsed) return { pieces, error: parsed };
    pieces.push({ literal, literalSpan, field: { ...parsed, span: { start: open, end: close + 1 } } });
  }
  return { pieces };
}

/** CPython's parse_field over s[start, end). */
function parseField(s: string, start: number, end: number): Omit<FField, 'span'> | FError {
  let i = start;
  let c = '';
  let stop = false;
  while (i < end) {
    c = s[i++];
    if (c === '{') return { message: "unexpected '{' in field name", span: { start: i - 1, end: i } };
    if (c === '[') {
      while (i < end && s[i] !== ']') i++;
      continue;
    }
    if (c === '}' || c === ':' || c === '!') {
      stop = true;
      break;
    }
  }
  if (!stop || (c !== '!' && c !== ':')) return { name: s.slice(start, stop ? i - 1 : i), spec: '', nameSpan: { start, end: stop ? i - 1 : i } };
  const nameSpan = { start, end: i - 1 };
  let conversion: string | undefined;
  if (c === '!') {
    if (i >= end) return { message: 'end of string while looking for conversion specifier', span: { start: i - 1, end: i } };
    conversion = s[i++];
    if (i < end) {
      const d = s[i++];
      if (d !== ':') return { message: "expected ':' after conversion specifier", span: { start: i - 1, end: i } };
    }
  }
  return { name: s.slice(nameSpan.start, nameSpan.end), spec: s.slice(i, end), ...(conversion !== undefined ? { conversion } : {}), nameSpan };
}

/** What LangChain refuses when the PromptTemplate is made (validate_f_string_template), located. */
export function langchainRefusal(p: FParse): FError | undefined {
  for (const piece of p.pieces) {
    const f = piece.field;
    if (!f) continue;
    const v = f.name;
    if (v.includes('.') || v.includes('[') || v.includes(']')) {
      return { message: `Invalid variable name ${pyRepr(v)} in f-string template. Variable names cannot contain attribute access (.) or indexing ([]).`, span: f.nameSpan };
    }
    if (/^[0-9\u0660-\u0669\u06f0-\u06f9\u0966-\u096f]+$/.test(v)) {
      return { message: `Invalid variable name ${pyRepr(v)} in f-string template. Variable names cannot be all digits as they are interpreted as positional arguments.`, span: f.nameSpan };
    }
    if (f.spec && (f.spec.includes('{') || f.spec.includes('}'))) return { message: 'Invalid format specifier in f-string template. Nested replacement fields are not allowed.', span: f.span };
  }
  return p.error;
}

/** The input variables LangChain reads from the template (sorted, unique). */
export function fStringVariables(p: FParse): string[] {
  return [...new Set(p.pieces.flatMap((x) => (x.field ? [x.field.name] : [])))].sort();
}

export class FormatError extends Error {
  constructor(
    message: string,
    readonly span: Span,
    readonly unsupported = false,
  ) {
    super(message);
  }
}

export interface FRender {
  text: string;
  /** Fields without a value, rendered empty (lenient mode only). */
  missing: string[];
}

/**
 * StrictFormatter.format(template, **values). Throws FormatError (Python's exception, located).
 * `lenient`: a missing value renders empty and is listed instead of raising KeyError.
 */
export function formatFString(p: FParse, values: Record<string, unknown>, lenient = false): FRender {
  if (p.error) throw new FormatError(`ValueError: ${p.error.message}`, p.error.span);
  let text = '';
  const missing: string[] = [];
  for (const piece of p.pieces) {
    text += piece.literal;
    const f = piece.field;
    if (!f) continue;
    if (f.name === '') throw new FormatError('IndexError: Replacement index 0 out of range for positional args tuple', f.span);
    // formatter_field_name_split: the first part up to '.' or '['.
    const first = /^[^.[]*/.exec(f.name)![0];
    if (/^\d+$/.test(first)) throw new FormatError(`IndexError: Replacement index ${Number(first)} out of range for positional args tuple`, f.nameSpan);
    if (first.length !== f.name.length) throw new FormatError(`unsupported: attribute or index access '${f.name}' (LangChain refuses it)`, f.nameSpan, true);
    if (!Object.prototype.hasOwnProperty.call(values, first) || values[first] === undefined) {
      if (!lenient) throw new FormatError(`KeyError: ${pyRepr(first)}`, f.nameSpan);
      missing.push(first);
      continue;
    }
    let v: PyValue = fromJs(values[first]);
    if (f.conversion !== undefined) {
      if (f.conversion === 'r') v = pyRepr(v);
      else if (f.conversion === 'a') v = asciiRepr(pyRepr(v));
      else if (f.conversion === 's') v = pyStr(v);
      else throw new FormatError(`ValueError: Unknown conversion specifier ${f.conversion}`, f.span);
    }
    text += formatValue(v, f.spec, f.span);
  }
  return { text, missing };
}

/** Python's ascii(): non-ASCII characters of a repr escaped. */
function asciiRepr(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) out += ch;
    else if (cp <= 0xff) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp <= 0xffff) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out;
}

const SPEC = /^(?:([\s\S])?([<>=^]))?([+\- ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/;

/** format(value, spec) for the specs reproduced here. */
function formatValue(v: PyValue, spec: string, at: Span): string {
  if (spec === '') return pyStr(v);
  const m = SPEC.exec(spec);
  const unsupported = () => new FormatError(`unsupported: the format spec '${spec}' for a ${typeof v === 'string' ? 'str' : typeof v === 'number' ? 'number' : 'value'}`, at, true);
  if (!m) throw typeof v === 'string' ? new FormatError('ValueError: Invalid format specifier', at) : unsupported();
  const [, fillRaw, alignRaw, sign, z, alt, zero, widthRaw, grouping, precision, type] = m;
  const width = widthRaw ? Number(widthRaw) : 0;
  let fill = fillRaw ?? ' ';
  let align = alignRaw;
  if (typeof v === 'string') {
    if (sign || z || alt || grouping || (type && type !== 's')) throw unsupported();
    if (align === '=') throw new FormatError("ValueError: '=' alignment not allowed in string format specifier", at);
    if (zero && !alignRaw) {
      fill = '0';
      align = '<';
    }
    let s = v;
    if (precision !== undefined) s = Array.from(s).slice(0, Number(precision)).join('');
    return pad(s, width, fill, align ?? '<');
  }
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (z || alt || precision !== undefined || (type && type !== 'd')) throw unsupported();
    let digits = String(Math.abs(v));
    if (grouping) digits = digits.replace(/\B(?=(\d{3})+(?!\d))/g, grouping);
    const signText = v < 0 ? '-' : sign === '+' ? '+' : sign === ' ' ? ' ' : '';
    if (zero && !alignRaw) return signText + digits.padStart(width - signText.length, '0');
    if ((align ?? '>') === '=') return signText + pad(digits, width - signText.length, fill, '>');
    return pad(signText + digits, width, fill, align ?? '>');
  }
  throw unsupported();
}

function pad(s: string, width: number, fill: string, align: string): string {
  const len = Array.from(s).length;
  if (len >= width) return s;
  const n = width - len;
  if (align === '>') return fill.repeat(n) + s;
  if (align === '^') return fill.repeat(Math.floor(n / 2)) + s + fill.repeat(n - Math.floor(n / 2));
  return s + fill.repeat(n);
}
