/**
 * A Jinja `.prompty` body as the editor sees it, from the engine's own tree (jinja/parser.ts
 * parseJinja, the parse the renderer compiles): the messages (role lines as the runtime line reads
 * them), their node trees, the slot uses (jinja2's find_undeclared, jinja/meta.ts) and located
 * findings for what jinja2 refuses. A broken body still gets its tree from the recovering parse:
 * an unterminated tag reads as text, an unclosed block closes at the end, a stray closer is
 * skipped, each reported at its exact span.
 */
import { finding } from '../../rules/registry';
import type { Finding, Span, TemplateNode } from '../../types';
import { compileTemplate } from '../jinja/interpreter';
import { normalizeTemplate } from '../jinja/lexer';
import { undeclaredOf, undeclaredVariables, variableUses } from '../jinja/meta';
import { parseJinja, type Expr, type IfStmt, type JinjaParse, type ParseIssue, type Stmt } from '../jinja/parser';
import { exprChildren } from '../jinja/symbols';
import { LimitError, Unsupported } from '../jinja/values';
import { jinjaSourceOffsets } from '../shared';
import type { BodyResult, EachNode, RawUse } from '../shared';
import { DEPTH_MESSAGE, MAX_BLOCK_DEPTH, isHistoryLoop, quoteTag, roleLinePattern, splitRoles, toMessages, type Item } from './body';
import { PROMPTY_MAIN, type PromptyLine } from './engine';

type IfNode = Extract<TemplateNode, { type: 'if' }>;
type ForStmt = Extract<Stmt, { k: 'For' }>;


/** A reference in an expression: a name with the attribute / constant-key chain read from it. */
interface Ref {
  path: string[];
  span: Span;
}

/** The chain `a.b["c"]` as a path, or undefined when the expression is no such chain. */
function chainOf(e: Expr): Ref | undefined {
  const path: string[] = [];
  let cur: Expr = e;
  for (;;) {
    if (cur.k === 'Getattr') path.unshift(cur.attr);
    else if (cur.k === 'Getitem' && cur.arg.k === 'Const' && typeof cur.arg.value === 'string') path.unshift(cur.arg.value);
    else break;
    cur = cur.node;
  }
  if (cur.k !== 'Name' || cur.ctx !== 'load') return undefined;
  return { path: [cur.name, ...path], span: { start: cur.span.start, end: e.span.end } };
}

/** The first variable an expression reads, in source order (a called name and a method name are not read as values). */
function firstRef(e: Expr): Ref | undefined {
  let best: Ref | undefined;
  const visit = (x: Expr): void => {
    const chain = chainOf(x);
    if (chain) {
      if (!best || chain.span.start < best.span.start) best = chain;
      return;
    }
    if (x.k === 'Call') {
      if (x.node.k === 'Getattr') visit(x.node.node);
      else if (x.node.k !== 'Name') visit(x.node);
      for (const a of [...x.args, ...x.kwargs.map((k) => k.value), ...(x.dynArgs ? [x.dynArgs] : []), ...(x.dynKwargs ? [x.dynKwargs] : [])]) visit(a);
      return;
    }
    for (const c of exprChildren(x)) visit(c);
  };
  visit(e);
  return best;
}

/** The alias a loop target gives its item (`d` in `for d in docs`, `v` in `for k, v in m.items()`). */
function aliasOf(target: Expr): string | undefined {
  if (target.k === 'Name') return target.name;
  if (target.k === 'Tuple') {
    const names = target.items.filter((x): x is Extract<Expr, { k: 'Name' }> => x.k === 'Name').map((x) => x.name);
    return names[names.length === 2 ? 1 : 0];
  }
  return undefined;
}

type Piece = Stmt | Expr | { k: 'Data'; span: Span; data: string };

/** What renders after a point of the tree: the rest of each enclosing list, innermost first. */
type Rest = ReadonlyArray<{ list: readonly Piece[]; from: number }>;

/** Pieces that render nothing, skipped when looking for what renders next (bounded, so a long run costs little). */
const SILENT = new Set(['Assign', 'AssignBlock', 'Macro', 'Import', 'FromImport']);
const MAX_SKIPPED = 64;

/**
 * Whether what renders first from `rest` starts a new line (a role line before it then stands
 * alone), as far as the tree tells: text, the first text of a loop's body, the first text of every
 * branch of an `if` that has content (followed by what comes after the block); a printed value is
 * unknown (no). `atEnd` is the answer at the end of the template.
 */
