/**
 * The dotprompt body: the one parse of the body as dotprompt renders it (trimmed), by Handlebars's
 * own parser (engine.ts `bodyTree`: the runtime's grammar, exact locations, the tree the compiler
 * compiles too), turned into messages, render-ready nodes and slot uses.
 *
 * The parser stops at the first error, so a broken body is repaired before it is parsed
 * again: unterminated tags and stray closers are blanked (same length, line breaks kept, so every
 * later location is still exact), blocks closed too early are turned into plain helper calls, and
 * blocks never closed get their closer appended after the end of the text. Each repair is
 * reported as a `template-invalid` finding at the tag, and the rest of the body is still analysed.
 */
/// <reference types="handlebars" />
import { bodyTree, parseHandlebars } from './engine';
import { finding } from '../../rules/registry';
import { redactSecrets } from '../../text/secrets';
import { LineIndex } from '../../text/lineIndex';
import type { Finding, Role, Span, TemplateMessage, TemplateNode } from '../../types';
import { ForwardFinder, blankNodes, normalizeRole } from '../shared';
import type { BodyResult, EachNode, RawUse } from '../shared';

/** The tree types of Handlebars' own package (its `hbs.AST` declarations). */
import AST = hbs.AST;

/** Handlebars' own parse (engine.ts), uncached: for repaired texts and pieces, which are nobody else's. */
const parse = (src: string): AST.Program => parseHandlebars(src) as AST.Program;

// ---------------------------------------------------------------------------
// Tag scanning and repair
// ---------------------------------------------------------------------------

interface HbTag {
  start: number;
  end: number;
  kind: 'open' | 'close' | 'else' | 'comment' | 'other';
  name?: string;
  /** False when no `}}` follows before the next `{{` (or the end). */
  closed: boolean;
}

