/**
 * The Prompty body: role lines (`system:`, `user:`, ...) and Jinja2 or Mustache placeholders.
 * nunjucks' parser does not keep offsets for everything we need (and stops at the first error),
 * so this is a small hand-written scanner with exact spans that keeps going after an error:
 * an unterminated tag is reported and read as text, an unclosed block is closed at the end.
 *
 * Rendering details that change the text are applied to text nodes (their `text`), while spans
 * stay on the source: Jinja whitespace control (`{%-`, `-%}`) and Mustache standalone lines
 * (a section tag alone on its line removes that line).
 */
import { finding } from '../../rules/registry';
import { redactSecrets } from '../../text/secrets';
import type { Finding, Role, Span, TemplateMessage, TemplateNode } from '../../types';
import type { BodyResult } from '../dotprompt/scan';
import { ForwardFinder, blankNodes, normalizeRole } from '../shared';
import type { EachNode, RawUse } from '../shared';
import { PROMPTY_ROLES, type PromptyLine } from './engine';

type IfNode = Extract<TemplateNode, { type: 'if' }>;

// ---------------------------------------------------------------------------
// Tokens of the body
// ---------------------------------------------------------------------------

interface TextTok {
  t: 'text';
  start: number;
  end: number;
  trimL: boolean;
  trimR: boolean;
  /** Mustache standalone line: drop the indentation before the tag / the line break after it. */
  lineHead: boolean;
  lineTail: boolean;
}
interface ExprTok {
  t: 'expr';
  start: number;
  end: number;
  inner: Span;
  raw: boolean;
}
interface StmtTok {
  t: 'stmt';
  start: number;
  end: number;
  inner: Span;
  keyword: string;
}
interface SectionTok {
  t: 'open' | 'inverted' | 'close';
  start: number;
  end: number;
  name: string;
  nameSpan: Span;
}
interface SkipTok {
  t: 'skip';
  start: number;
  end: number;
  /** Mustache comments and partials can stand alone on a line; Jinja comments cannot. */
  mustache: boolean;
}
type Tok = TextTok | ExprTok | StmtTok | SectionTok | SkipTok;

