/**
 * The Prompty engine: what Prompty's Python runtime (microsoft/prompty, runtime/prompty) renders
 * for a `.prompty` file and its inputs.
 *
 * - The file is read like `open(path).read()` (universal newlines: \r\n and \r become \n).
 * - utils.parse's front matter regex gives the body.
 * - The body is rendered by Jinja2 (jinja/: an interpreter with the semantics of
 *   ImmutableSandboxedEnvironment(loader=DictLoader(templates)) and default settings).
 * - PromptyChatParser splits the rendered text into messages: `str.splitlines()`, role boundary
 *   lines, `![thread]`, `role[key=value]:` arguments, and markdown images into media parts.
 *
 * Mustache templates (`template: mustache`, rendered by chevron) are reported as unsupported.
 */
import type { Span } from '../types';
import { Interpreter, compileTemplate, unitOf, type Unit } from './jinja/interpreter';
import { PY_WS, codePoints, pySplitlines, pyStrip } from './jinja/pystr';
import { LimitError, PyDict, PyError, Unsupported, fromJs, type PyValue } from './jinja/values';
import type { EngineIssue, EngineMessage, EnginePart, EngineResult } from './types';

export interface PromptyOptions {
  templateType?: 'jinja2' | 'mustache';
  /** Sources of other templates by name, for {% include "x" %} / {% import %} / {% extends %} (the caller reads them). */
  templates?: Record<string, string>;
}

/** Largest `.prompty` source the engine reads. */
export const MAX_SOURCE = 1_000_000;

const MAIN = '\u0000main';

// ---------------------------------------------------------------------------
// Reading the file and finding the body
// ---------------------------------------------------------------------------

interface Text {
  text: string;
  /** Text offsets after which a \r\n became one \n (sorted), to map offsets back to the source. */
  collapsed: number[];
}

/** Universal newlines, keeping a map back to source offsets. */
function readText(source: string): Text {
  if (!source.includes('\r')) return { text: source, collapsed: [] };
  const collapsed: number[] = [];
  let text = '';
  let last = 0;
  for (let i = 0; i < source.length; i++) {
    if (source.charCodeAt(i) !== 13) continue;
    text += source.slice(last, i) + '\n';
    if (source.charCodeAt(i + 1) === 10) {
      collapsed.push(text.length);
      i++;
    }
    last = i + 1;
  }
  text += source.slice(last);
  return { text, collapsed };
}

function toSource(t: Text, offset: number): number {
  let lo = 0;
  let hi = t.collapsed.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t.collapsed[mid] <= offset) lo = mid + 1;
    else hi = mid;
  }
  return offset + lo;
}

/** utils.parse: `^\s*(?:---|\+\+\+)(.*?)(?:---|\+\+\+)\s*(.+)$` with re.S | re.M, searched. */
const FRONT_MATTER = new RegExp(`(?<![^\\n])[${PY_WS}]*(?:---|\\+\\+\\+)([\\s\\S]*?)(?:---|\\+\\+\\+)[${PY_WS}]*([\\s\\S]+)(?![^\\n])`);

// ---------------------------------------------------------------------------
// PromptyChatParser
// ---------------------------------------------------------------------------

/** Characters `(?i)` lets match each letter of the role names (Python's re, including İ ı ſ). */
const CASE: Record<string, string> = { i: 'Iiİı', s: 'Ssſ' };
function caseless(word: string): string {
  return [...word].map((c) => `[${CASE[c] ?? c.toUpperCase() + c}]`).join('');
}
const ROLES = ['assistant', 'function', 'system', 'user', 'tools'];
const BOUNDARY_HEAD = new RegExp(`^[${PY_WS}]*#?[${PY_WS}]*(?:${ROLES.map(caseless).join('|')})`, 'u');
const BOUNDARY_PLAIN_TAIL = new RegExp(`^[${PY_WS}]*:[${PY_WS}]*$`, 'u');
const BRACKET_TAIL = new RegExp(`\\][${PY_WS}]*:[${PY_WS}]*$`, 'u');
const WORD = /^[\p{L}\p{N}_]$/u;
const SPACE = new RegExp(`^[${PY_WS}]$`, 'u');

/**
 * Does `x` match `((\w+)*\s*=\s*"?([^"]*)"?\s*(,?)\s*)+` entirely? A linear NFA simulation of the
 * regex (Python's backtracking takes exponential time on some inputs; the language is the same).
 */