function breaksFirst(rest: Rest, atEnd: boolean, depth = 0): boolean {
  if (depth > 32) return false;
  let skipped = 0;
  for (let r = 0; r < rest.length; r++) {
    const { list, from } = rest[r];
    for (let i = from; i < list.length; i++) {
      const p = list[i];
      const after = (): Rest => [{ list, from: i + 1 }, ...rest.slice(r + 1)];
      if (p.k === 'Data') {
        if (p.data !== '') return p.data.startsWith('\n');
      } else if (p.k === 'Output') return breaksFirst([{ list: p.nodes, from: 0 }, ...after()], atEnd, depth + 1);
      else if (p.k === 'For') return breaksFirst([{ list: p.body, from: 0 }, ...after()], atEnd, depth + 1);
      else if (p.k === 'If') {
        // The branches that render something decide (an `if` without `else` is written for when it holds).
        const branches = [p.body, ...p.elif_.map((e) => e.body), p.else_].filter((b) => b.length > 0);
        if (branches.length) return branches.every((b) => breaksFirst([{ list: b, from: 0 }, ...after()], atEnd, depth + 1));
      } else if (!SILENT.has(p.k)) return false;
      if (++skipped > MAX_SKIPPED) return false;
    }
  }
  return atEnd;
}

/** Problems quoted in full in their findings; index.ts lists no more than MAX_TEMPLATE_FINDINGS. */
const MAX_QUOTED = 200;

class Builder {
  readonly findings: Finding[] = [];
  /** Loops built from a `for`, to hand their uses the node they iterate. */
  readonly loops: Array<{ node: EachNode; head: Span }> = [];
  private depth = 0;
  private depthReported = false;

  constructor(
    private readonly path: string,
    private readonly text: string,
    private readonly bodyStart: number,
    private readonly parsed: JinjaParse,
    private readonly at: (offset: number) => number,
    private readonly roleLine: RegExp,
    /** Whether the end of the template ends a role line: Prompty v2 reads lines, 0.1.x needs a newline after the colon. */
    private readonly endBreaks: boolean,
  ) {}

  span(s: Span): Span {
    const start = this.at(s.start);
    return { start, end: Math.max(start, this.at(s.end)) };
  }

  invalid(span: Span, message: string): void {
    this.findings.push(finding('template-invalid', this.path, span, message));
  }

  /** The nodes of a statement list; `top` splits its text at role lines. */
  list(stmts: readonly Stmt[], top: boolean, out: Item[] = []): Item[] {
    stmts.forEach((s, i) => this.stmt(s, top, out, { list: stmts, from: i + 1 }));
    return out;
  }

  private stmt(s: Stmt, top: boolean, out: Item[], after: Rest[number]): void {
    switch (s.k) {
      case 'Output':
        s.nodes.forEach((n, j) => {
          if (n.k === 'Data') {
            const sp = this.span(n.span);
            const tail = top && sp.end > sp.start && !/[\r\n]$/.test(n.data) ? breaksFirst([{ list: s.nodes, from: j + 1 }, after], this.endBreaks) : false;
            if (top) out.push(...splitRoles(this.text, this.bodyStart, sp.start, sp.end, this.roleLine, (a, b) => this.text.slice(a, b), tail));
            else if (sp.end > sp.start) out.push({ type: 'text', text: this.text.slice(sp.start, sp.end), span: sp });
          } else this.print(n, out);
        });
        return;
      case 'For':
        this.loop(s, out);
        return;
      case 'If':
        this.branch(s, s, out);
        return;
      // What renders inside these blocks lands where they stand.
      case 'FilterBlock':
      case 'With':
      case 'Block':
      case 'Autoescape':
        this.list(s.body, false, out);
        return;
      // Macros, call blocks and block sets render nothing here; sets, imports, includes show nothing we model.
      default:
        return;
    }
  }

  private print(e: Expr, out: Item[]): void {
    const tag = this.parsed.tagSpans.get(e) ?? e.span;
    const span = this.span(tag);
    if (e.k === 'Const' && typeof e.value === 'string') {
      // `{{ '{{' }}` is how Jinja writes literal braces: it renders as its text.
      out.push({ type: 'text', text: e.value, span });
      return;
    }
    const ref = firstRef(e);
    if (ref) out.push({ type: 'var', path: ref.path, span, raw: false });
  }