const OPENER = /\{\{|\{%|\{#/g;

function nextOpener(text: string, from: number): number {
  OPENER.lastIndex = from;
  const m = OPENER.exec(text);
  return m ? m.index : -1;
}

/** How far a tag is scanned for string literals; longer tags are read without that care. */
const QUOTE_SCAN_LIMIT = 2000;

/** The first `closer` outside string literals after `from`, and the first opener before it. */
function scanQuoted(text: string, from: number, closer: string, limit: number): { close: number; next: number } | undefined {
  let quote = '';
  let next = -1;
  const end = Math.min(text.length, limit);
  for (let i = from; i < end; i++) {
    const c = text.charAt(i);
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (text.startsWith(closer, i)) return { close: i, next };
    else if (next < 0 && c === '{' && /[{%#]/.test(text.charAt(i + 1))) next = i;
  }
  return undefined;
}

class Tokenizer {
  readonly toks: Tok[] = [];
  private textStart: number;
  private readonly find: ForwardFinder;

  constructor(
    private readonly path: string,
    private readonly text: string,
    private readonly bodyStart: number,
    private readonly findings: Finding[],
  ) {
    this.textStart = bodyStart;
    this.find = new ForwardFinder(text);
  }

  private pushText(end: number): void {
    if (end > this.textStart) {
      this.push({ t: 'text', start: this.textStart, end, trimL: false, trimR: false, lineHead: false, lineTail: false });
    }
  }

  /** Set by a tag ending in `-}}` / `-%}`: the next text loses its leading whitespace. */
  private pendingTrimL = false;

  private push(tok: Tok): void {
    if (tok.t === 'text' && this.pendingTrimL) tok.trimL = true;
    this.pendingTrimL = false;
    this.toks.push(tok);
  }

  /**
   * Jinja whitespace control, called right after a tag was pushed: `{{-` / `{%-` trims the text
   * before the tag, `-}}` / `-%}` the text after it.
   */
  private trims(innerStart: number, innerEnd: number): void {
    const prev = this.toks[this.toks.length - 2];
    if (this.text.charAt(innerStart) === '-' && prev?.t === 'text') prev.trimR = true;
    if (innerEnd - 1 > innerStart && this.text.charAt(innerEnd - 1) === '-') this.pendingTrimL = true;
  }

  private unterminated(at: number, what: string, closer: string): void {
    const end = Math.max(at + 2, Math.min(this.find.lineEnd(at), this.text.length));
    const shown = this.text.slice(at, Math.min(end, at + 40));
    this.findings.push(finding('template-invalid', this.path, { start: at, end }, `Unterminated ${what} '${shown}': no closing '${closer}'.`));
  }

  run(): Tok[] {
    const text = this.text;
    let i = this.bodyStart;
    while (i < text.length) {
      const at = nextOpener(text, i);
      if (at < 0) break;
      const two = text.slice(at, at + 2);
      if (two === '{#') {
        const close = this.find.indexOf('#}', at + 2);
        if (close < 0) {
          this.unterminated(at, 'Jinja comment', '#}');
          i = at + 2;
          continue;
        }
        this.flushTextBefore(at);
        this.push({ t: 'skip', start: at, end: close + 2, mustache: false });
        this.trims(at + 2, close);
        i = this.textStart = close + 2;
        continue;
      }
      const triple = two === '{{' && text.charAt(at + 2) === '{';
      const open = triple ? 3 : 2;
      const closer = two === '{%' ? '%}' : triple ? '}}}' : '}}';
      let close = this.find.indexOf(closer, at + open);
      let next = nextOpener(text, at + open);
      // Jinja writes literal braces as `{{ '{{' }}`: braces inside a string literal neither open nor close.
      const segEnd = Math.min(close < 0 ? text.length : close, at + QUOTE_SCAN_LIMIT);
      if (/["']/.test(text.slice(at + open, segEnd))) {
        const q = scanQuoted(text, at + open, closer, at + QUOTE_SCAN_LIMIT);
        if (q) ({ close, next } = q);
      }
      if (close < 0 || (next >= 0 && next < close)) {
        this.unterminated(at, two === '{%' ? 'Jinja tag' : 'placeholder', closer);
        i = at + 2;
        continue;
      }
      const end = close + closer.length;
      const inner = { start: at + open, end: close };
      this.flushTextBefore(at);
      if (two === '{%') {
        const kw = /^[-+]?\s*([A-Za-z_]\w*)/.exec(text.slice(inner.start, inner.end))?.[1] ?? '';
        if (kw === 'raw') {
          // {% raw %} ... {% endraw %}: everything between is text.
          const re = /\{%-?\s*endraw\s*-?%\}/g;
          re.lastIndex = end;
          const m = re.exec(text);
          this.push({ t: 'skip', start: at, end, mustache: false });
          this.trims(inner.start, inner.end);
          if (!m) {
            this.findings.push(finding('template-invalid', this.path, { start: at, end }, "'{% raw %}' is never closed: add '{% endraw %}'."));
            this.textStart = end;
            i = text.length;
            break;
          }
          this.textStart = end;
          this.pushText(m.index);
          this.push({ t: 'skip', start: m.index, end: m.index + m[0].length, mustache: false });
          i = this.textStart = m.index + m[0].length;
          continue;
        }
        this.push({ t: 'stmt', start: at, end, inner, keyword: kw });
        this.trims(inner.start, inner.end);
      } else {
        this.mustacheTag(at, end, inner, triple);
      }
      i = this.textStart = end;
    }
    this.pushText(text.length);
    this.standalone();
    return this.toks;
  }

  private flushTextBefore(at: number): void {
    this.pushText(at);
  }

  private mustacheTag(at: number, end: number, inner: Span, triple: boolean): void {
    const body = this.text.slice(inner.start, inner.end);
    const lead = body.length - body.trimStart().length;
    const sigil = triple ? '' : body.charAt(lead);
    const nameOf = (from: number): { name: string; nameSpan: Span } => {
      const rest = this.text.slice(from, inner.end);
      const l = rest.length - rest.trimStart().length;
      const name = rest.trim();
      return { name, nameSpan: { start: from + l, end: from + l + name.length } };
    };
    switch (sigil) {
      case '#':
        this.push({ t: 'open', start: at, end, ...nameOf(inner.start + lead + 1) });
        return;
      case '^':
        this.push({ t: 'inverted', start: at, end, ...nameOf(inner.start + lead + 1) });
        return;
      case '/':
        this.push({ t: 'close', start: at, end, ...nameOf(inner.start + lead + 1) });
        return;
      case '!':
      case '>':
      case '=':
        this.push({ t: 'skip', start: at, end, mustache: true });
        return;
      case '&':
        this.push({ t: 'expr', start: at, end, inner: { start: inner.start + lead + 1, end: inner.end }, raw: true });
        return;
      default:
        this.push({ t: 'expr', start: at, end, inner, raw: triple });
        this.trims(inner.start, inner.end);
    }
  }

  /** Mustache standalone lines: a section, comment or partial tag alone on its line removes the line. */
  private standalone(): void {
    const text = this.text;
    const isNl = (c: string) => c === '\n' || c === '\r';
    for (let k = 0; k < this.toks.length; k++) {
      const tok = this.toks[k];
      const mustache = tok.t === 'open' || tok.t === 'inverted' || tok.t === 'close' || (tok.t === 'skip' && tok.mustache);
      if (!mustache) continue;
      const prev = this.toks[k - 1];
      const next = this.toks[k + 1];
      let headOk = false;
      if (!prev) headOk = tok.start === this.bodyStart || isNl(text.charAt(tok.start - 1));
      else if (prev.t === 'text') {
        const s = text.slice(prev.start, prev.end);
        const lastNl = Math.max(s.lastIndexOf('\n'), s.lastIndexOf('\r'));
        headOk = /^[ \t]*$/.test(s.slice(lastNl + 1)) && (lastNl >= 0 || prev.start === this.bodyStart);
      }
      let tailOk = false;
      if (!next) tailOk = tok.end === text.length;
      else if (next.t === 'text') {
        const s = text.slice(next.start, next.end);
        const nl = s.search(/[\r\n]/);
        tailOk = /^[ \t]*$/.test(nl < 0 ? s : s.slice(0, nl)) && (nl >= 0 || next.end === text.length);
      }
      if (headOk && tailOk) {
        if (prev?.t === 'text') prev.lineTail = true;
        if (next?.t === 'text') next.lineHead = true;
      }
    }
  }
}

function materialize(text: string, start: number, end: number, f: { trimL: boolean; trimR: boolean; lineHead: boolean; lineTail: boolean }): string {
  let s = text.slice(start, end);
  if (f.lineHead) s = s.replace(/^[ \t]*(\r\n|\r|\n)?/, '');
  if (f.lineTail) s = s.replace(/[ \t]*$/, '');
  if (f.trimL) s = s.trimStart();
  if (f.trimR) s = s.trimEnd();
  return s;
}

// ---------------------------------------------------------------------------
// Jinja expressions: which names are variable references, and where
// ---------------------------------------------------------------------------

interface ETok {
  k: 'id' | 'str' | 'num' | 'op';
  v: string;
  s: number;
  e: number;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'if', 'else', 'elif', 'true', 'false', 'none', 'True', 'False', 'None', 'recursive', 'as', 'with', 'without', 'ignore', 'missing']);

function lexExpr(text: string, start: number, end: number): ETok[] {
  const out: ETok[] = [];
  let i = start;
  while (i < end) {
    const c = text.charAt(i);
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < end && text.charAt(j) !== c) j += text.charAt(j) === '\\' ? 2 : 1;
      out.push({ k: 'str', v: text.slice(i + 1, Math.min(j, end)), s: i, e: Math.min(j + 1, end) });
      i = j + 1;
      continue;
    }
    const id = /[A-Za-z_][A-Za-z0-9_]*/y;
    id.lastIndex = i;
    let m = id.exec(text);
    if (m && i + m[0].length <= end) {
      out.push({ k: 'id', v: m[0], s: i, e: i + m[0].length });
      i += m[0].length;
      continue;
    }
    const num = /\d+(?:\.\d+)?/y;
    num.lastIndex = i;
    m = num.exec(text);
    if (m && i + m[0].length <= end) {
      out.push({ k: 'num', v: m[0], s: i, e: i + m[0].length });
      i += m[0].length;
      continue;
    }
    const two = text.slice(i, i + 2);
    const op = ['==', '!=', '<=', '>=', '**', '//'].includes(two) && i + 2 <= end ? two : c;
    out.push({ k: 'op', v: op, s: i, e: i + op.length });
    i += op.length;
  }
  return out;
}

interface Ref {
  path: string[];
  span: Span;
}

/** Variable references among `toks[from, to)`: not attributes, filters, tests, calls or keyword args. */
function refsOf(toks: ETok[], from = 0, to = toks.length): Ref[] {
  const refs: Ref[] = [];
  for (let k = from; k < to; k++) {
    const tk = toks[k];
    if (tk.k !== 'id') continue;
    const prev = toks[k - 1];
    const next = toks[k + 1];
    if (k > from && prev && prev.k === 'op' && (prev.v === '.' || prev.v === '|')) continue;
    if (prev && prev.k === 'id' && (prev.v === 'is' || (prev.v === 'not' && toks[k - 2]?.v === 'is'))) continue;
    if (KEYWORDS.has(tk.v)) continue;
    if (next && next.k === 'op' && (next.v === '(' || next.v === '=')) continue;
    const path = [tk.v];
    let endPos = tk.e;
    let j = k + 1;
    while (j < to) {
      const a = toks[j];
      const b = toks[j + 1];
      if (a.v === '.' && a.k === 'op' && b?.k === 'id' && j + 1 < to) {
        if (toks[j + 2]?.v === '(' ) break; // a method call: `x.items()` reads x
        path.push(b.v);
        endPos = b.e;
        j += 2;
      } else if (a.v === '[' && b?.k === 'str' && toks[j + 2]?.v === ']' && j + 2 < to) {
        path.push(b.v);
        endPos = toks[j + 2].e;
        j += 3;
      } else break;
    }
    refs.push({ path, span: { start: tk.s, end: endPos } });
    k = j - 1;
  }
  return refs;
}

// ---------------------------------------------------------------------------
// Tree building
// ---------------------------------------------------------------------------

interface RoleMark {
  type: 'role';
  role: Role;
  markerSpan: Span;
}
type Item = TemplateNode | RoleMark;

interface Frame {
  kind: 'root' | 'for' | 'if' | 'section' | 'inverted' | 'discard' | 'transparent';
  /** Key of the tag that closes the frame: 'endfor', 'endif', '/name', 'endmacro', ... */
  end: string;
  list: Item[];
  node?: EachNode | IfNode;
  head?: Tok;
  chained?: boolean;
  names?: Set<string>;
  use?: RawUse;
  /** Parent list the node was added to (to swap a history loop in place). */
  parent?: Item[];
  /** A block beyond MAX_BLOCK_DEPTH: kept only to match its closer; its content stays inline. */
  capped?: boolean;
}

/** Deepest block nesting kept as nodes; deeper blocks are read inline (renderers recurse). */
const MAX_BLOCK_DEPTH = 64;

/**
 * A role line as the file's runtime line reads it (language/prompty/engine.ts PROMPTY_ROLES): 0.1.x
 * starts messages at system/user/assistant/function, with an optional leading `#`; v2 at
 * system/user/assistant/developer, also with `[key=value]` attributes.
 */
function roleLinePattern(line: PromptyLine): RegExp {
  const names = PROMPTY_ROLES[line].join('|');
  const attrs = line === 'v2' ? '(?:\\[[^\\]\\r\\n]*\\])?' : '';
  return new RegExp(`^([ \\t]*)(#?[ \\t]*(${names})${attrs}[ \\t]*:)[ \\t]*(\\r\\n|\\r|\\n|$)`, 'gim');
}

const BLOCK_ENDS: Record<string, Frame['kind']> = {
  macro: 'discard',
  call: 'discard',
  filter: 'transparent',
  block: 'transparent',
  with: 'transparent',
  autoescape: 'transparent',
};

class Builder {
  readonly uses: RawUse[] = [];
  private readonly root: Item[] = [];
  private readonly frames: Frame[];
  private readonly locals = new Set<string>(['caller', 'varargs', 'kwargs', 'self', 'super']);
  // Scope bookkeeping kept as counters, so lookups cost O(1) however deep the blocks go.
  private forDepth = 0;
  private sectionDepth = 0;
  private nodeDepth = 0;
  private readonly aliasCount = new Map<string, number>();
  /** For each closing key, the indices of open frames it would close (innermost last). */
  private readonly openByKey = new Map<string, number[]>();
  private depthReported = false;

  constructor(
    private readonly path: string,
    private readonly text: string,
    private readonly bodyStart: number,
    private readonly inputs: Record<string, Span>,
    private readonly findings: Finding[],
    /** Role lines as the file's runtime line reads them. */
    private readonly roleLine: RegExp = roleLinePattern('0.1'),
  ) {
    this.frames = [{ kind: 'root', end: '', list: this.root }];
  }

  private pushFrame(frame: Frame): void {
    this.frames.push(frame);
    if (frame.kind === 'for') this.forDepth++;
    if (frame.kind === 'section') this.sectionDepth++;
    if (frame.node) this.nodeDepth++;
    for (const n of frame.names ?? []) this.aliasCount.set(n, (this.aliasCount.get(n) ?? 0) + 1);
    if (!frame.chained) {
      const list = this.openByKey.get(frame.end) ?? [];
      list.push(this.frames.length - 1);
      this.openByKey.set(frame.end, list);
    }
  }

  /** Pops frames down to (excluding) index `idx`. */
  private popTo(idx: number): void {
    while (this.frames.length > idx) {
      const frame = this.frames.pop() as Frame;
      if (frame.kind === 'for') this.forDepth--;
      if (frame.kind === 'section') this.sectionDepth--;
      if (frame.node) this.nodeDepth--;
      for (const n of frame.names ?? []) this.aliasCount.set(n, (this.aliasCount.get(n) ?? 1) - 1);
      if (!frame.chained) this.openByKey.get(frame.end)?.pop();
    }
  }

  /** True (and reported once) when a new block would nest deeper than MAX_BLOCK_DEPTH. */
  private tooDeep(tok: Tok): boolean {
    if (this.nodeDepth < MAX_BLOCK_DEPTH) return false;
    if (!this.depthReported) {
      this.invalid({ start: tok.start, end: tok.end }, `Blocks are nested more than ${MAX_BLOCK_DEPTH} levels deep; deeper blocks are read inline.`);
      this.depthReported = true;
    }
    return true;
  }

  private get top(): Frame {
    return this.frames[this.frames.length - 1];
  }

  private invalid(span: Span, message: string): void {
    this.findings.push(finding('template-invalid', this.path, span, message));
  }

  private src(t: { start: number; end: number }): string {
    // Redacted before it is cut: a secret cut short is no longer recognised.
    const s = redactSecrets(this.text.slice(t.start, t.end).replace(/\s+/g, ' '));
    return s.length > 60 ? `${s.slice(0, 57)}…` : s;
  }

  /** Resolves a reference: a slot, or a loop alias / local / loop item. */
  private resolve(path: string[]): { path: string[]; slot?: string } {
    const root = path[0];
    if (this.locals.has(root) || (this.forDepth > 0 && root === 'loop') || (this.aliasCount.get(root) ?? 0) > 0) return { path };
    // Mustache looks names up on the section's item first; a declared input is the root's.
    if (this.sectionDepth > 0 && this.inputs[root] === undefined) return { path: ['this', ...path] };
    return { path, slot: root };
  }

  private record(ref: Ref, form: RawUse['form']): { path: string[]; slot?: string; use?: RawUse } {
    const r = this.resolve(ref.path);
    if (!r.slot) return r;
    const use: RawUse = { slot: r.slot, span: ref.span, form };
    this.uses.push(use);
    return { ...r, use };
  }

  private text_(tok: TextTok, start: number, end: number, first: boolean, last: boolean): TemplateNode | undefined {
    const flags = { trimL: first && tok.trimL, trimR: last && tok.trimR, lineHead: first && tok.lineHead, lineTail: last && tok.lineTail };
    const s = materialize(this.text, start, end, flags);
    if (s === '' && end === start) return undefined;
    return { type: 'text', text: s, span: { start, end } };
  }

  private addText(tok: TextTok): void {
    const list = this.top.list;
    if (this.frames.length > 1) {
      const n = this.text_(tok, tok.start, tok.end, true, true);
      if (n && (n.type !== 'text' || n.text !== '')) list.push(n);
      return;
    }
    // Top level: role lines split the text into messages.
    const slice = this.text.slice(tok.start, tok.end);
    let from = tok.start;
    const ROLE_LINE = this.roleLine;
    ROLE_LINE.lastIndex = 0;
    for (let m = ROLE_LINE.exec(slice); m; m = ROLE_LINE.exec(slice)) {
      const lineStart = tok.start + m.index;
      const atLineStart = lineStart === this.bodyStart || /[\r\n]/.test(this.text.charAt(lineStart - 1));
      const afterEnd = lineStart + m[0].length;
      const alone = m[4] !== '' || afterEnd === this.text.length;
      if (!atLineStart || !alone) continue;
      const role = normalizeRole(m[3]) as Role;
      const markerStart = lineStart + m[1].length;
      const before = this.text_(tok, from, lineStart, from === tok.start, false);
      if (before && before.type === 'text' && before.text !== '') list.push(before);
      list.push({ type: 'role', role, markerSpan: { start: markerStart, end: markerStart + m[2].length } });
      from = afterEnd;
    }
    const rest = this.text_(tok, from, tok.end, from === tok.start, true);
    if (rest && rest.type === 'text' && rest.text !== '') list.push(rest);
  }

  private addExpr(tok: ExprTok): void {
    const trimmed = this.text.slice(tok.inner.start, tok.inner.end).replace(/^-|-$/g, '').trim();
    if (trimmed === '.' || trimmed === 'this') {
      this.top.list.push({ type: 'var', path: ['this'], span: { start: tok.start, end: tok.end }, raw: tok.raw });
      return;
    }
    const toks = lexExpr(this.text, tok.inner.start, tok.inner.end);
    if (toks[0]?.v === '-') toks.shift();
    if (toks[toks.length - 1]?.v === '-') toks.pop();
    if (toks.length === 1 && toks[0].k === 'str') {
      // `{{ '{{' }}` is how Jinja writes literal braces: it renders as its text.
      this.top.list.push({ type: 'text', text: toks[0].v, span: { start: tok.start, end: tok.end } });
      return;
    }
    const refs = refsOf(toks);
    let main: string[] | undefined;
    for (const ref of refs) {
      const r = this.record(ref, 'var');
      main ??= r.path;
    }
    if (main) this.top.list.push({ type: 'var', path: main, span: { start: tok.start, end: tok.end }, raw: tok.raw });
  }

  private openFrame(frame: Frame, node: EachNode | IfNode | undefined): void {
    if (node && frame.head && this.tooDeep(frame.head)) {
      this.pushFrame({ kind: 'transparent', end: frame.end, list: this.top.list, head: frame.head, names: frame.names, capped: true });
      return;
    }
    if (node) {
      frame.parent = this.top.list;
      this.top.list.push(node);
    }
    this.pushFrame(frame);
  }

  private closeFrame(frame: Frame, end: number): void {
    if (frame.node) frame.node.span = { start: frame.node.span.start, end };
    if (frame.kind === 'for' || frame.kind === 'section') this.detectHistory(frame);
  }

  /**
   * Prompty's chat-history idiom, a loop that writes role lines itself:
   * `{% for item in history %}{{item.role}}:\n{{item.content}}{% endfor %}`. The loop becomes a
   * history node, so the history items turn into messages of their own roles.
   */
  private detectHistory(frame: Frame): void {
    const node = frame.node as EachNode;
    if (!frame.use || !frame.parent) return;
    const body = node.body;
    const itemRoot = node.alias ?? 'this';
    // The role placeholder must make a line of its own once rendered (`{{m.role}}:` alone on its
    // line), as Prompty only splits at such lines; `[{{t.at}}] {{t.role}}: {{t.text}}` is a transcript.
    const hit = body.some((n, k) => {
      if (n.type !== 'var' || n.path.length !== 2 || n.path[0] !== itemRoot || n.path[1] !== 'role') return false;
      const before = this.text.slice(k > 0 ? body[k - 1].span.start : node.headSpan.end, n.span.start);
      const next = body[k + 1];
      const after = next?.type === 'text' ? this.text.slice(next.span.start, next.span.end) : '';
      return /(^|[\r\n])[ \t]*#?[ \t]*$/.test(before) && /^[ \t]*:[ \t]*(\r\n|\r|\n|$)/.test(after);
    });
    if (!hit) return;
    const idx = frame.parent.indexOf(node);
    if (idx >= 0) frame.parent[idx] = { type: 'history', slot: frame.use.slot, span: node.span };
    frame.use.form = 'history';
    delete frame.use.each;
  }

  /** Closes the frame ended by `key` (e.g. 'endfor', '/evidence'), reporting frames left open. */
  private close(key: string, tok: Tok): void {
    const open = this.openByKey.get(key);
    const idx = open && open.length ? open[open.length - 1] : -1;
    if (idx < 0) {
      this.invalid({ start: tok.start, end: tok.end }, `'${this.src(tok)}' closes a block that was never opened.`);
      return;
    }
    for (let k = this.frames.length - 1; k > idx; k--) {
      const f = this.frames[k];
      if (!f.chained && !f.capped && f.head) {
        this.invalid({ start: f.head.start, end: f.head.end }, `'${this.src(f.head)}' is not closed: add '${closerText(f.end)}' before '${this.src(tok)}'.`);
      }
      // Links of an elif chain end with their `{% endif %}`; anything else was cut short here.
      this.closeFrame(f, f.chained ? tok.end : tok.start);
    }
    this.closeFrame(this.frames[idx], tok.end);
    this.popTo(idx);
  }

  private stmt(tok: StmtTok): void {
    const kw = tok.keyword;
    const toks = lexExpr(this.text, tok.inner.start, tok.inner.end);
    while (toks.length && (toks[0].v === '-' || toks[0].v === '+')) toks.shift();
    if (toks.length && (toks[toks.length - 1].v === '-' || toks[toks.length - 1].v === '+')) toks.pop();
    const args = toks.slice(1);
    const head: Span = { start: tok.start, end: tok.end };
    switch (kw) {
      case 'for': {
        const inAt = args.findIndex((t) => t.k === 'id' && t.v === 'in');
        const targets = (inAt < 0 ? args : args.slice(0, inAt)).filter((t) => t.k === 'id').map((t) => t.v);
        if (inAt < 0 || targets.length === 0) this.invalid(head, `'${this.src(tok)}' should read '{% for item in items %}'.`);
        let condAt = args.findIndex((t, k) => k > inAt && t.k === 'id' && (t.v === 'if' || t.v === 'recursive'));
        if (condAt < 0) condAt = args.length;
        const iterRefs = inAt < 0 ? [] : refsOf(args, inAt + 1, condAt);
        const node: EachNode = { type: 'each', path: [], body: [], span: { ...head }, headSpan: head };
        if (targets.length) node.alias = targets[targets.length === 2 ? 1 : 0];
        const frame: Frame = { kind: 'for', end: 'endfor', list: node.body, node, head: tok, names: new Set(targets) };
        iterRefs.forEach((ref, k) => {
          const r = this.record(ref, k === 0 ? 'each' : 'var');
          if (k === 0) {
            node.path = r.path;
            if (r.use) {
              r.use.each = node;
              frame.use = r.use;
            }
          }
        });
        this.openFrame(frame, node);
        // The loop condition (`for d in docs if d.ok`) sees the loop variable.
        for (const ref of refsOf(args, condAt)) this.record(ref, 'if');
        return;
      }
      case 'if': {
        const node = this.ifNode(args, head);
        this.openFrame({ kind: 'if', end: 'endif', list: node.body, node, head: tok }, node);
        return;
      }
      case 'elif': {
        const f = this.top;
        if (f.capped) {
          this.ifNode(args, head);
          return;
        }
        if (f.kind !== 'if') {
          this.invalid(head, `'${this.src(tok)}' is outside of an '{% if %}' block.`);
          return;
        }
        const node = this.ifNode(args, head);
        if (this.tooDeep(tok)) {
          // A chain this long nests each link in the previous one; read the rest inline.
          this.pushFrame({ kind: 'transparent', end: 'endif', list: f.list, head: tok, chained: true, capped: true });
          return;
        }
        (f.node as IfNode).inverse = [node];
        this.pushFrame({ kind: 'if', end: 'endif', list: node.body, node, head: tok, chained: true });
        return;
      }
      case 'else': {
        const f = this.top;
        if (f.capped) return;
        if ((f.kind === 'if' || f.kind === 'for') && f.node && !f.node.inverse) {
          f.node.inverse = [];
          f.list = f.node.inverse;
        } else if (f.kind === 'if' || f.kind === 'for') {
          this.invalid(head, `A second '{% else %}' in the same block.`);
        } else {
          this.invalid(head, `'{% else %}' is outside of an '{% if %}' or '{% for %}' block.`);
        }
        return;
      }
      case 'set': {
        const eq = args.findIndex((t) => t.v === '=');
        const targets = (eq < 0 ? args : args.slice(0, eq)).filter((t, k, a) => t.k === 'id' && a[k - 1]?.v !== '.');
        for (const ref of eq < 0 ? [] : refsOf(args, eq + 1)) this.record(ref, 'var');
        for (const t of targets) this.locals.add(t.v);
        if (eq < 0) this.pushFrame({ kind: 'discard', end: 'endset', list: [], head: tok });
        return;
      }
      case 'macro':
      case 'call':
      case 'filter':
      case 'block':
      case 'with':
      case 'autoescape': {
        if (kw === 'macro' && args[0]?.k === 'id') this.locals.add(args[0].v);
        if (kw === 'with') {
          args.forEach((t, k) => {
            if (t.k === 'id' && args[k + 1]?.v === '=') this.locals.add(t.v);
          });
        }
        if (kw === 'with' || kw === 'filter' || kw === 'call') for (const ref of refsOf(args)) this.record(ref, 'var');
        const kind = BLOCK_ENDS[kw];
        this.pushFrame({ kind, end: `end${kw}`, list: kind === 'discard' ? [] : this.top.list, head: tok });
        return;
      }
      case 'import':
      case 'from': {
        const asAt = args.findIndex((t) => t.v === 'as');
        if (asAt >= 0 && args[asAt + 1]?.k === 'id') this.locals.add(args[asAt + 1].v);
        if (kw === 'from') {
          const imp = args.findIndex((t) => t.v === 'import');
          for (const t of args.slice(imp + 1)) if (t.k === 'id' && t.v !== 'as') this.locals.add(t.v);
        }
        return;
      }
      case 'do':
        for (const ref of refsOf(args)) this.record(ref, 'var');
        return;
      default:
        if (kw.startsWith('end')) {
          this.close(kw, tok);
          return;
        }
        // include, extends, break, continue and extension tags render nothing we can see.
        return;
    }
  }

  private ifNode(args: ETok[], head: Span): IfNode {
    const refs = refsOf(args);
    let main: string[] = [];
    refs.forEach((ref, k) => {
      const r = this.record(ref, 'if');
      if (k === 0) main = r.path;
    });
    const negate = args[0]?.k === 'id' && args[0].v === 'not';
    return { type: 'if', path: main, negate, body: [], span: { ...head }, headSpan: head };
  }

  private section(tok: SectionTok): void {
    const head = { start: tok.start, end: tok.end };
    if (tok.t === 'close') {
      this.close(`/${tok.name}`, tok);
      return;
    }
    const path = tok.name === '.' ? ['this'] : tok.name.split('.');
    if (tok.t === 'inverted') {
      const r = tok.name === '.' ? { path } : this.record({ path, span: tok.nameSpan }, 'if');
      const node: IfNode = { type: 'if', path: r.path, negate: true, body: [], span: { ...head }, headSpan: head };
      this.openFrame({ kind: 'inverted', end: `/${tok.name}`, list: node.body, node, head: tok }, node);
      return;
    }
    const r = tok.name === '.' ? { path, use: undefined } : this.record({ path, span: tok.nameSpan }, 'each');
    const node: EachNode = { type: 'each', path: r.path, body: [], span: { ...head }, headSpan: head };
    if (r.use) r.use.each = node;
    this.openFrame({ kind: 'section', end: `/${tok.name}`, list: node.body, node, head: tok, use: r.use }, node);
  }

  build(toks: Tok[]): Item[] {
    for (const tok of toks) {
      switch (tok.t) {
        case 'text':
          this.addText(tok);
          break;
        case 'expr':
          this.addExpr(tok);
          break;
        case 'stmt':
          this.stmt(tok);
          break;
        case 'open':
        case 'inverted':
        case 'close':
          this.section(tok);
          break;
        default:
          break;
      }
    }
    // Blocks still open at the end are closed there, each reported at its opening tag.
    for (let k = this.frames.length - 1; k > 0; k--) {
      const f = this.frames[k];
      if (!f.chained && !f.capped && f.head) {
        this.invalid({ start: f.head.start, end: f.head.end }, `'${this.src(f.head)}' is never closed: add '${closerText(f.end)}'.`);
      }
      this.closeFrame(f, this.text.length);
    }
    this.popTo(1);
    return this.root;
  }
}

function closerText(key: string): string {
  return key.startsWith('/') ? `{{${key}}}` : `{% ${key} %}`;
}

/** Splits the top level into messages at role lines; text before the first is `system`. */
function toMessages(items: Item[], bodyStart: number, end: number): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  let cur = { role: 'system' as Role, markerSpan: { start: bodyStart, end: bodyStart }, start: bodyStart, nodes: [] as TemplateNode[], explicit: false };
  const flush = (to: number) => {
    if (cur.explicit || !blankNodes(cur.nodes)) out.push({ role: cur.role, markerSpan: cur.markerSpan, span: { start: cur.start, end: to }, nodes: cur.nodes });
  };
  for (const item of items) {
    if (item.type === 'role') {
      flush(item.markerSpan.start);
      cur = { role: item.role, markerSpan: item.markerSpan, start: item.markerSpan.start, nodes: [], explicit: true };
    } else {
      cur.nodes.push(item);
    }
  }
  flush(end);
  return out;
}

export function parsePromptyBody(path: string, text: string, bodyStart: number, inputs: Record<string, Span>, line: PromptyLine = '0.1'): BodyResult {
  const findings: Finding[] = [];
  const toks = new Tokenizer(path, text, bodyStart, findings).run();
  const builder = new Builder(path, text, bodyStart, inputs, findings, roleLinePattern(line));
  const items = builder.build(toks);
  return { messages: toMessages(items, bodyStart, text.length), uses: builder.uses, findings };
}
