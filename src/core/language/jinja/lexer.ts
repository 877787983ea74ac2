/**
 * A port of jinja2/lexer.py (3.1) for the default environment: `{{ }}`, `{% %}`, `{# #}`, no line
 * statements, trim_blocks and lstrip_blocks off, keep_trailing_newline off. Tokens carry offsets
 * into the lexed text. Non-ASCII characters inside a tag (outside string literals) are reported as
 * unsupported: Python's identifier and digit classes are not reproduced.
 */
import { redactSecrets } from '../../text/secrets';
import { ForwardFinder } from '../shared';
import { PY_WS, isPySpaceCode } from './pystr';
import { LimitError, PyError, Unsupported } from './values';

/** Bracket nesting inside one tag that the engine renders (Python's recursion limit is reached near 70). */
export const MAX_BRACKETS = 32;

export type TokType =
  | 'data'
  | 'variable_begin'
  | 'variable_end'
  | 'block_begin'
  | 'block_end'
  | 'name'
  | 'string'
  | 'integer'
  | 'float'
  | 'eof'
  | 'add'
  | 'sub'
  | 'div'
  | 'floordiv'
  | 'mul'
  | 'mod'
  | 'pow'
  | 'tilde'
  | 'lbracket'
  | 'rbracket'
  | 'lparen'
  | 'rparen'
  | 'lbrace'
  | 'rbrace'
  | 'eq'
  | 'ne'
  | 'gt'
  | 'gteq'
  | 'lt'
  | 'lteq'
  | 'assign'
  | 'dot'
  | 'colon'
  | 'pipe'
  | 'comma'
  | 'semicolon';

export interface Token {
  type: TokType;
  /** Decoded value: the text of data/name tokens, the string of a string literal, the number of a number. */
  value: string | number | bigint;
  start: number;
  end: number;
  /** The end of a tag the recovering lexer could not read to its end (the problem is reported already). */
  synthetic?: boolean;
}

const OPERATORS: [string, TokType][] = (
  [
    ['+', 'add'],
    ['-', 'sub'],
    ['/', 'div'],
    ['//', 'floordiv'],
    ['*', 'mul'],
    ['%', 'mod'],
    ['**', 'pow'],
    ['~', 'tilde'],
    ['[', 'lbracket'],
    [']', 'rbracket'],
    ['(', 'lparen'],
    [')', 'rparen'],
    ['{', 'lbrace'],
    ['}', 'rbrace'],
    ['==', 'eq'],
    ['!=', 'ne'],
    ['>', 'gt'],
    ['>=', 'gteq'],
    ['<', 'lt'],
    ['<=', 'lteq'],
    ['=', 'assign'],
    ['.', 'dot'],
    [':', 'colon'],
    ['|', 'pipe'],
    [',', 'comma'],
    [';', 'semicolon'],
  ] as [string, TokType][]
).sort((a, b) => b[0].length - a[0].length);

export const OPERATOR_TEXT: Record<string, string> = Object.fromEntries(OPERATORS.map(([s, t]) => [t, s]));