  /** The end of a block in the source: its closer's end, or where the parse stopped reading it. */
  private blockEnd(s: Stmt, nodes: readonly TemplateNode[], head: Span): number {
    const close = this.parsed.closeSpans.get(s);
    if (!close) return this.text.length;
    // A block closed at the end of the template ends with the text (a dropped trailing newline included).
    if (close.end === close.start && close.start >= this.parsed.end) return this.text.length;
    const last = nodes[nodes.length - 1];
    return Math.max(head.end, last ? last.span.end : head.end, this.at(close.end));
  }

  /** True (and reported once) when a block would nest deeper than MAX_BLOCK_DEPTH. */
  private tooDeep(head: Span): boolean {
    if (this.depth < MAX_BLOCK_DEPTH) return false;
    if (!this.depthReported) {
      this.invalid(head, DEPTH_MESSAGE);
      this.depthReported = true;
    }
    return true;
  }

  private nested(stmts: readonly Stmt[]): TemplateNode[] {
    this.depth++;
    try {
      return this.list(stmts, false) as TemplateNode[];
    } finally {
      this.depth--;
    }
  }

  private loop(s: ForStmt, out: Item[]): void {
    const head = this.span(s.span);
    if (this.tooDeep(head)) {
      this.list(s.body, false, out);
      this.list(s.else_, false, out);
      return;
    }
    const ref = firstRef(s.iter);
    const node: EachNode = { type: 'each', path: ref?.path ?? [], body: [], span: { ...head }, headSpan: head };
    const alias = aliasOf(s.target);
    if (alias !== undefined) node.alias = alias;
    node.body = this.nested(s.body);
    if (s.else_.length) node.inverse = this.nested(s.else_);
    node.span = { start: head.start, end: this.blockEnd(s, [...node.body, ...(node.inverse ?? [])], head) };
    out.push(node);
    this.loops.push({ node, head });
  }

  private branch(s: IfStmt, root: IfStmt, out: Item[]): void {
    const head = this.span(s === root ? s.span : (this.parsed.elifHeads.get(s) ?? s.span));
    if (this.tooDeep(head)) {
      this.list(s.body, false, out);
      for (const e of s.elif_) this.list(e.body, false, out);
      this.list(s.else_, false, out);
      return;
    }
    const ref = firstRef(s.test);
    const negate = s.test.k === 'Unary' ? s.test.op === 'not' : /^not\b/.test(this.text.slice(this.at(s.test.span.start), this.at(s.test.span.start) + 4));
    const node: IfNode = { type: 'if', path: ref?.path ?? [], negate, body: this.nested(s.body), span: { ...head }, headSpan: head };
    // An elif chain nests each link in the previous one's inverse, as the renderer reads it.
    const [elif, ...rest] = s.elif_;
    if (elif) {
      const link: IfStmt = { ...elif, elif_: rest, else_: s.else_ };
      const inverse: Item[] = [];
      this.depth++;
      try {
        this.branch(link, root, inverse);
      } finally {
        this.depth--;
      }
      node.inverse = inverse as TemplateNode[];
    } else if (s.else_.length) node.inverse = this.nested(s.else_);
    node.span = { start: head.start, end: this.blockEnd(root, [...node.body, ...(node.inverse ?? [])], head) };
    out.push(node);
  }

