/**
 * A string value of a TOML file at a key path (`tools.search.prompt`), for prompts kept in TOML
 * (`file.toml#table.key`). Reads what such files hold: `[table]` / `[a.b]` headers, `key = value`
 * lines with bare, quoted or dotted keys, and the four string forms (basic with escapes, literal,
 * and their multi-line forms, whose first newline is dropped and whose line-ending backslash
 * joins lines), as TOML 1.0 defines them. Arrays of tables and inline tables are not read: such a
 * key is reported, never guessed.
 */
import type { Span } from '../../types';

const BARE = /^[A-Za-z0-9_-]+/;

/** Splits a dotted key (`a."b.c".d`) into its parts; undefined when it is not a key. */
function splitKey(s: string): string[] | undefined {
  const out: string[] = [];
  let rest = s.trim();
  for (;;) {
    let m: RegExpExecArray | null;
    if ((m = /^"((?:[^"\\]|\\.)*)"/.exec(rest))) out.push(unescapeBasic(m[1]));
    else if ((m = /^'([^']*)'/.exec(rest))) out.push(m[1]);
    else if ((m = BARE.exec(rest))) out.push(m[0]);
    else return undefined;
    rest = rest.slice(m[0].length).trimStart();
    if (!rest) return out;
    if (rest[0] !== '.') return undefined;
    rest = rest.slice(1).trimStart();
  }
}

function unescapeBasic(s: string): string {
  return s.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[btnfr"\\]|\s*\n\s*)/g, (_, e: string) => {
    if (e[0] === 'u' || e[0] === 'U') return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/^\s*\n/.test(e)) return '';
    return ({ b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' } as Record<string, string>)[e];
  });
}

export function readTomlKey(text: string, key: string): { text: string; span: Span } | { error: string } {
  const want = splitKey(key) ?? key.split('.');
  let table: string[] = [];
  let pos = 0;
  const n = text.length;
  while (pos < n) {
    const eol = text.indexOf('\n', pos);
    const lineEnd = eol < 0 ? n : eol;
    const line = text.slice(pos, lineEnd);
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) {
      pos = lineEnd + 1;
      continue;
    }
    if (trimmed.startsWith('[[')) {
      table = ['\u0000array'];
      pos = lineEnd + 1;
      continue;
    }
    if (trimmed.startsWith('[')) {
      const close = trimmed.indexOf(']');
      table = splitKey(trimmed.slice(1, close)) ?? ['\u0000bad'];
      pos = lineEnd + 1;
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) return { error: `line ${text.slice(0, pos).split('\n').length} is not a TOML key = value line` };
    const k = splitKey(line.slice(0, eq));
    let v = pos + eq + 1;
    while (v < n && (text[v] === ' ' || text[v] === '\t')) v++;
    const full = k ? [...table, ...k] : undefined;
    const match = full && full.length === want.length && full.every((x, i) => x === want[i]);
    const read = readValue(text, v);
    if (match) {
      if (!read || read.value === undefined) return { error: 'the value is not a string' };
      return { text: read.value, span: read.span };
    }
    pos = read ? text.indexOf('\n', read.end) : lineEnd;
    pos = pos < 0 ? n : pos + 1;
  }
  return { error: 'no such key' };
}

/** A value at `at`: a string (its value and the span of its content), or another value skipped to its end. */
function readValue(text: string, at: number): { value?: string; span: Span; end: number } | undefined {
  for (const q of ['"""', "'''"]) {
    if (!text.startsWith(q, at)) continue;
    let start = at + 3;
    if (text[start] === '\n') start++;
    else if (text.startsWith('\r\n', start)) start += 2;
    let close = text.indexOf(q, start);
    if (close < 0) return undefined;
    // Up to two quotes may end the content right before the closing delimiter.
    while (text[close + 3] === q[0] && close + 3 < text.length) close++;
    const raw = text.slice(start, close);
    return { value: q === '"""' ? unescapeBasic(raw) : raw, span: { start, end: close }, end: close + 3 };
  }
  const m = /^"((?:[^"\\\n]|\\.)*)"/.exec(text.slice(at, at + 100_000)) ?? /^'([^'\n]*)'/.exec(text.slice(at, at + 100_000));
  if (m) return { value: m[0][0] === '"' ? unescapeBasic(m[1]) : m[1], span: { start: at + 1, end: at + m[0].length - 1 }, end: at + m[0].length };
  const eol = text.indexOf('\n', at);
  return { span: { start: at, end: eol < 0 ? text.length : eol }, end: eol < 0 ? text.length : eol };
}