/** A lenient scan of Handlebars tags, used only to repair a body the real parser rejected. */
export function scanHandlebarsTags(src: string): HbTag[] {
  const tags: HbTag[] = [];
  const find = new ForwardFinder(src);
  let i = 0;
  while (i < src.length) {
    const at = src.indexOf('{{', i);
    if (at < 0) break;
    if (at > 0 && src.charAt(at - 1) === '\\' && src.charAt(at - 2) !== '\\') {
      i = at + 2;
      continue;
    }
    // Raw blocks {{{{raw}}}} ... {{{{/raw}}}} hold text only.
    if (src.startsWith('{{{{', at)) {
      const close = find.indexOf('}}}}', at + 4);
      const name = /^\{\{\{\{\s*([^\s}]+)/.exec(src.slice(at, at + 100))?.[1] ?? '';
      const endTag = close < 0 ? -1 : find.indexOf(`{{{{/${name}}}}}`, close + 4);
      const end = endTag < 0 ? (close < 0 ? src.length : close + 4) : endTag + name.length + 9;
      tags.push({ start: at, end, kind: 'other', closed: close >= 0 });
      i = end;
      continue;
    }
    let closer = '}}';
    let kind: HbTag['kind'] = 'other';
    if (src.startsWith('{{!--', at) || src.startsWith('{{~!--', at)) {
      closer = '--}}';
      kind = 'comment';
    } else if (src.startsWith('{{!', at) || src.startsWith('{{~!', at)) kind = 'comment';
    else if (src.startsWith('{{{', at)) closer = '}}}';
    const close = find.indexOf(closer, at + 2);
    const next = kind === 'comment' ? -1 : find.indexOf('{{', at + 2);
    if (close < 0 || (next >= 0 && next < close)) {
      let end = find.lineEnd(at);
      if (next >= 0) end = Math.min(end, next);
      tags.push({ start: at, end, kind, closed: false });
      i = Math.max(at + 2, end);
      continue;
    }
    const end = close + closer.length;
    const inner = src.slice(at + 2, close).replace(/^~/, '').replace(/~$/, '').trim();
    let name: string | undefined;
    let m: RegExpExecArray | null;
    if (kind === 'comment') {
      // kind stays comment
    } else if ((m = /^#[>*]?\s*([^\s}~()]+)/.exec(inner))) {
      kind = 'open';
      name = m[1];
    } else if ((m = /^\^\s*([^\s}~()]+)/.exec(inner))) {
      kind = 'open';
      name = m[1];
    } else if ((m = /^\/\s*([^\s}~()]+)/.exec(inner))) {
      kind = 'close';
      name = m[1];
    } else if (/^(else\b|\^$)/.test(inner)) kind = 'else';
    tags.push({ start: at, end, kind, name, closed: true });
    i = end;
  }
  return tags;
}

/** Replaces [start, end) with spaces, keeping line breaks so every later location is unchanged. */
function blank(chars: string[], start: number, end: number): void {
  for (let k = start; k < end && k < chars.length; k++) if (chars[k] !== '\n' && chars[k] !== '\r') chars[k] = ' ';
}

function tagText(src: string, t: HbTag): string {
  // Redacted before it is cut: a secret cut short is no longer recognised.
  const s = redactSecrets(src.slice(t.start, t.end).replace(/\s+/g, ' '));
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

interface RepairOptions {
  /** Blocks never closed become plain helper calls instead of getting closers appended. */
  neutralizeUnclosed?: boolean;
}

/** Deepest block nesting a body is parsed with; deeper blocks are read as plain tags. */
export const MAX_BLOCK_DEPTH = 64;

/**
 * Structural repair: unterminated tags, stray or early closers, blocks never closed, blocks
 * nested too deep. Returns a text of the same length (plus appended closers, unless
 * `neutralizeUnclosed`) whose block structure is balanced.
 */
function repairStructure(path: string, body: string, bodyStart: number, findings: Finding[], tags: HbTag[], opts: RepairOptions = {}): string {
  // Split into characters only when something has to change (a large valid body is common here).
  let split: string[] | undefined;
  const chars = (): string[] => (split ??= body.split(''));
  const stack: Array<HbTag & { neutral?: boolean }> = [];
  const at = (t: HbTag): Span => ({ start: bodyStart + t.start, end: bodyStart + t.end });
  let depthReported = false;
  let live = 0;
  const neutralize = (t: HbTag) => {
    const text = body.slice(t.start, t.end);
    const sigil = text.search(/[#^]/);
    if (/^\{\{~?\s*#[>*]/.test(text) || sigil < 0) {
      blank(chars(), t.start, t.end);
      return;
    }
    // `{{#each docs as |d|}}` becomes `{{ each docs        }}`: still a use of `docs`, no longer a block.
    chars()[t.start + sigil] = ' ';
    const bp = /\bas\s*\|[^|]*\|/.exec(text);
    if (bp) blank(chars(), t.start + bp.index, t.start + bp.index + bp[0].length);
  };
  for (const t of tags) {
    if (!t.closed) {
      const what = t.kind === 'comment' ? "comment: no closing '--}}'" : "tag: no closing '}}'";
      findings.push(finding('template-invalid', path, at(t), `Unterminated Handlebars ${what} (${tagText(body, t)}).`));
      blank(chars(), t.start, t.end);
      continue;
    }
    if (t.kind === 'open') {
      if (live >= MAX_BLOCK_DEPTH) {
        // The Handlebars parser slows down sharply with depth; nobody nests prompts this deep.
        if (!depthReported) {
          findings.push(finding('template-invalid', path, at(t), `Blocks are nested more than ${MAX_BLOCK_DEPTH} levels deep; deeper blocks are read as plain tags.`));
          depthReported = true;
        }
        neutralize(t);
        stack.push({ ...t, neutral: true });
      } else {
        stack.push(t);
        live++;
      }
    } else if (t.kind === 'close') {
      let idx = -1;
      for (let k = stack.length - 1; k >= 0; k--) {
        if (stack[k].name === t.name) {
          idx = k;
          break;
        }
      }
      if (idx < 0) {
        findings.push(finding('template-invalid', path, at(t), `'${tagText(body, t)}' closes a block that was never opened.`));
        blank(chars(), t.start, t.end);
        continue;
      }
      for (let k = stack.length - 1; k > idx; k--) {
        const open = stack[k];
        if (open.neutral) continue;
        live--;
        findings.push(
          finding('template-invalid', path, at(open), `'${tagText(body, open)}' is not closed: add '{{/${open.name}}}' before '${tagText(body, t)}'.`),
        );
        neutralize(open);
      }
      if (stack[idx].neutral) blank(chars(), t.start, t.end);
      else live--;
      stack.length = idx;
    }
  }
  let appended = '';
  for (let k = stack.length - 1; k >= 0; k--) {
    const open = stack[k];
    if (open.neutral) continue;
    findings.push(finding('template-invalid', path, at(open), `'${tagText(body, open)}' is never closed: add '{{/${open.name}}}'.`));
    if (opts.neutralizeUnclosed) neutralize(open);
    else appended += `{{/${open.name}}}`;
  }
  return (split ? split.join('') : body) + appended;
}

const TOKEN_WORDS: Record<string, string> = {
  OPEN_ENDBLOCK: "'{{/…}}'",
  OPEN_INVERSE_CHAIN: "'{{else …}}'",
  INVERSE: "'{{else}}'",
  CLOSE: "'}}'",
  CLOSE_UNESCAPED: "'}}}'",
  CLOSE_RAW_BLOCK: "'}}}}'",
  ID: 'a name',
  EOF: 'the end of the text',
  INVALID: 'an invalid character',
  STRING: 'a string',
  NUMBER: 'a number',
  BOOLEAN: 'true/false',
  DATA: "'@name'",
  OPEN_SEXPR: "'('",
  CLOSE_SEXPR: "')'",
  EQUALS: "'='",
  SEP: "'.'",
  OPEN_BLOCK_PARAMS: "'as |'",
  CLOSE_BLOCK_PARAMS: "'|'",
  CONTENT: 'text',
  OPEN_ARRAY: "'['",
  CLOSE_ARRAY: "']'",
  UNDEFINED: 'undefined',
  NULL: 'null',
};

/** Rewrites Jison's "Expecting 'ID', 'STRING', got 'INVALID'" in words a template author reads. */
function parserMessage(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const m = /Expecting (.*), got '([A-Z_]+)'/.exec(msg);
  if (m) {
    const expected = [...new Set(m[1].split(/,\s*/).map((t) => t.replace(/'/g, '')).map((t) => TOKEN_WORDS[t] ?? t.toLowerCase()))];
    const list = expected.length > 4 ? `${expected.slice(0, 4).join(', ')}, …` : expected.join(' or ');
    return `expected ${list} but found ${TOKEN_WORDS[m[2]] ?? m[2].toLowerCase()}`;
  }
  return msg.split('\n')[0].replace(/ - \d+:\d+$/, '');
}

/** Offset (into `src`) the parser blamed. */
function errorOffset(e: unknown, lines: LineIndex): number {
  const err = e as { hash?: { loc?: { first_line: number; first_column: number } }; lineNumber?: number; column?: number };
  if (err?.hash?.loc) return lines.offsetAt({ line: err.hash.loc.first_line - 1, character: err.hash.loc.first_column });
  if (typeof err?.lineNumber === 'number') return lines.offsetAt({ line: err.lineNumber - 1, character: err.column ?? 0 });
  return 0;
}

/** A program holding `text` as one content statement: what is left when parsing is abandoned. */
function textProgram(text: string): AST.Program {
  const end = new LineIndex(text).positionAt(text.length);
  const loc: AST.SourceLocation = { source: '', start: { line: 1, column: 0 }, end: { line: end.line + 1, column: end.character } };
  const content = { type: 'ContentStatement', value: text, original: text, loc } as unknown as AST.ContentStatement;
  return { type: 'Program', body: text ? [content] : [], blockParams: [], loc };
}

/**
 * Parses `src` (a piece of the body starting at body offset `offset`), blanking each tag the parser
 * blames and trying again. Offsets past `limit` (closers appended by the repair) are clamped.
 */
function parseRetrying(path: string, src: string, offset: number, limit: number, bodyStart: number, findings: Finding[]): AST.Program {
  // Every round re-parses the whole piece, so a huge piece gets fewer rounds.
  const rounds = src.length > 100_000 ? 5 : 50;
  for (let round = 0; round < rounds; round++) {
    try {
      return parse(src);
    } catch (e) {
      const pos = errorOffset(e, new LineIndex(src));
      const tags = scanHandlebarsTags(src);
      let tag = tags.find((t) => t.start <= pos && pos < t.end);
      if (!tag) tag = [...tags].reverse().find((t) => t.start <= pos && src.slice(t.start, t.end).trim() !== '');
      const clamp = (n: number) => bodyStart + Math.min(offset + n, limit);
      const span: Span = tag ? { start: clamp(tag.start), end: clamp(tag.end) } : { start: clamp(pos), end: clamp(pos + 1) };
      findings.push(finding('template-invalid', path, span, `Handlebars syntax error${tag ? ` in '${tagText(src, tag)}'` : ''}: ${parserMessage(e)}.`));
      if (!tag) break;
      const chars = src.split('');
      blank(chars, tag.start, tag.end);
      // A block opener the parser cannot read takes its own `{{else}}` and closer with it (they
      // are blanked silently): one cause, one finding, at the opener.
      if (tag.kind === 'open') for (const t of blockTail(tags, tag)) blank(chars, t.start, t.end);
      src = chars.join('');
    }
  }
  // Give up on structure: the piece is one text, so counting and previews still work.
  return textProgram(src.slice(0, Math.max(0, limit - offset)));
}

/** The `{{else}}` tags and the closer of the block `open` opens (by nesting), or none when it is never closed. */
function blockTail(tags: readonly HbTag[], open: HbTag): HbTag[] {
  const out: HbTag[] = [];
  let depth = 0;
  for (let k = tags.indexOf(open) + 1; k < tags.length; k++) {
    const t = tags[k];
    if (t.kind === 'open') depth++;
    else if (t.kind === 'else' && depth === 0) out.push(t);
    else if (t.kind === 'close') {
      if (depth > 0) depth--;
      else return t.name === open.name ? [...out, t] : [];
    }
  }
  return [];
}

/** Tags per parsed piece: the Handlebars parser is quadratic in the statements of one program. */
const CHUNK_TAGS = 300;

/**
 * Where a balanced body can be cut into independently parsed pieces, once a piece holds
 * CHUNK_TAGS tags, in text at block depth 0: right after a line break (which keeps Handlebars'
 * standalone-line rules intact on both sides), or else between two non-space characters (so no
 * tag next to the cut can look like it stands alone on its line).
 */
function chunkCuts(src: string, tags: HbTag[]): number[] {
  const cuts: number[] = [];
  let depth = 0;
  let count = 0;
  for (let k = 0; k < tags.length; k++) {
    const t = tags[k];
    if (t.kind === 'open') depth++;
    else if (t.kind === 'close') depth = Math.max(0, depth - 1);
    count++;
    if (depth !== 0 || count < CHUNK_TAGS) continue;
    const gapEnd = k + 1 < tags.length ? tags[k + 1].start : src.length;
    const gap = src.slice(t.end, gapEnd);
    let cut = -1;
    const nl = gap.search(/\r\n|\r|\n/);
    if (nl >= 0) cut = t.end + nl + (gap.startsWith('\r\n', nl) ? 2 : 1);
    else {
      const mid = /\S(?=\S)/.exec(gap);
      if (mid) cut = t.end + mid.index + 1;
    }
    if (cut > 0 && cut < src.length) {
      cuts.push(cut);
      count = 0;
    }
  }
  return cuts;
}

const CHILD_KEYS = ['path', 'params', 'hash', 'pairs', 'value', 'program', 'inverse', 'body', 'name'] as const;

/** Moves every location of a parsed piece to where the piece starts (line and, on its first line, column). */
function shiftLocations(node: unknown, lines: number, column: number, seen: Set<object>): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) shiftLocations(x, lines, column, seen);
    return;
  }
  const n = node as Record<string, unknown> & { loc?: AST.SourceLocation };
  if (n.loc && !seen.has(n.loc)) {
    seen.add(n.loc);
    const move = (p: AST.Position): AST.Position => ({ line: p.line + lines, column: p.line === 1 ? p.column + column : p.column });
    n.loc.start = move(n.loc.start);
    n.loc.end = move(n.loc.end);
  }
  for (const k of CHILD_KEYS) if (n[k] && typeof n[k] === 'object') shiftLocations(n[k], lines, column, seen);
}

function maxDepth(tags: HbTag[]): number {
  let depth = 0;
  let max = 0;
  for (const t of tags) {
    if (t.kind === 'open') max = Math.max(max, ++depth);
    else if (t.kind === 'close') depth = Math.max(0, depth - 1);
  }
  return max;
}

/**
 * Parses `body`, repairing as needed. Returns the program and the source its locations refer to.
 * (Node lists are appended one by one here and below: spread into push(), a body of 150,000 tags
 * overflowed the call stack.)
 */
function parseTolerant(path: string, body: string, bodyStart: number, findings: Finding[]): { program: AST.Program; source: string } {
  const tags = scanHandlebarsTags(body);
  if (tags.length <= CHUNK_TAGS && maxDepth(tags) <= MAX_BLOCK_DEPTH) {
    try {
      // The one parse of this body: the renderer compiles the same tree (engine.ts bodyTree).
      return { program: bodyTree(body) as AST.Program, source: body };
    } catch {
      // fall through to repair
    }
    const src = repairStructure(path, body, bodyStart, findings, tags);
    return { program: parseRetrying(path, src, 0, body.length, bodyStart, findings), source: src };
  }
  // A large body: balance its structure first, then parse it in pieces and join them.
  const src = repairStructure(path, body, bodyStart, findings, tags, { neutralizeUnclosed: true });
  const cuts = [...chunkCuts(src, scanHandlebarsTags(src)), src.length];
  const lines = new LineIndex(src);
  const program: AST.Program = { ...textProgram(''), body: [] };
  let from = 0;
  for (const to of cuts) {
    const piece = parseRetrying(path, src.slice(from, to), from, body.length, bodyStart, findings);
    const pos = lines.positionAt(from);
    shiftLocations(piece.body, pos.line, pos.character, new Set());
    for (const n of piece.body) program.body.push(n);
    from = to;
  }
  return { program, source: src };
}

// ---------------------------------------------------------------------------
// AST -> messages, nodes, uses
// ---------------------------------------------------------------------------

interface Scope {
  /** `each` / `with` / sections change the context: bare names resolve against the item. */
  contextChange: boolean;
  alias?: string;
  names: Set<string>;
}

type AnyStatement = AST.Statement & Record<string, unknown>;

const NO_NODE_HELPERS = new Set(['media', 'section', 'log', 'role']);

/**
 * A statement whose path is a literal (`{{"name"}}`, `{{1}}`, `{{#"flag"}}`) as Handlebars' compiler
 * reads it (its transformLiteralToPath): a lookup of the literal's text. A copy: the tree is shared
 * with the renderer and never changed.
 */
function literalAsPath<S extends { path: AST.PathExpression | AST.Literal | AST.SubExpression }>(s: S): S {
  const path = s.path as { type: string; parts?: unknown; original?: unknown; loc: AST.SourceLocation };
  if (path.type === 'PathExpression' || path.type === 'SubExpression' || path.parts) return s;
  const name = String(path.original);
  return { ...s, path: { type: 'PathExpression', data: false, depth: 0, parts: [name], original: name, loc: path.loc } as unknown as AST.PathExpression };
}

class Walker {
  readonly uses: RawUse[] = [];
  private readonly lines: LineIndex;
  private readonly bodyEnd: number;

  constructor(
    private readonly path: string,
    private readonly text: string,
    private readonly bodyStart: number,
    private readonly source: string,
    private readonly findings: Finding[],
    private readonly restore: (s: string) => string = (s) => s,
  ) {
    this.lines = new LineIndex(source);
    this.bodyEnd = text.length;
  }

  private off(p: AST.Position): number {
    const o = this.lines.offsetAt({ line: p.line - 1, character: p.column });
    return Math.min(this.bodyStart + o, this.bodyEnd);
  }

  private span(loc: AST.SourceLocation | undefined): Span {
    if (!loc) return { start: this.bodyStart, end: this.bodyStart };
    return { start: this.off(loc.start), end: this.off(loc.end) };
  }

  /** Span of a block's opening tag: from `{{#` to the `}}` after its last parameter. */
  private headSpan(s: AST.BlockStatement): Span {
    const start = this.span(s.loc).start;
    let last = this.off(s.path.loc.end);
    for (const p of s.params) last = Math.max(last, this.off(p.loc.end));
    if (s.hash?.loc) last = Math.max(last, this.off(s.hash.loc.end));
    const close = this.source.indexOf('}}', last - this.bodyStart);
    if (close < 0) return this.span(s.loc);
    return { start, end: Math.min(this.bodyStart + close + 2, this.bodyEnd) };
  }

  private invalid(span: Span, message: string): void {
    this.findings.push(finding('template-invalid', this.path, span, message));
  }

  /** What a path refers to: a top-level slot, a loop alias, the loop item, or loop data. */
  private resolve(pe: AST.PathExpression, scopes: readonly Scope[]): { path: string[]; slot?: string } {
    const parts = pe.parts.map((p) => (typeof p === 'string' ? p : '(…)'));
    if (pe.data) {
      if (parts[0] === 'root') return parts.length > 1 ? { path: parts.slice(1), slot: parts[1] } : { path: [] };
      return { path: [`@${parts[0]}`, ...parts.slice(1)] };
    }
    const contexts = scopes.filter((s) => s.contextChange);
    const isThis = (pe as unknown as { this?: boolean }).this === true || parts.length === 0;
    if (pe.depth > 0) {
      if (pe.depth >= contexts.length) return parts.length ? { path: parts, slot: parts[0] } : { path: [] };
      const target = contexts[contexts.length - 1 - pe.depth];
      if (target.alias) return { path: [target.alias, ...parts] };
      return { path: [...Array<string>(pe.depth).fill('..'), ...parts] };
    }
    if (isThis) {
      if (contexts.length > 0) return { path: ['this', ...parts] };
      return parts.length ? { path: parts, slot: parts[0] } : { path: [] };
    }
    for (let k = scopes.length - 1; k >= 0; k--) if (scopes[k].names.has(parts[0])) return { path: parts };
    // Inside a context-changing block Handlebars looks bare names up on the item, not the root.
    if (contexts.length > 0) return { path: ['this', ...parts] };
    return { path: parts, slot: parts[0] };
  }

  private exprUses(expr: AST.Expression | undefined, scopes: readonly Scope[], form: RawUse['form']): void {
    if (!expr) return;
    if (expr.type === 'PathExpression') {
      const r = this.resolve(expr as AST.PathExpression, scopes);
      if (r.slot) this.uses.push({ slot: r.slot, span: this.span(expr.loc), form });
    } else if (expr.type === 'SubExpression') {
      const sub = expr as AST.SubExpression;
      for (const p of sub.params) this.exprUses(p, scopes, form);
      for (const pair of sub.hash?.pairs ?? []) this.exprUses(pair.value, scopes, form);
    }
  }

  private argUses(s: { params: AST.Expression[]; hash?: AST.Hash }, scopes: readonly Scope[], form: RawUse['form'], skipFirst = false): void {
    s.params.forEach((p, i) => {
      if (!(skipFirst && i === 0)) this.exprUses(p, scopes, form);
    });
    for (const pair of s.hash?.pairs ?? []) this.exprUses(pair.value, scopes, form);
  }

  nodes(program: AST.Program | undefined, scopes: readonly Scope[]): TemplateNode[] {
    const out: TemplateNode[] = [];
    for (const s of program?.body ?? []) this.statement(s as AnyStatement, scopes, out);
    return out;
  }

  statement(s: AnyStatement, scopes: readonly Scope[], out: TemplateNode[]): void {
    switch (s.type) {
      case 'ContentStatement': {
        const c = s as unknown as AST.ContentStatement;
        if (c.value !== '') out.push({ type: 'text', text: this.restore(c.value), span: this.span(c.loc) });
        return;
      }
      case 'MustacheStatement':
        this.mustache(s as unknown as AST.MustacheStatement, scopes, out);
        return;
      case 'BlockStatement':
        this.block(s as unknown as AST.BlockStatement, scopes, out);
        return;
      case 'PartialStatement':
      case 'PartialBlockStatement': {
        const p = s as unknown as AST.PartialBlockStatement;
        this.argUses(p, scopes, 'var');
        if (p.program) for (const n of this.nodes(p.program, scopes)) out.push(n);
        return;
      }
      default:
        // Comments and decorators render nothing.
        return;
    }
  }

  isHistory(s: AnyStatement): boolean {
    if (s.type !== 'MustacheStatement') return false;
    const m = s as unknown as AST.MustacheStatement;
    return m.path.type === 'PathExpression' && (m.path as AST.PathExpression).original === 'history' && m.params.length === 0 && !m.hash?.pairs?.length;
  }

  private mustache(literal: AST.MustacheStatement, scopes: readonly Scope[], out: TemplateNode[]): void {
    const s = literalAsPath(literal);
    const span = this.span(s.loc);
    if (s.path.type !== 'PathExpression') {
      this.argUses(s, scopes, 'var');
      return;
    }
    const pe = s.path as AST.PathExpression;
    const hasArgs = s.params.length > 0 || (s.hash?.pairs?.length ?? 0) > 0;
    if (!hasArgs) {
      if (this.isHistory(s as unknown as AnyStatement)) {
        out.push({ type: 'history', slot: 'history', span });
        this.uses.push({ slot: 'history', span, form: 'history' });
        return;
      }
      const r = this.resolve(pe, scopes);
      out.push({ type: 'var', path: r.path, span, raw: !s.escaped });
      if (r.slot) this.uses.push({ slot: r.slot, span: this.span(pe.loc), form: 'var' });
      return;
    }
    // A helper call: its path arguments are what the template reads.
    this.argUses(s, scopes, 'var');
    if (NO_NODE_HELPERS.has(pe.original)) return;
    const first = s.params.find((p) => p.type === 'PathExpression') as AST.PathExpression | undefined;
    if (first) out.push({ type: 'var', path: this.resolve(first, scopes).path, span, raw: pe.original === 'json' ? true : !s.escaped });
  }

  private block(literal: AST.BlockStatement, scopes: readonly Scope[], out: TemplateNode[]): void {
    const s = literalAsPath(literal);
    const name = s.path.original;
    const span = this.span(s.loc);
    const headSpan = this.headSpan(s);
    const first = s.params[0];
    const blockParams = s.program?.blockParams ?? [];
    const inner = (): Scope[] => [...scopes, { contextChange: true, alias: blockParams[0], names: new Set(blockParams) }];
    const inverse = s.inverse ? this.nodes(s.inverse, scopes) : undefined;
    switch (name) {
      case 'each':
      case 'with': {
        if (!first) this.invalid(headSpan, `'{{#${name}}}' needs a value: write '{{#${name} items}}'.`);
        const r = first?.type === 'PathExpression' ? this.resolve(first as AST.PathExpression, scopes) : { path: [] as string[] };
        if (first && first.type !== 'PathExpression') this.exprUses(first, scopes, 'each');
        const node: EachNode = { type: 'each', path: r.path, body: this.nodes(s.program, inner()), span, headSpan };
        if (blockParams[0]) node.alias = blockParams[0];
        if (inverse) node.inverse = inverse;
        out.push(node);
        if (r.slot && first) this.uses.push({ slot: r.slot, span: this.span(first.loc), form: 'each', each: node });
        this.argUses(s, scopes, 'var', true);
        return;
      }
      case 'if':
      case 'unless':
      case 'ifEquals':
      case 'unlessEquals': {
        if (!first) this.invalid(headSpan, `'{{#${name}}}' needs a condition: write '{{#${name} value}}'.`);
        const p = s.params.find((x) => x.type === 'PathExpression') as AST.PathExpression | undefined;
        this.argUses(s, scopes, 'if');
        out.push({
          type: 'if',
          path: p ? this.resolve(p, scopes).path : [],
          negate: name.startsWith('unless'),
          body: this.nodes(s.program, scopes),
          ...(inverse ? { inverse } : {}),
          span,
          headSpan,
        });
        return;
      }
      case 'role':
        // A role block nested in another block cannot start a message; its content stays inline.
        for (const n of this.nodes(s.program, scopes)) out.push(n);
        return;
      default:
        break;
    }
    const hasArgs = s.params.length > 0 || (s.hash?.pairs?.length ?? 0) > 0;
    if (!hasArgs) {
      // A Mustache-style section: `{{#items}}...{{/items}}` loops (or tests), `{{^items}}` negates.
      const r = this.resolve(s.path, scopes);
      const inverted = /^\{\{~?\s*\^/.test(this.text.slice(headSpan.start, headSpan.end));
      if (inverted) {
        out.push({ type: 'if', path: r.path, negate: true, body: inverse ?? [], span, headSpan });
        if (r.slot) this.uses.push({ slot: r.slot, span: this.span(s.path.loc), form: 'if' });
        return;
      }
      const node: EachNode = { type: 'each', path: r.path, body: this.nodes(s.program, inner()), span, headSpan };
      if (blockParams[0]) node.alias = blockParams[0];
      if (inverse) node.inverse = inverse;
      out.push(node);
      if (r.slot) this.uses.push({ slot: r.slot, span: this.span(s.path.loc), form: 'each', each: node });
      return;
    }
    // Any other block helper: treat it as a condition on its first path argument.
    this.argUses(s, scopes, 'if');
    const p = s.params.find((x) => x.type === 'PathExpression') as AST.PathExpression | undefined;
    const body = this.nodes(s.program, scopes);
    if (p) out.push({ type: 'if', path: this.resolve(p, scopes).path, negate: false, body, ...(inverse ? { inverse } : {}), span, headSpan });
    else for (const n of body) out.push(n);
  }

  roleOf(s: AnyStatement): { role: Role; span: Span } | undefined {
    const m = s as unknown as AST.MustacheStatement;
    if (m.path?.type !== 'PathExpression' || (m.path as AST.PathExpression).original !== 'role') return undefined;
    const arg = m.params[0] as (AST.Expression & { value?: unknown }) | undefined;
    const argSpan = arg ? this.span(arg.loc) : this.span(m.loc);
    if (!arg || arg.type !== 'StringLiteral') {
      this.invalid(argSpan, `'role' expects a quoted role name such as "system" or "user".`);
      return { role: 'user', span: this.span(m.loc) };
    }
    const role = normalizeRole(String(arg.value));
    if (!role) {
      this.invalid(argSpan, `Unknown role "${String(arg.value)}": use system, user, model (assistant) or tool.`);
      return { role: 'user', span: this.span(m.loc) };
    }
    return { role, span: this.span(m.loc) };
  }

  /** Splits the top level into messages at `{{role}}` markers, `{{#role}}` blocks and `{{history}}`. */
  messages(program: AST.Program): TemplateMessage[] {
    const out: TemplateMessage[] = [];
    const empty = (at: number): Span => ({ start: at, end: at });
    let cur = { role: 'user' as Role, markerSpan: empty(this.bodyStart), start: this.bodyStart, nodes: [] as TemplateNode[], explicit: false };
    const flush = (end: number) => {
      if (cur.explicit || !blankNodes(cur.nodes)) {
        out.push({ role: cur.role, markerSpan: cur.markerSpan, span: { start: cur.start, end }, nodes: cur.nodes });
      }
    };
    for (const st of program.body) {
      const s = st as AnyStatement;
      if (s.type === 'MustacheStatement' && (s as unknown as AST.MustacheStatement).path.type === 'PathExpression') {
        const role = this.roleOf(s);
        if (role) {
          flush(role.span.start);
          cur = { role: role.role, markerSpan: role.span, start: role.span.start, nodes: [], explicit: true };
          continue;
        }
        if (this.isHistory(s)) {
          const span = this.span(s.loc);
          this.statement(s, [], cur.nodes);
          cur.explicit = true;
          flush(span.end);
          // dotprompt continues after the history as the model's turn.
          cur = { role: 'assistant', markerSpan: empty(span.end), start: span.end, nodes: [], explicit: false };
          continue;
        }
      }
      if (s.type === 'BlockStatement' && (s as unknown as AST.BlockStatement).path.original === 'role') {
        const b = s as unknown as AST.BlockStatement;
        const span = this.span(b.loc);
        const head = this.headSpan(b);
        const before = cur.role;
        const role = this.roleOf({ ...b, type: 'MustacheStatement' } as unknown as AnyStatement)?.role ?? 'user';
        flush(span.start);
        out.push({ role, markerSpan: head, span, nodes: this.nodes(b.program, []) });
        cur = { role: before, markerSpan: empty(span.end), start: span.end, nodes: [], explicit: false };
        continue;
      }
      this.statement(s, [], cur.nodes);
    }
    flush(this.bodyEnd);
    return out;
  }
}

/**
 * The Handlebars lexer computes columns with `.`, which stops at U+2028/U+2029, so a text token
 * ending on a line that holds one gets wrong columns. Those two characters are swapped for
 * same-length noncharacters before parsing and swapped back in text nodes.
 */
function shieldSeparators(body: string): { feed: string; restore: (s: string) => string } {
  if (!/[\u2028\u2029]/.test(body)) return { feed: body, restore: (s) => s };
  const free: string[] = [];
  for (let cp = 0xfdd0; cp <= 0xfdef && free.length < 2; cp++) if (!body.includes(String.fromCharCode(cp))) free.push(String.fromCharCode(cp));
  if (free.length < 2) return { feed: body, restore: (s) => s };
  const [ls, ps] = free;
  const feed = body.replace(/\u2028/g, ls).replace(/\u2029/g, ps);
  return { feed, restore: (s) => s.split(ls).join('\u2028').split(ps).join('\u2029') };
}

/**
 * The body as dotprompt renders it (its parseDocument's `body.trim()`), and where it starts in the
 * text: what every reader of the body's one tree parses (bodyTree caches it by this text).
 */
export function renderedBody(text: string, bodyStart: number): { body: string; start: number } {
  const raw = text.slice(bodyStart);
  return { body: raw.trim(), start: bodyStart + (raw.length - raw.trimStart().length) };
}

export function parseDotpromptBody(path: string, text: string, bodyStart: number): BodyResult {
  const findings: Finding[] = [];
  // The scanner reads the text dotprompt renders, so one parse of it serves the slot uses here and the compiled renderer.
  const { body, start } = renderedBody(text, bodyStart);
  const shield = shieldSeparators(body);
  const { program, source } = parseTolerant(path, shield.feed, start, findings);
  const walker = new Walker(path, text, start, source, findings, shield.restore);
  const messages = walker.messages(program);
  for (const f of roleBlockFindings(path, text, bodyStart)) findings.push(f);
  return { messages, uses: walker.uses, findings };
}

/**
 * dotprompt's `role` helper is not a block helper: `{{#role "user"}}…{{/role}}` renders the role
 * marker and drops everything up to `{{/role}}` (Handlebars never calls the block's body). Said at
 * the tag, with the fix that writes the marker form.
 */
function roleBlockFindings(path: string, text: string, bodyStart: number): Finding[] {
  const out: Finding[] = [];
  const open = /\{\{(~?)#role(\s+("[^"\n]{0,40}"|'[^'\n]{0,40}'))\s*(~?)\}\}/g;
  open.lastIndex = bodyStart;
  for (let m = open.exec(text); m; m = open.exec(text)) {
    const span = { start: m.index, end: m.index + m[0].length };
    const close = /\{\{~?\/role\s*~?\}\}/g;
    close.lastIndex = span.end;
    const c = close.exec(text);
    const edits = [{ path, span, newText: `{{${m[1]}role${m[2]}${m[4]}}}` }];
    if (c) edits.push({ path, span: { start: c.index, end: c.index + c[0].length }, newText: '' });
    out.push(
      finding('unsupported-feature', path, span, `dotprompt renders {{#role …}} as its role marker and drops the block's body up to {{/role}} (the role helper is not a block helper), so nothing inside it is sent. Write {{role ${m[3]}}} before the text instead.`, {
        fixes: [{ title: `Write {{role ${m[3]}}} instead of a role block`, edits, preferred: true }],
      }),
    );
  }
  return out;
}