function argsMatch(x: string): boolean {
  // states: 0 \w* | 1 \s* before = | 2 \s* after = | 3 [^"]* | 4 \s* after closing quote | 5 \s* after comma
  const A = 1,
    B = 2,
    C = 4,
    E = 8,
    G = 16,
    H = 32;
  // epsilon closure of a state set; END (segment complete) is reachable from C, E, G, H
  const close = (s: number): number => {
    let r = s;
    if (r & C) r |= E | G | H; // "? may be absent, [^"]* empty, closing "? absent, \s*, ,? absent
    if (r & E) r |= G | H;
    if (r & G) r |= H;
    if (r & H) r |= A | B; // a new segment may start
    return r;
  };
  let cur = A | B;
  for (const ch of x) {
    const w = WORD.test(ch);
    const sp = SPACE.test(ch);
    let next = 0;
    if (cur & A) {
      if (w) next |= A;
      if (sp) next |= B;
      if (ch === '=') next |= C;
    }
    if (cur & B) {
      if (sp) next |= B;
      if (ch === '=') next |= C;
    }
    if (cur & C) {
      if (sp) next |= C;
      if (ch === '"') next |= E; // opening quote
    }
    if (cur & (C | E)) {
      if (ch !== '"') next |= E;
      if (ch === '"') next |= G; // closing quote (after [^"]*)
    }
    if (cur & G) {
      if (sp) next |= G;
      if (ch === ',') next |= H;
    }
    if (cur & H) {
      if (sp) next |= H;
    }
    cur = close(next);
    if (!cur) return false;
  }
  return (cur & H) !== 0;
}

function isBoundary(line: string): boolean {
  const head = BOUNDARY_HEAD.exec(line);
  if (!head) return false;
  const rest = line.slice(head[0].length);
  if (BOUNDARY_PLAIN_TAIL.test(rest)) return true;
  if (!rest.startsWith('[')) return false;
  const tail = BRACKET_TAIL.exec(rest);
  if (!tail) return false;
  return argsMatch(rest.slice(1, tail.index));
}