const WS_RUN = new RegExp(`[${PY_WS}]+`, 'y');
const WS_ANY = new RegExp(`[${PY_WS}]*`, 'y');
const FLOAT_RE = /(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?e[+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/iy;
const INTEGER_RE = /(?:0b(?:_?[01])+|0o(?:_?[0-7])+|0x(?:_?[\da-f])+|[1-9](?:_?\d)*|0(?:_?0)*)/iy;
const NAME_RE = /[A-Za-z0-9_]+/y;
const STRING_RE = /'([^'\\]*(?:\\[\s\S][^'\\]*)*)'|"([^"\\]*(?:\\[\s\S][^"\\]*)*)"/y;
const BLOCK_END_RE = new RegExp(`\\+%\\}|-%\\}[${PY_WS}]*|%\\}`, 'y');
const VARIABLE_END_RE = new RegExp(`-\\}\\}[${PY_WS}]*|\\}\\}`, 'y');
const RAW_BEGIN_RE = new RegExp(`\\{%(-|\\+|)[${PY_WS}]*raw[${PY_WS}]*(?:-%\\}[${PY_WS}]*|%\\})`, 'y');
const RAW_END_RE = new RegExp(`\\{%(-|\\+|)[${PY_WS}]*endraw[${PY_WS}]*(?:\\+%\\}|-%\\}[${PY_WS}]*|%\\})`, 'y');
const OPENER = /\{[{%#]/g;
const TRAILING_WS = new RegExp(`[${PY_WS}]+$`);

/** The Environment's lexer settings (jinja2 `trim_blocks`, `lstrip_blocks`); both off by default, as in jinja2. */
export interface LexEnv {
  trimBlocks?: boolean;
  lstripBlocks?: boolean;
  /** Not the lexer's: filters the application registers on the Environment (the compile-time check knows them). */
  filters?: readonly string[];
}

/** A key of the settings for caches (empty for the defaults). */
export function lexEnvKey(env: LexEnv | undefined): string {
  return env ? `${env.trimBlocks ? 't' : ''}${env.lstripBlocks ? 'l' : ''}${env.filters?.length ? '|' + env.filters.join('|') : ''}` : '';
}

/**
 * lstrip_blocks: the spaces and tabs between the start of a line and a block or comment tag are
 * dropped (jinja2's lexer: only whitespace after the text's last newline, or the whole text when
 * the previous match ended a line).
 */
function lstripped(text: string, lineStarting: boolean): string {
  const l = text.lastIndexOf('\n') + 1;
  if (l === 0 && !lineStarting) return text;
  if (l === text.length) return text;
  for (let i = l; i < text.length; i++) if (!isPySpaceCode(text.charCodeAt(i))) return text;
  return text.slice(0, l);
}

function stick(re: RegExp, s: string, pos: number): RegExpExecArray | null {
  re.lastIndex = pos;
  return re.exec(s);
}

export function syntaxError(message: string, start: number, end = start + 1): PyError {
  const e = new PyError('TemplateSyntaxError', message);
  e.span = { start, end };
  return e;
}

/**
 * The text jinja lexes: \r\n and \r become \n, and one trailing newline is dropped unless the
 * environment sets keep_trailing_newline (Prompty v2's renderer does; Prompty 0.1.x's does not).
 */
export function normalizeTemplate(source: string, keepTrailingNewline = false): string {
  let s = source.replace(/\r\n?/g, '\n');
  if (!keepTrailingNewline && s.endsWith('\n')) s = s.slice(0, -1);
  return s;
}

/** Python's `str.encode('ascii', 'backslashreplace').decode('unicode-escape')`. */
export function unescapeString(raw: string, at: number): string {
  let s = '';
  for (const c of raw) {
    const cp = c.codePointAt(0)!;
    if (cp < 0x80) s += c;
    else if (cp < 0x100) s += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp < 0x10000) s += '\\u' + cp.toString(16).padStart(4, '0');
    else s += '\\U' + cp.toString(16).padStart(8, '0');
  }
  if (!s.includes('\\')) return s;
  let out = '';
  const simple: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\n': '' };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= s.length) throw syntaxError('\\ at end of string', at);
    const d = s[++i];
    if (d in simple) out += simple[d];
    else if (d >= '0' && d <= '7') {
      let j = i;
      while (j < i + 3 && j < s.length && s[j] >= '0' && s[j] <= '7') j++;
      out += String.fromCodePoint(parseInt(s.slice(i, j), 8));
      i = j - 1;
    } else if (d === 'x' || d === 'u' || d === 'U') {
      const n = d === 'x' ? 2 : d === 'u' ? 4 : 8;
      const hex = s.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw syntaxError(`truncated \\${d}${'X'.repeat(n)} escape`, at);
      const v = parseInt(hex, 16);
      if (v > 0x10ffff) throw syntaxError('illegal Unicode character', at);
      out += v >= 0xd800 && v <= 0xdfff ? String.fromCharCode(v) : String.fromCodePoint(v);
      i += n;
    } else if (d === 'N') throw new Unsupported('\\N{…} escapes in string literals');
    else out += '\\' + d;
  }
  return out;
}

/**
 * A problem the recovering lexer stepped over: where it is, the error the strict lexer throws
 * there, and how the editor words it (`message`).
 */
export interface LexIssue {
  span: { start: number; end: number };
  message: string;
  /** What the strict lexer throws there (made when asked: a text of stray braces has thousands of issues). */
  error: () => Error;
}

/** How far a tag is scanned for string literals when looking for its end; longer tags are read without that care. */
const QUOTE_SCAN_LIMIT = 2000;

/**
 * Where the tag opened at `at` ends for the recovering lexer: its closer outside string literals,
 * or -1 when the tag is unterminated (no closer, or another tag opens before it). Jinja writes
 * literal braces as `{{ '{{' }}`, so braces inside a string literal neither open nor close.
 */
function tagClose(src: string, at: number, closer: string, find: (needle: string, from: number) => number): number {
  let close = find(closer, at + 2);
  OPENER.lastIndex = at + 2;
  let next = OPENER.exec(src)?.index ?? -1;
  const segEnd = Math.min(close < 0 ? src.length : close, at + QUOTE_SCAN_LIMIT);
  const quoteAt = (q: string) => {
    const k = find(q, at + 2);
    return k >= 0 && k < segEnd;
  };
  if (quoteAt('"') || quoteAt("'")) {
    let quote = '';
    let nextQ = -1;
    const end = Math.min(src.length, at + QUOTE_SCAN_LIMIT);
    for (let i = at + 2; i < end; i++) {
      const c = src[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = '';
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (src.startsWith(closer, i)) {
        close = i;
        next = nextQ;
        break;
      } else if (nextQ < 0 && c === '{' && /[{%#]/.test(src[i + 1] ?? '')) nextQ = i;
    }
  }
  return close < 0 || (next >= 0 && next < close) ? -1 : close;
}

/** What the editor shows of a tag: its first characters on its line. */
function shownTag(src: string, at: number, end: number): string {
  // Redacted before it is cut: a secret cut short is no longer recognised (and would show in part).
  return redactSecrets(src.slice(at, Math.min(end, at + 4000))).slice(0, 40);
}

/**
 * Tokenize a whole template (already normalized by normalizeTemplate). Strict (no `issues`): throws
 * the first error as jinja2's lexer does. Recovering (`issues` given, for the editor): records each
 * problem and keeps going — an unterminated tag or comment is read as text, a tag that cannot be
 * lexed is skipped, a raw block without its end reads as text to the end.
 */
export function tokenize(src: string, issues?: LexIssue[], env: LexEnv = {}): Token[] {
  const toks: Token[] = [];
  const lstrip = env.lstripBlocks === true;
  const trim = env.trimBlocks === true;
  let pos = 0;
  const n = src.length;
  const finder = new ForwardFinder(src);
  const find = issues ? (needle: string, from: number) => finder.indexOf(needle, from) : (needle: string, from: number) => src.indexOf(needle, from);
  const lineEnd = (from: number): number => finder.lineEnd(from);
  let scan = 0;
  while (pos < n) {
    OPENER.lastIndex = scan;
    const m = OPENER.exec(src);
    if (!m) {
      toks.push({ type: 'data', value: src.slice(pos), start: pos, end: n });
      break;
    }
    const at = m.index;
    const raw = src.startsWith('{%', at) ? stick(RAW_BEGIN_RE, src, at) : null;
    const kind = src[at + 1];
    if (issues && !raw) {
      const closer = kind === '{' ? '}}' : kind === '%' ? '%}' : '#}';
      const close = kind === '#' ? find('#}', at + 2) : tagClose(src, at, closer, find);
      if (close < 0) {
        const end = Math.max(at + 2, lineEnd(at));
        const what = kind === '{' ? 'placeholder' : kind === '%' ? 'Jinja tag' : 'Jinja comment';
        const error = () => syntaxError(kind === '#' ? 'Missing end of comment tag' : 'unexpected end of template', at, at + 2);
        issues.push({ span: { start: at, end }, message: `Unterminated ${what} '${shownTag(src, at, end)}': no closing '${closer}'.`, error });
        scan = at + 2;
        continue;
      }
    }
    scan = at;
    const signCh = raw ? raw[1] : src[at + 2] === '-' || src[at + 2] === '+' ? src[at + 2] : '';
    let text = src.slice(pos, at);
    if (signCh === '-') text = text.replace(TRAILING_WS, '');
    else if (lstrip && signCh !== '+' && kind !== '{') text = lstripped(text, pos === 0 || src[pos - 1] === '\n');
    const mark = toks.length;
    if (text) toks.push({ type: 'data', value: text, start: pos, end: pos + text.length });
    if (raw) {
      // raw block: data up to the first {% endraw %}
      let q = raw.index + raw[0].length;
      const bodyStart = q;
      let end: RegExpExecArray | null = null;
      for (;;) {
        const k = src.indexOf('{%', q);
        if (k < 0) break;
        end = stick(RAW_END_RE, src, k);
        if (end) break;
        q = k + 1;
      }
      if (!end) {
        const error = syntaxError('Missing end of raw directive', at, at + raw[0].length);
        if (!issues) throw error;
        issues.push({ span: { start: at, end: at + raw[0].length }, message: `'${raw[0]}' is never closed: add '{% endraw %}'.`, error: () => error });
        if (bodyStart < n) toks.push({ type: 'data', value: src.slice(bodyStart), start: bodyStart, end: n });
        pos = scan = n;
        break;
      }
      let body = src.slice(bodyStart, end.index);
      if (end[1] === '-') body = body.replace(TRAILING_WS, '');
      else if (lstrip && end[1] !== '+') body = lstripped(body, src[bodyStart - 1] === '\n');
      if (body) toks.push({ type: 'data', value: body, start: bodyStart, end: bodyStart + body.length });
      pos = scan = end.index + end[0].length;
      // trim_blocks: the newline after `{% endraw %}` (not after `+%}` or `-%}`).
      if (trim && /(?:^|[^+-])%\}$/.test(end[0]) && src[pos] === '\n') pos = scan = pos + 1;
      continue;
    }
    const beginLen = 2 + (signCh ? 1 : 0);
    if (kind === '#') {
      const contentStart = at + beginLen;
      const k = src.indexOf('#}', contentStart);
      if (k < 0) throw syntaxError('Missing end of comment tag', at, at + 2);
      const signEnd = k - 1 >= contentStart ? src[k - 1] : '';
      pos = k + 2;
      if (signEnd === '-') pos += stick(WS_ANY, src, pos)![0].length;
      else if (trim && signEnd !== '+' && src[pos] === '\n') pos++;
      scan = pos;
      continue;
    }
    const isBlock = kind === '%';
    toks.push({ type: isBlock ? 'block_begin' : 'variable_begin', value: src.slice(at, at + beginLen), start: at, end: at + beginLen });
    if (!issues) {
      pos = scan = lexTag(src, at + beginLen, isBlock, toks, at, trim);
      continue;
    }
    // Recovering: a tag that cannot be lexed (or runs to the end of the text) is reported and skipped.
    const closeAt = tagClose(src, at, isBlock ? '%}' : '}}', find);
    let error: Error | undefined;
    try {
      pos = lexTag(src, at + beginLen, isBlock, toks, at, trim);
      const last = toks[toks.length - 1];
      if (last.type !== (isBlock ? 'block_end' : 'variable_end')) error = syntaxError('unexpected end of template', n, n);
    } catch (e) {
      if (!(e instanceof Error)) throw e;
      error = e;
    }
    if (error) {
      // The tag keeps what was read before the problem and ends at its closer, so the parser still
      // sees the tag (a loop keeps its target); the end is marked, and the parser reports nothing
      // more at it.
      const end = closeAt + 2;
      const span = (error as { span?: { start: number; end: number } }).span ?? { start: at, end };
      let keep = toks.length;
      while (keep > mark && toks[keep - 1].start >= Math.min(span.start, closeAt)) keep--;
      toks.length = Math.max(keep, text ? mark + 2 : mark + 1);
      toks.push({ type: isBlock ? 'block_end' : 'variable_end', value: src.slice(closeAt, end), start: closeAt, end, synthetic: true });
      const e = error;
      issues.push({ span: { start: Math.min(span.start, end), end: Math.min(Math.max(span.end, span.start), end) }, message: error.message, error: () => e });
      pos = end;
    }
    scan = pos;
  }
  toks.push({ type: 'eof', value: '', start: n, end: n });
  return toks;
}

function lexTag(src: string, start: number, isBlock: boolean, toks: Token[], tagStart: number, trim = false): number {
  const balance: string[] = [];
  let pos = start;
  const n = src.length;
  while (pos < n) {
    if (!balance.length) {
      const e = stick(isBlock ? BLOCK_END_RE : VARIABLE_END_RE, src, pos);
      if (e) {
        // trim_blocks: a plain `%}` takes the newline after it.
        const len = e[0].length + (trim && isBlock && e[0] === '%}' && src[pos + 2] === '\n' ? 1 : 0);
        toks.push({ type: isBlock ? 'block_end' : 'variable_end', value: src.slice(pos, pos + len), start: pos, end: pos + len });
        return pos + len;
      }
    }
    let m = stick(WS_RUN, src, pos);
    if (m) {
      pos += m[0].length;
      continue;
    }
    const prev = pos > 0 ? src[pos - 1] : '';
    if (prev !== '.' && (m = stick(FLOAT_RE, src, pos))) {
      toks.push({ type: 'float', value: Number(m[0].replace(/_/g, '')), start: pos, end: pos + m[0].length });
      pos += m[0].length;
      continue;
    }
    if ((m = stick(INTEGER_RE, src, pos))) {
      const t = m[0].replace(/_/g, '').toLowerCase();
      const big = BigInt(t);
      // a name right after the digits ("1abc") is lexed by jinja as integer then name too
      toks.push({ type: 'integer', value: big > BigInt(Number.MAX_SAFE_INTEGER) ? big : Number(big), start: pos, end: pos + m[0].length });
      pos += m[0].length;
      continue;
    }
    if ((m = stick(NAME_RE, src, pos))) {
      const after = src.charCodeAt(pos + m[0].length);
      if (after >= 0x80 && !new RegExp(`[${PY_WS}]`).test(src[pos + m[0].length])) {
        const u = new Unsupported('non-ASCII characters in names');
        u.span = { start: pos, end: pos + m[0].length + 1 };
        throw u;
      }
      toks.push({ type: 'name', value: m[0], start: pos, end: pos + m[0].length });
      pos += m[0].length;
      continue;
    }
    if ((m = stick(STRING_RE, src, pos))) {
      const inner = m[1] ?? m[2] ?? '';
      toks.push({ type: 'string', value: unescapeString(inner, pos), start: pos, end: pos + m[0].length });
      pos += m[0].length;
      continue;
    }
    const op = OPERATORS.find(([s]) => src.startsWith(s, pos));
    if (op) {
      const [s, t] = op;
      if (s === '{' || s === '(' || s === '[') {
        balance.push(s === '{' ? '}' : s === '(' ? ')' : ']');
        if (balance.length > MAX_BRACKETS) {
          const e = new LimitError(`the template nests deeper than ${MAX_BRACKETS} levels of brackets (jinja2's parser hits Python's recursion limit at about 70)`);
          e.span = { start: pos, end: pos + 1 };
          throw e;
        }
      }
      else if (s === '}' || s === ')' || s === ']') {
        if (!balance.length) throw syntaxError(`unexpected '${s}'`, pos);
        const want = balance.pop();
        if (want !== s) throw syntaxError(`unexpected '${s}', expected '${want}'`, pos);
      }
      toks.push({ type: t, value: s, start: pos, end: pos + s.length });
      pos += s.length;
      continue;
    }
    if (src.charCodeAt(pos) >= 0x80) {
      const u = new Unsupported('non-ASCII characters inside a tag');
      u.span = { start: pos, end: pos + 1 };
      throw u;
    }
    throw syntaxError(`unexpected char ${JSON.stringify(src[pos])} at ${pos}`, pos);
  }
  void tagStart;
  return pos;
}