  /** The recovering parse's problems as findings, worded for the editor. */
  report(): void {
    const quote = (s: Span) => quoteTag(this.text, s);
    // A text of stray braces has thousands of problems; only the first are shown (index.ts caps the list), so only they are quoted.
    let quoted = 0;
    for (const i of this.parsed.lexIssues) {
      const span = this.span(i.span);
      const ours = /^(Unterminated|')/.test(i.message);
      if (!ours) {
        const error = i.error();
        if (error instanceof Unsupported || error instanceof LimitError) continue; // the renderer reports what it cannot reproduce
        this.invalid(span, `Jinja2 cannot read this tag: ${i.message.replace(/ at \d+$/, '')}.`);
      } else if (quoted++ < MAX_QUOTED) {
        this.invalid(span, i.message.replace(/'([^']*)'/, (_m, s: string) => `'${quote({ start: span.start, end: Math.min(span.end, span.start + s.length) })}'`));
      } else this.invalid(span, i.message.replace(/'[^']*'/, 'here'));
    }
    for (const i of this.parsed.issues) this.issue(i, quote);
  }

  private issue(i: ParseIssue, quote: (s: Span) => string): void {
    const span = this.span(i.span);
    switch (i.kind) {
      case 'unclosed':
        this.invalid(span, `'${quote(span)}' is never closed: add '${i.closer}'.`);
        return;
      case 'cut':
        this.invalid(span, `'${quote(span)}' is not closed: add '${i.closer}' before '${quote(this.span(i.at ?? i.span))}'.`);
        return;
      case 'stray':
        this.invalid(span, `'${quote(span)}' closes a block that was never opened.`);
        return;
      case 'outside-block':
        this.invalid(span, `'{% else %}' is outside of an '{% if %}' or '{% for %}' block.`);
        return;
      case 'outside-if':
        this.invalid(span, `'${quote(span)}' is outside of an '{% if %}' block.`);
        return;
      case 'for-head':
        this.invalid(span, `'${quote(span)}' should read '{% for item in items %}'.`);
        return;
      case 'limit':
        this.invalid(span, 'This tag nests too deeply to be read.');
        return;
      default:
        this.invalid(span, `Jinja2 refuses this tag: ${i.error.message.replace(/\.$/, '')}.`);
    }
  }
}

/** Undeclared variables of the body: the compiled unit's (shared with the renderer) when jinja2 compiles it. */
function namesOf(source: string, keep: boolean, parsed: JinjaParse): Set<string> {
  if (!parsed.error) {
    try {
      return undeclaredVariables(compileTemplate(PROMPTY_MAIN, source, keep));
    } catch {
      // a compile-time error (an unknown filter, nesting): the tree is still read as it is
    }
  }
  return undeclaredOf(parsed.body);
}

/**
 * The Jinja body of a `.prompty` file: `text` is the whole file, the body starts at `bodyStart`.
 * Prompty v2 renders with keep_trailing_newline, 0.1.x without: the body is parsed as the line's
 * renderer reads it, so the tree is the one it renders.
 */
export function parseJinjaBody(path: string, text: string, bodyStart: number, line: PromptyLine): BodyResult {
  const source = text.slice(bodyStart);
  const keep = line === 'v2';
  const parsed = parseJinja(normalizeTemplate(source, keep));
  const at = jinjaSourceOffsets(text, bodyStart);
  const b = new Builder(path, text, bodyStart, parsed, at, roleLinePattern(line), line === 'v2');
  const items = b.list(parsed.body, true);
  b.report();
  const messages = toMessages(items, bodyStart, text.length);

  const names = namesOf(source, keep, parsed);
  const uses: RawUse[] = variableUses(parsed.body, names).map((u) => ({ slot: u.name, span: b.span(u.span), form: u.form }));
  // A loop's iterable use knows its loop (for delimiters); Prompty's chat-history loop becomes a history node.
  const iterables = uses.filter((u) => u.form === 'each').sort((x, y) => x.span.start - y.span.start);
  const history = new Map<EachNode, string>();
  for (const { node, head } of b.loops) {
    const use = iterableIn(iterables, head, node.path[0]);
    if (!use) continue;
    if (isHistoryLoop(text, node)) {
      use.form = 'history';
      history.set(node, use.slot);
    } else use.each = node;
  }
  if (history.size) replaceHistory(messages, history);
  return { messages, uses, findings: b.findings };
}

/** The use of `slot` as a loop's iterable inside the loop's head (`iterables` sorted by start). */
function iterableIn(iterables: readonly RawUse[], head: Span, slot: string | undefined): RawUse | undefined {
  let lo = 0;
  let hi = iterables.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (iterables[mid].span.start < head.start) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < iterables.length && iterables[k].span.start < head.end; k++) {
    const u = iterables[k];
    if (u.span.end <= head.end && u.slot === slot) return u;
  }
  return undefined;
}

/** Swaps history loops for history nodes, wherever they stand. */
function replaceHistory(messages: BodyResult['messages'], loops: ReadonlyMap<EachNode, string>): void {
  const swap = (nodes: TemplateNode[]) => {
    nodes.forEach((n, k) => {
      const slot = n.type === 'each' ? loops.get(n) : undefined;
      if (n.type === 'each' && slot !== undefined) {
        nodes[k] = { type: 'history', slot, span: n.span };
      } else if (n.type === 'each' || n.type === 'if') {
        swap(n.body);
        if (n.inverse) swap(n.inverse);
      }
    });
  };
  for (const m of messages) swap(m.nodes);
}