const ARG_RE = /([\p{L}\p{N}_]+)[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*=[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(("([^"]*)"|([Tt]rue|[Ff]alse)|([0-9]+(\.[0-9]+))|([0-9]+)))[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(,?)[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*/gu;

function parseArgs(args: string): Map<string, string | number | boolean> {
  const out = new Map<string, string | number | boolean>();
  for (const m of args.matchAll(ARG_RE)) {
    const g = (i: number): string => m[i + 1] ?? '';
    if (g(3) !== '') out.set(g(0), g(3));
    else if (g(4) !== '') out.set(g(0), g(4).toLowerCase() === 'true');
    else if (g(5) !== '') out.set(g(0), Number(g(5)));
    else if (g(7) !== '') {
      const n = Number(g(7));
      out.set(g(0), n);
    }
  }
  return out;
}

const IMAGE_RE = /(!\[[^\]]*\])\(([^\n]*?)(?="|\))\)/;
const IMAGE_RE_G = new RegExp(IMAGE_RE.source, 'g');

function parseContent(content: string): EnginePart[] {
  const matches = [...content.matchAll(IMAGE_RE_G)].map((m) => [m[1], m[2]] as [string, string]);
  if (!matches.length) return [{ type: 'text', text: content }];
  const chunks = content.split(IMAGE_RE);
  const items: EnginePart[] = [];
  let cur = 0;
  for (const chunk of chunks) {
    if (cur < matches.length && chunk === matches[cur][0]) {
      items.push({ type: 'media', url: pyStrip(matches[cur][1].split(' ')[0], null, true, true) });
    } else if (cur < matches.length && chunk === matches[cur][1]) cur++;
    else {
      const t = pyStrip(chunk, null, true, true);
      if (t.length > 0) items.push({ type: 'text', text: t });
    }
  }
  return items;
}

class ParseError extends Error {}

export function parseChat(data: string): EngineMessage[] {
  const messages: EngineMessage[] = [];
  let buffer: string[] = [];
  let role = 'system';
  let args = new Map<string, string | number | boolean>();
  const flush = (): void => {
    if (!buffer.length) return;
    const m: EngineMessage = { role, parts: parseContent(buffer.join('\n')) };
    const a: Record<string, string | number | boolean> = {};
    for (const [k, v] of args) if (k !== 'role' && k !== 'content') a[k] = v;
    if (Object.keys(a).length) m.args = a;
    messages.push(m);
    buffer = [];
  };
  for (const line of pySplitlines(data)) {
    if (line.includes('![thread]') && pyStrip(line, null, true, true).startsWith('![thread]')) {
      flush();
      role = 'thread';
      args = new Map();
    } else if (isBoundary(line)) {
      flush();
      if (line.includes('[') && line.includes(']')) {
        const cut = codePoints(line).slice(0, -2).join('');
        const parts = cut.split('[');
        if (parts.length > 2) throw new ParseError(`Prompty's chat parser fails on the role line ${JSON.stringify(line)}: it holds more than one '[' (ValueError: too many values to unpack)`);
        if (parts.length < 2) throw new ParseError(`Prompty's chat parser fails on the role line ${JSON.stringify(line)} (ValueError: not enough values to unpack)`);
        args = parseArgs(parts[1]);
        role = pyStrip(parts[0], null, true, true).toLowerCase();
      } else {
        args = new Map();
        role = pyStrip(line.replace(/:/g, ''), null, true, true).toLowerCase();
      }
    } else buffer.push(line);
  }
  flush();
  return messages;
}

// ---------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------

function issue(rule: EngineIssue['rule'], message: string, span: Span): EngineResult {
  return { rendered: '', messages: [], issues: [{ rule, message, span }] };
}

/** source: the WHOLE .prompty file text; data: the inputs. */
export function renderPrompty(source: string, data: Record<string, unknown>, options: PromptyOptions = {}): EngineResult {
  const whole: Span = { start: 0, end: source.length };
  if (source.length > MAX_SOURCE) return issue('unsupported-feature', `The file is larger than ${MAX_SOURCE} characters; it is not rendered.`, whole);
  const t = readText(source);
  const fm = FRONT_MATTER.exec(t.text);
  if (!fm) return issue('template-invalid', 'Prompty finds no front matter (a block between --- lines at the top): it cannot load this file.', { start: 0, end: Math.min(source.length, 3) });
  const body = fm[2];
  const bodyStart = fm.index + fm[0].length - body.length;
  const bodySpan: Span = { start: toSource(t, bodyStart), end: source.length };
  const mapSpan = (s: Span | undefined): Span => {
    if (!s) return bodySpan;
    const start = toSource(t, Math.min(bodyStart + s.start, t.text.length));
    const end = toSource(t, Math.min(bodyStart + Math.max(s.end, s.start), t.text.length));
    return { start, end: Math.max(start, end) };
  };
  if (options.templateType === 'mustache') {
    return issue('unsupported-feature', 'Mustache templates (template: mustache, rendered by chevron) are not rendered by Context Lens yet.', bodySpan);
  }
  let rendered: string;
  try {
    const main = compileTemplate(MAIN, body);
    const cache = new Map<string, Unit>();
    const templates = options.templates ?? {};
    const interp = new Interpreter((name) => {
      if (!Object.prototype.hasOwnProperty.call(templates, name)) return undefined;
      let u = cache.get(name);
      if (!u) {
        const src = templates[name];
        if (typeof src !== 'string') return undefined;
        u = compileTemplate(name, src);
        cache.set(name, u);
      }
      return u;
    });
    const vars = new Map<string, PyValue>();
    const py = fromJs(data ?? {});
    if (py instanceof PyDict) for (const [k, v] of py.entries()) if (typeof k === 'string') vars.set(k, v);
    rendered = interp.render(main, vars);
  } catch (e) {
    if (e instanceof PyError || e instanceof Unsupported || e instanceof LimitError) {
      const inMain = unitOf(e) === undefined || unitOf(e) === MAIN;
      const span = inMain ? mapSpan(e.span) : bodySpan;
      if (e instanceof PyError) return issue('template-invalid', `Jinja2 refuses this template: ${e.pyType}: ${e.message}`, span);
      if (e instanceof LimitError) return issue('unsupported-feature', `Not rendered: ${e.message}.`, span);
      return issue('unsupported-feature', `Not rendered exactly as Prompty would: ${e.message}.`, span);
    }
    if (e instanceof RangeError) return issue('unsupported-feature', 'Not rendered: the template nests too deeply.', bodySpan);
    return issue('unsupported-feature', `Not rendered: internal error (${e instanceof Error ? e.message : String(e)}).`, bodySpan);
  }
  try {
    return { rendered, messages: parseChat(rendered), issues: [] };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { rendered, messages: [], issues: [{ rule: e instanceof ParseError ? 'template-invalid' : 'unsupported-feature', message: msg, span: bodySpan }] };
  }
}
