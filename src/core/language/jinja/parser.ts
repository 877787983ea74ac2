/**
 * A port of jinja2/parser.py (3.1) over our tokens, producing nodes with offsets. Extensions are not
 * enabled in Prompty's environment, so `do`, `break`, `continue`, `trans` are unknown tags (syntax
 * errors) exactly as in Jinja2.
 */
import { BoundedCache } from '../../cache';
import type { Span } from '../../types';
import { OPERATOR_TEXT, lexEnvKey, syntaxError, tokenize, type LexEnv, type LexIssue, type TokType, type Token } from './lexer';
import { LimitError } from './values';

export type Expr =
  | { k: 'Name'; span: Span; name: string; ctx: 'load' | 'store' | 'param' }
  | { k: 'NSRef'; span: Span; name: string; attr: string }
  | { k: 'Const'; span: Span; value: string | number | bigint | boolean | null; float?: boolean }
  | { k: 'Tuple'; span: Span; items: Expr[]; ctx: 'load' | 'store' | 'param' }
  | { k: 'List'; span: Span; items: Expr[] }
  | { k: 'Dict'; span: Span; items: { key: Expr; value: Expr }[] }
  | { k: 'CondExpr'; span: Span; test: Expr; expr1: Expr; expr2: Expr | null }
  | { k: 'Bin'; span: Span; op: 'add' | 'sub' | 'mul' | 'div' | 'floordiv' | 'mod' | 'pow' | 'and' | 'or'; left: Expr; right: Expr }
  | { k: 'Unary'; span: Span; op: 'not' | 'neg' | 'pos'; node: Expr }
  | { k: 'Compare'; span: Span; expr: Expr; ops: { op: string; expr: Expr }[] }
  | { k: 'Concat'; span: Span; nodes: Expr[] }
  | { k: 'Getattr'; span: Span; node: Expr; attr: string }
  | { k: 'Getitem'; span: Span; node: Expr; arg: Expr }
  | { k: 'Slice'; span: Span; start: Expr | null; stop: Expr | null; step: Expr | null }
  | ({ k: 'Call'; span: Span; node: Expr } & CallArgs)
  | ({ k: 'Filter'; span: Span; node: Expr | null; name: string; nameSpan: Span } & CallArgs)
  | ({ k: 'Test'; span: Span; node: Expr; name: string; nameSpan: Span } & CallArgs);

export interface IfStmt {
  k: 'If';
  span: Span;
  test: Expr;
  body: Stmt[];
  /** `elif` branches: If nodes without elif/else of their own, as in jinja2's tree. */
  elif_: IfStmt[];
  else_: Stmt[];
}

export interface CallArgs {
  args: Expr[];
  kwargs: { key: string; value: Expr }[];
  dynArgs: Expr | null;
  dynKwargs: Expr | null;
}

export type Stmt =
  | { k: 'Output'; span: Span; nodes: (Expr | { k: 'Data'; span: Span; data: string })[] }
  | { k: 'For'; span: Span; target: Expr; iter: Expr; body: Stmt[]; else_: Stmt[]; test: Expr | null; recursive: boolean }
  | IfStmt
  | { k: 'Macro'; span: Span; name: string; args: Expr[]; defaults: Expr[]; body: Stmt[] }
  | { k: 'CallBlock'; span: Span; call: Expr; args: Expr[]; defaults: Expr[]; body: Stmt[] }
  | { k: 'FilterBlock'; span: Span; filter: Expr; body: Stmt[] }
  | { k: 'With'; span: Span; targets: Expr[]; values: Expr[]; body: Stmt[] }
  | { k: 'Block'; span: Span; name: string; body: Stmt[]; scoped: boolean; required: boolean }
  | { k: 'Extends'; span: Span; template: Expr }
  | { k: 'Include'; span: Span; template: Expr; withContext: boolean; ignoreMissing: boolean }
  | { k: 'Import'; span: Span; template: Expr; target: string; withContext: boolean }
  | { k: 'FromImport'; span: Span; template: Expr; names: [string, string][]; withContext: boolean }
  | { k: 'Assign'; span: Span; target: Expr; node: Expr }
  | { k: 'AssignBlock'; span: Span; target: Expr; body: Stmt[]; filter: Expr | null }
  | { k: 'Autoescape'; span: Span; value: Expr; body: Stmt[] };

const STATEMENT_KEYWORDS = new Set(['for', 'if', 'block', 'extends', 'print', 'macro', 'include', 'from', 'import', 'set', 'with', 'autoescape']);
const COMPARE_OPS = new Set(['eq', 'ne', 'lt', 'lteq', 'gt', 'gteq']);

function describe(t: Token): string {
  if (t.type === 'name') return String(t.value);
  if (t.type in OPERATOR_TEXT) return OPERATOR_TEXT[t.type];
  const names: Partial<Record<TokType, string>> = {
    block_begin: 'begin of statement block',
    block_end: 'end of statement block',
    variable_begin: 'begin of print statement',
    variable_end: 'end of print statement',
    data: 'template data / text',
    eof: 'end of template',
  };
  return names[t.type] ?? t.type;
}

const TOKEN_EXPRS = new Map<string, [string, string | null]>();

/**
 * What the recovering parse stepped over (the editor's view; jinja2 itself stops at the first):
 * `syntax` is jinja2's own error at its span; the others are the structural mistakes an editor
 * names in its own words — an opener never closed (`unclosed`, at the opener, `closer` the tag
 * that is missing), one cut short by an outer block's closer (`cut`, `at` that closer), a closer
 * or middle tag with no block to belong to (`stray`, `outside-if`, `outside-block`), a loop head
 * that does not read `for x in y` (`for-head`), blocks nested beyond what is read (`limit`).
 */
export interface ParseIssue {
  kind: 'syntax' | 'unclosed' | 'cut' | 'stray' | 'outside-if' | 'outside-block' | 'for-head' | 'limit';
  span: Span;
  error: Error;
  closer?: string;
  at?: Span;
}

/** Block nesting the recovering parse follows; deeper openers are skipped (their closers then stray). */
const MAX_RECOVER_DEPTH = 200;

const BLOCK_OPENERS = new Set(['for', 'if', 'block', 'macro', 'call', 'filter', 'set', 'with', 'autoescape']);

export class Parser {
  private i = 0;
  private readonly endTokenStack: string[][] = [];
  /** Head spans of the blocks whose bodies are being read, beside endTokenStack (recovering parse). */
  private readonly heads: Span[] = [];
  /** Set when an outer block's closer ended the inner blocks: every level returns up to that block. */
  private cut = false;
  /** The kind of the structural mistake the next `fail` reports (recovering parse). */
  private failKind: ParseIssue['kind'] = 'syntax';
  /** `{{ … }}` tag spans of printed expressions. */
  readonly tagSpans = new WeakMap<object, Span>();
  /** Spans of block closers (`{% endfor %}`), and of the `{% elif … %}` heads. */
  readonly closeSpans = new WeakMap<object, Span>();
  readonly elifHeads = new WeakMap<object, Span>();

  /**
   * @param issues Given, the parse recovers (for the editor): each problem is recorded there and
   *   the parse goes on. Without it the first error is thrown, as jinja2 does.
   */
  constructor(
    private readonly toks: Token[],
    private readonly issues?: ParseIssue[],
  ) {}

  private get cur(): Token {
    return this.toks[this.i];
  }
  private ct(): TokType {
    return this.toks[this.i].type;
  }
  private look(): Token {
    return this.toks[Math.min(this.i + 1, this.toks.length - 1)];
  }
  private next(): Token {
    const t = this.toks[this.i];
    if (t.type !== 'eof') this.i++;
    return t;
  }
  private test(t: Token, expr: string): boolean {
    if (t.type === expr) return true;
    let parsed = TOKEN_EXPRS.get(expr);
    if (!parsed) {
      const c = expr.indexOf(':');
      parsed = c >= 0 ? [expr.slice(0, c), expr.slice(c + 1)] : [expr, null];
      TOKEN_EXPRS.set(expr, parsed);
    }
    return parsed[1] !== null && t.type === parsed[0] && t.value === parsed[1];
  }
  private skipIf(expr: string): boolean {
    if (this.test(this.cur, expr)) {
      this.next();
      return true;
    }
    return false;
  }
  private fail(msg: string, t: Token = this.cur): never {
    throw syntaxError(msg, t.start, Math.max(t.end, t.start + 1));
  }

  /** Records an error of the recovering parse and skips to the end of the tag it is in. */
  private recover(err: unknown, closer: 'block_end' | 'variable_end', tagStart: number): void {
    if (!(err instanceof Error)) throw err;
    const kind = err instanceof RangeError ? 'limit' : this.failKind;
    this.failKind = 'syntax';
    const at = (err as { span?: Span }).span ?? { start: tagStart, end: this.cur.end };
    const reported = this.cur.synthetic === true;
    this.skipTag(closer);
    if (reported) return;
    this.issues!.push({ kind, span: kind === 'syntax' || kind === 'limit' ? at : { start: tagStart, end: this.toks[this.i - 1]?.end ?? at.end }, error: err });
  }

  /** Moves past the end of the current tag (or to the next tag when it has none). */
  private skipTag(closer: 'block_end' | 'variable_end'): void {
    while (this.ct() !== 'eof' && this.ct() !== closer && this.ct() !== 'block_begin' && this.ct() !== 'variable_begin' && this.ct() !== 'data') this.next();
    if (this.ct() === closer) this.next();
  }

  /** The span of the tag whose `{%` is at token index `j`, through its `%}`. */
  private tagAt(j: number): Span {
    let k = j;
    while (k < this.toks.length - 1 && this.toks[k].type !== 'block_end' && (k === j || this.toks[k].type !== 'block_begin')) k++;
    const last = this.toks[k].type === 'block_end' ? this.toks[k] : this.toks[Math.max(j, k - 1)];
    return { start: this.toks[j].start, end: last.end };
  }
  private expect(expr: string): Token {
    if (!this.test(this.cur, expr)) {
      const c = expr.indexOf(':');
      const want = c >= 0 && expr.slice(0, c) === 'name' ? expr.slice(c + 1) : (OPERATOR_TEXT[expr] ?? expr);
      if (this.ct() === 'eof') this.fail(`unexpected end of template, expected '${want}'.`);
      this.fail(`expected token '${want}', got '${describe(this.cur)}'`);
    }
    return this.next();
  }
  /** The span of a tag from its opening token through the coming `%}`. */
  private head(begin: Token): Span {
    let j = this.i;
    if (this.toks[j].type === 'colon') j++;
    const t = this.toks[j];
    if (t.type === 'block_end') return { start: begin.start, end: t.end };
    return this.span(begin);
  }
  private span(startTok: Token | number): Span {
    const start = typeof startTok === 'number' ? startTok : startTok.start;
    const prev = this.toks[Math.max(0, this.i - 1)];
    return { start, end: Math.max(start, prev.end) };
  }

  parse(): Stmt[] {
    return this.subparse(null);
  }

  private subparse(endTokens: string[] | null, head?: Span): Stmt[] {
    const body: Stmt[] = [];
    let data: (Expr | { k: 'Data'; span: Span; data: string })[] = [];
    const flush = (): void => {
      if (data.length) {
        body.push({ k: 'Output', span: { start: data[0].span.start, end: data[data.length - 1].span.end }, nodes: data });
        data = [];
      }
    };
    if (endTokens) {
      this.endTokenStack.push(endTokens);
      this.heads.push(head ?? { start: 0, end: 0 });
    }
    try {
      while (this.ct() !== 'eof') {
        const t = this.cur;
        if (t.type === 'data') {
          data.push({ k: 'Data', span: { start: t.start, end: t.end }, data: String(t.value) });
          this.next();
        } else if (t.type === 'variable_begin') {
          if (!this.issues) {
            this.next();
            const e = this.parseTuple({ withCondexpr: true });
            const end = this.expect('variable_end');
            this.tagSpans.set(e, { start: t.start, end: end.end });
            data.push(e);
            continue;
          }
          try {
            this.next();
            const e = this.parseTuple({ withCondexpr: true });
            const end = this.expect('variable_end');
            this.tagSpans.set(e, { start: t.start, end: end.end });
            data.push(e);
          } catch (err) {
            this.recover(err, 'variable_end', t.start);
          }
        } else if (t.type === 'block_begin') {
          flush();
          const at = this.i;
          this.next();
          if (endTokens && endTokens.some((e) => this.test(this.cur, e))) return body;
          if (!this.issues) {
            const rv = this.parseStatement(t);
            const before = this.toks[this.i - 1];
            const end = this.expect('block_end');
            if (before && rv.span.end === before.end) rv.span = { start: rv.span.start, end: end.end };
            body.push(rv);
            continue;
          }
          if (this.closesOuter(at)) return body;
          if (this.endTokenStack.length >= MAX_RECOVER_DEPTH && this.ct() === 'name' && BLOCK_OPENERS.has(String(this.cur.value))) {
            const span = this.tagAt(at);
            this.skipTag('block_end');
            this.issues.push({ kind: 'limit', span, error: syntaxError('blocks nested too deeply', span.start, span.end) });
            continue;
          }
          let rv: Stmt;
          try {
            rv = this.parseStatement(t);
          } catch (err) {
            this.recover(err, 'block_end', t.start);
            continue;
          }
          body.push(rv);
          if (this.cut) {
            // An outer closer ended this block: the level it belongs to takes it.
            if (endTokens && endTokens.some((e) => this.test(this.cur, e))) this.cut = false;
            return body;
          }
          if (this.ct() === 'eof') break;
          const before = this.toks[this.i - 1];
          try {
            const end = this.expect('block_end');
            if (before && rv.span.end === before.end) rv.span = { start: rv.span.start, end: end.end };
          } catch (err) {
            this.recover(err, 'block_end', t.start);
          }
        } else throw syntaxError('internal parsing error', t.start);
      }
      flush();
    } finally {
      if (endTokens) {
        this.endTokenStack.pop();
        this.heads.pop();
      }
    }
    return body;
  }

  /**
   * Recovering parse, at a tag name: when it closes (or continues) a block outside the innermost
   * one (`{% for %}{% if %}…{% endfor %}`), the blocks inside are reported as not closed and every
   * level returns up to that block, which then reads the tag as its own.
   */
  private closesOuter(at: number): boolean {
    const stack = this.endTokenStack;
    let level = -1;
    for (let k = stack.length - 2; k >= 0 && level < 0; k--) if (stack[k].some((e) => this.test(this.cur, e))) level = k;
    if (level < 0) return false;
    const tag = this.tagAt(at);
    for (let k = stack.length - 1; k > level; k--) {
      this.issues!.push({ kind: 'cut', span: this.heads[k], at: tag, closer: closerOf(stack[k]), error: syntaxError(`Encountered unknown tag '${String(this.cur.value)}'.`, this.cur.start, this.cur.end) });
    }
    this.cut = true;
    this.cutAt = tag;
    return true;
  }

  /** Where the closer that cut the open blocks short stands. */
  private cutAt: Span | undefined;

  /** A block ended early ends where its reading stopped: at the cutting closer, or at the end of the template. */
  private stop<T extends object>(node: T): T {
    const at = this.cut && this.cutAt ? this.cutAt.start : this.cur.start;
    if (!this.closeSpans.has(node)) this.closeSpans.set(node, { start: at, end: at });
    return node;
  }

  private parseStatement(begin: Token): Stmt {
    const t = this.cur;
    if (t.type !== 'name') this.fail('tag name expected');
    const v = String(t.value);
    if (STATEMENT_KEYWORDS.has(v)) {
      switch (v) {
        case 'for':
          return this.parseFor(begin);
        case 'if':
          return this.parseIf(begin);
        case 'block':
          return this.parseBlock(begin);
        case 'extends':
          this.next();
          return { k: 'Extends', template: this.parseExpression(), span: this.span(begin) };
        case 'print': {
          this.next();
          const nodes: Expr[] = [];
          while (this.ct() !== 'block_end') {
            if (nodes.length) this.expect('comma');
            nodes.push(this.parseExpression());
          }
          return { k: 'Output', nodes, span: this.span(begin) };
        }
        case 'macro':
          return this.parseMacro(begin);
        case 'include':
          return this.parseInclude(begin);
        case 'from':
          return this.parseFrom(begin);
        case 'import':
          return this.parseImport(begin);
        case 'set':
          return this.parseSet(begin);
        case 'with':
          return this.parseWith(begin);
        case 'autoescape': {
          this.next();
          const value = this.parseExpression();
          const head = this.head(begin);
          const body = this.parseStatements(['name:endautoescape'], true, head);
          return { k: 'Autoescape', value, body, span: head };
        }
      }
    }
    if (v === 'call') return this.parseCallBlock(begin);
    if (v === 'filter') return this.parseFilterBlock(begin);
    // unknown tag
    const expected = new Set<string>();
    for (const exprs of this.endTokenStack) for (const e of exprs) expected.add(e.split(':').pop()!);
    let msg = `Encountered unknown tag '${v}'.`;
    this.failKind = v.startsWith('end') ? 'stray' : v === 'else' ? 'outside-block' : v === 'elif' ? 'outside-if' : 'syntax';
    if (this.endTokenStack.length) {
      const looking = this.endTokenStack[this.endTokenStack.length - 1].map((e) => `'${e.split(':').pop()}'`).join(' or ');
      msg += expected.has(v) ? ` You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for ${looking}.` : ` Jinja was looking for the following tags: ${looking}.`;
    }
    this.fail(msg, t);
  }

  /**
   * A block's body up to one of `endTokens`. `head` is the span of the block's opening tag (the
   * recovering parse reports an unclosed block there and closes it at the end of the template).
   */
  private parseStatements(endTokens: string[], dropNeedle = false, head?: Span): Stmt[] {
    if (this.issues) {
      try {
        this.skipIf('colon');
        this.expect('block_end');
      } catch (err) {
        this.recover(err, 'block_end', head?.start ?? this.cur.start);
      }
    } else {
      this.skipIf('colon');
      this.expect('block_end');
    }
    const result = this.subparse(endTokens, head);
    if (this.cut) return result;
    if (this.ct() === 'eof') {
      const looking = endTokens.map((e) => `'${e.split(':').pop()}'`).join(' or ');
      if (this.issues) {
        const t = this.cur;
        this.issues.push({ kind: 'unclosed', span: head ?? { start: t.start, end: t.end }, closer: closerOf(endTokens), error: syntaxError(`Unexpected end of template. Jinja was looking for the following tags: ${looking}.`, t.start, Math.max(t.end, t.start + 1)) });
        return result;
      }
      this.fail(`Unexpected end of template. Jinja was looking for the following tags: ${looking}.`);
    }
    if (dropNeedle) this.closeTag();
    return result;
  }

  /** True when the block being read ended early (cut by an outer closer, or the template ended). */
  private get stopped(): boolean {
    return this.cut || this.ct() === 'eof';
  }

  /** Moves past a block's closing name, noting the span of its tag. */
  private closeTag(owner?: object): Token {
    const begin = this.toks[this.i - 1];
    const t = this.next();
    if (owner) this.closeSpans.set(owner, this.tagAt(begin.type === 'block_begin' ? this.i - 2 : this.i - 1));
    this.lastClose = begin.type === 'block_begin' ? this.tagAt(this.i - 2) : undefined;
    return t;
  }
  private lastClose: Span | undefined;

  /** Runs a part of a tag head; in the recovering parse an error is recorded and the rest of the head skipped. */
  private headPart<T>(part: () => T, fallback: () => T, tagStart: number, kind: ParseIssue['kind'] = 'syntax'): T {
    if (!this.issues) return part();
    try {
      return part();
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      this.failKind = kind;
      const at = (err as { span?: Span }).span;
      const from = this.i;
      const reported = this.cur.synthetic === true;
      this.recoverHead();
      if (reported) {
        this.failKind = 'syntax';
        return fallback();
      }
      const span = kind === 'syntax' ? (at ?? { start: tagStart, end: this.cur.end }) : { start: tagStart, end: this.cur.type === 'block_end' ? this.cur.end : this.toks[Math.max(from, this.i - 1)].end };
      this.issues.push({ kind: err instanceof RangeError ? 'limit' : kind, span, error: err });
      this.failKind = 'syntax';
      return fallback();
    }
  }

  /** Skips to the `%}` of the current head, leaving it to be read. */
  private recoverHead(): void {
    while (this.ct() !== 'eof' && this.ct() !== 'block_end' && this.ct() !== 'block_begin' && this.ct() !== 'variable_begin' && this.ct() !== 'data') this.next();
  }

  private parseSet(begin: Token): Stmt {
    this.next();
    const target = this.parseAssignTarget({ withNamespace: true });
    if (this.skipIf('assign')) {
      const node = this.parseTuple({});
      return { k: 'Assign', target, node, span: this.span(begin) };
    }
    const filter = this.parseFilter(null);
    const head = this.head(begin);
    const body = this.parseStatements(['name:endset'], true, head);
    return { k: 'AssignBlock', target, body, filter, span: head };
  }

  private parseFor(begin: Token): Stmt {
    this.expect('name:for');
    const none = (): Expr => ({ k: 'Tuple', items: [], ctx: 'store', span: { start: begin.start, end: begin.start } });
    // The target is read on its own, so a loop whose iterable is broken still binds its names.
    let broken = false;
    const target = this.headPart(
      () => this.parseAssignTarget({ extraEndRules: ['name:in'] }),
      () => {
        broken = true;
        return none();
      },
      begin.start,
      'for-head',
    );
    const nothing = () => ({ iter: { k: 'Const', value: null, span: { start: begin.start, end: begin.start } } as Expr, test: null as Expr | null, recursive: false });
    const { iter, test, recursive } = broken
      ? nothing()
      : this.headPart(
          () => {
            this.expect('name:in');
            const iter = this.parseTuple({ withCondexpr: false, extraEndRules: ['name:recursive'] });
            let test: Expr | null = null;
            if (this.skipIf('name:if')) test = this.parseExpression();
            const recursive = this.skipIf('name:recursive');
            return { iter, test, recursive };
          },
          nothing,
          begin.start,
          'for-head',
        );
    const head = this.head(begin);
    const node: Extract<Stmt, { k: 'For' }> = { k: 'For', target, iter, body: [], else_: [], test, recursive, span: head };
    node.body = this.parseStatements(['name:endfor', 'name:else'], false, head);
    if (this.stopped) return this.stop(node);
    if (this.closeTag(node).value !== 'endfor') {
      node.else_ = this.parseStatements(['name:endfor'], true, head);
      if (this.stopped) return this.stop(node);
      if (this.lastClose) this.closeSpans.set(node, this.lastClose);
    }
    return node;
  }

  private parseIf(begin: Token): Stmt {
    this.expect('name:if');
    const placeholder = (): Expr => ({ k: 'Const', value: null, span: { start: begin.start, end: begin.start } });
    const test = this.headPart(() => this.parseTuple({ withCondexpr: false }), placeholder, begin.start);
    const head = this.head(begin);
    const node: IfStmt = { k: 'If', test, body: [], elif_: [], else_: [], span: head };
    node.body = this.parseStatements(['name:elif', 'name:else', 'name:endif'], false, head);
    for (;;) {
      if (this.stopped) return this.stop(node);
      const tok = this.closeTag(node);
      if (this.test(tok, 'name:elif')) {
        const elifBegin = this.toks[this.i - 2];
        const t2 = this.headPart(() => this.parseTuple({ withCondexpr: false }), placeholder, tok.start);
        const span = { start: tok.start, end: this.span(tok).end };
        const elif: IfStmt = { k: 'If', test: t2, body: [], elif_: [], else_: [], span };
        this.elifHeads.set(elif, this.head(elifBegin));
        elif.body = this.parseStatements(['name:elif', 'name:else', 'name:endif'], false, head);
        node.elif_.push(elif);
        continue;
      }
      if (this.test(tok, 'name:else')) {
        node.else_ = this.parseStatements(['name:endif'], true, head);
        if (this.stopped) return this.stop(node);
        if (this.lastClose) this.closeSpans.set(node, this.lastClose);
      }
      break;
    }
    return node;
  }

  private parseWith(begin: Token): Stmt {
    this.next();
    const targets: Expr[] = [];
    const values: Expr[] = [];
    while (this.ct() !== 'block_end') {
      if (targets.length) this.expect('comma');
      const target = this.parseAssignTarget({});
      setCtx(target, 'param');
      targets.push(target);
      this.expect('assign');
      values.push(this.parseExpression());
    }
    const head = this.head(begin);
    const body = this.parseStatements(['name:endwith'], true, head);
    return { k: 'With', targets, values, body, span: head };
  }

  private parseBlock(begin: Token): Stmt {
    this.next();
    const name = String(this.expect('name').value);
    const scoped = this.skipIf('name:scoped');
    const required = this.skipIf('name:required');
    if (this.ct() === 'sub') this.fail('Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an underscore instead.');
    const head = this.head(begin);
    const body = this.parseStatements(['name:endblock'], true, head);
    if (this.stopped) return { k: 'Block', name, body, scoped, required, span: head };
    if (required) {
      for (const b of body) {
        if (b.k !== 'Output' || b.nodes.some((x) => x.k !== 'Data' || !/^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/.test(x.data))) this.fail('Required blocks can only contain comments or whitespace');
      }
    }
    this.skipIf('name:' + name);
    return { k: 'Block', name, body, scoped, required, span: head };
  }

  private parseImportContext(dflt: boolean): boolean {
    if ((this.test(this.cur, 'name:with') || this.test(this.cur, 'name:without')) && this.test(this.look(), 'name:context')) {
      const w = this.next().value === 'with';
      this.next();
      return w;
    }
    return dflt;
  }

  private parseInclude(begin: Token): Stmt {
    this.next();
    const template = this.parseExpression();
    let ignoreMissing = false;
    if (this.test(this.cur, 'name:ignore') && this.test(this.look(), 'name:missing')) {
      ignoreMissing = true;
      this.next();
      this.next();
    }
    const withContext = this.parseImportContext(true);
    return { k: 'Include', template, ignoreMissing, withContext, span: this.span(begin) };
  }

  private parseImport(begin: Token): Stmt {
    this.next();
    const template = this.parseExpression();
    this.expect('name:as');
    const target = String(this.expect('name').value);
    const withContext = this.parseImportContext(false);
    return { k: 'Import', template, target, withContext, span: this.span(begin) };
  }

  private parseFrom(begin: Token): Stmt {
    this.next();
    const template = this.parseExpression();
    this.expect('name:import');
    const names: [string, string][] = [];
    let withContext: boolean | undefined;
    const parseContext = (): boolean => {
      if ((this.cur.value === 'with' || this.cur.value === 'without') && this.test(this.look(), 'name:context')) {
        withContext = this.next().value === 'with';
        this.next();
        return true;
      }
      return false;
    };
    for (;;) {
      if (names.length) this.expect('comma');
      if (this.ct() === 'name') {
        if (parseContext()) break;
        const t = this.expect('name');
        const target = String(t.value);
        if (target.startsWith('_')) throw syntaxError('names starting with an underline can not be imported', t.start, t.end);
        if (this.skipIf('name:as')) names.push([target, String(this.expect('name').value)]);
        else names.push([target, target]);
        if (parseContext() || this.ct() !== 'comma') break;
      } else this.expect('name');
    }
    return { k: 'FromImport', template, names, withContext: withContext ?? false, span: this.span(begin) };
  }

  private parseSignature(): { args: Expr[]; defaults: Expr[] } {
    const args: Expr[] = [];
    const defaults: Expr[] = [];
    this.expect('lparen');
    while (this.ct() !== 'rparen') {
      if (args.length) this.expect('comma');
      const t = this.expect('name');
      const arg: Expr = { k: 'Name', name: String(t.value), ctx: 'param', span: { start: t.start, end: t.end } };
      if (this.skipIf('assign')) defaults.push(this.parseExpression());
      else if (defaults.length) this.fail('non-default argument follows default argument');
      args.push(arg);
    }
    this.expect('rparen');
    return { args, defaults };
  }

  private parseCallBlock(begin: Token): Stmt {
    this.next();
    let sig: { args: Expr[]; defaults: Expr[] } = { args: [], defaults: [] };
    if (this.ct() === 'lparen') sig = this.parseSignature();
    const call = this.parseExpression();
    if (call.k !== 'Call') throw syntaxError('expected call', begin.start, begin.end);
    const head = this.head(begin);
    const body = this.parseStatements(['name:endcall'], true, head);
    return { k: 'CallBlock', call, ...sig, body, span: head };
  }

  private parseFilterBlock(begin: Token): Stmt {
    this.next();
    const filter = this.parseFilter(null, true)!;
    const head = this.head(begin);
    const body = this.parseStatements(['name:endfilter'], true, head);
    return { k: 'FilterBlock', filter, body, span: head };
  }

  private parseMacro(begin: Token): Stmt {
    this.next();
    const name = String(this.expect('name').value);
    const sig = this.parseSignature();
    const head = this.head(begin);
    const body = this.parseStatements(['name:endmacro'], true, head);
    return { k: 'Macro', name, ...sig, body, span: head };
  }

  private parseAssignTarget(o: { withTuple?: boolean; nameOnly?: boolean; extraEndRules?: string[]; withNamespace?: boolean }): Expr {
    let target: Expr;
    if (o.nameOnly) {
      const t = this.expect('name');
      target = { k: 'Name', name: String(t.value), ctx: 'store', span: { start: t.start, end: t.end } };
    } else {
      if (o.withTuple !== false) target = this.parseTuple({ simplified: true, extraEndRules: o.extraEndRules, withNamespace: o.withNamespace });
      else target = this.parsePrimary(o.withNamespace);
      setCtx(target, 'store');
    }
    if (!canAssign(target)) {
      const names: Record<string, string> = { Const: 'const', List: 'list', Dict: 'dict' };
      throw syntaxError(`can't assign to '${names[target.k] ?? target.k.toLowerCase()}'`, target.span.start, target.span.end);
    }
    return target;
  }

  parseExpression(withCondexpr = true): Expr {
    return withCondexpr ? this.parseCondexpr() : this.parseOr();
  }

  private parseCondexpr(): Expr {
    const start = this.cur.start;
    let expr1 = this.parseOr();
    while (this.skipIf('name:if')) {
      const expr2 = this.parseOr();
      const expr3 = this.skipIf('name:else') ? this.parseCondexpr() : null;
      expr1 = { k: 'CondExpr', test: expr2, expr1, expr2: expr3, span: this.span(start) };
    }
    return expr1;
  }

  private parseOr(): Expr {
    const start = this.cur.start;
    let left = this.parseAnd();
    while (this.skipIf('name:or')) left = { k: 'Bin', op: 'or', left, right: this.parseAnd(), span: this.span(start) };
    return left;
  }

  private parseAnd(): Expr {
    const start = this.cur.start;
    let left = this.parseNot();
    while (this.skipIf('name:and')) left = { k: 'Bin', op: 'and', left, right: this.parseNot(), span: this.span(start) };
    return left;
  }

  private parseNot(): Expr {
    if (this.test(this.cur, 'name:not')) {
      const t = this.next();
      return { k: 'Unary', op: 'not', node: this.parseNot(), span: this.span(t) };
    }
    return this.parseCompare();
  }

  private parseCompare(): Expr {
    const start = this.cur.start;
    const expr = this.parseMath1();
    const ops: { op: string; expr: Expr }[] = [];
    for (;;) {
      const tt = this.ct();
      if (COMPARE_OPS.has(tt)) {
        this.next();
        ops.push({ op: tt, expr: this.parseMath1() });
      } else if (this.skipIf('name:in')) ops.push({ op: 'in', expr: this.parseMath1() });
      else if (this.test(this.cur, 'name:not') && this.test(this.look(), 'name:in')) {
        this.next();
        this.next();
        ops.push({ op: 'notin', expr: this.parseMath1() });
      } else break;
    }
    if (!ops.length) return expr;
    return { k: 'Compare', expr, ops, span: this.span(start) };
  }

  private parseMath1(): Expr {
    const start = this.cur.start;
    let left = this.parseConcat();
    while (this.ct() === 'add' || this.ct() === 'sub') {
      const op = this.next().type as 'add' | 'sub';
      left = { k: 'Bin', op, left, right: this.parseConcat(), span: this.span(start) };
    }
    return left;
  }

  private parseConcat(): Expr {
    const start = this.cur.start;
    const nodes = [this.parseMath2()];
    while (this.ct() === 'tilde') {
      this.next();
      nodes.push(this.parseMath2());
    }
    return nodes.length === 1 ? nodes[0] : { k: 'Concat', nodes, span: this.span(start) };
  }

  private parseMath2(): Expr {
    const start = this.cur.start;
    let left = this.parsePow();
    while (['mul', 'div', 'floordiv', 'mod'].includes(this.ct())) {
      const op = this.next().type as 'mul' | 'div' | 'floordiv' | 'mod';
      left = { k: 'Bin', op, left, right: this.parsePow(), span: this.span(start) };
    }
    return left;
  }

  private parsePow(): Expr {
    const start = this.cur.start;
    let left = this.parseUnary();
    while (this.ct() === 'pow') {
      this.next();
      left = { k: 'Bin', op: 'pow', left, right: this.parseUnary(), span: this.span(start) };
    }
    return left;
  }

  private parseUnary(withFilter = true): Expr {
    const t = this.cur;
    let node: Expr;
    if (t.type === 'sub') {
      this.next();
      node = { k: 'Unary', op: 'neg', node: this.parseUnary(false), span: this.span(t) };
    } else if (t.type === 'add') {
      this.next();
      node = { k: 'Unary', op: 'pos', node: this.parseUnary(false), span: this.span(t) };
    } else node = this.parsePrimary();
    node = this.parsePostfix(node);
    if (withFilter) node = this.parseFilterExpr(node);
    return node;
  }

  private parsePrimary(withNamespace = false): Expr {
    const t = this.cur;
    const sp = { start: t.start, end: t.end };
    if (t.type === 'name') {
      this.next();
      const v = String(t.value);
      if (v === 'true' || v === 'false' || v === 'True' || v === 'False') return { k: 'Const', value: v === 'true' || v === 'True', span: sp };
      if (v === 'none' || v === 'None') return { k: 'Const', value: null, span: sp };
      if (withNamespace && this.ct() === 'dot') {
        this.next();
        const attr = this.expect('name');
        return { k: 'NSRef', name: v, attr: String(attr.value), span: this.span(t) };
      }
      return { k: 'Name', name: v, ctx: 'load', span: sp };
    }
    if (t.type === 'string') {
      this.next();
      let s = String(t.value);
      while (this.ct() === 'string') s += String(this.next().value);
      return { k: 'Const', value: s, span: this.span(t) };
    }
    if (t.type === 'integer' || t.type === 'float') {
      this.next();
      return { k: 'Const', value: t.value as number | bigint, float: t.type === 'float', span: sp };
    }
    if (t.type === 'lparen') {
      this.next();
      const node = this.parseTuple({ explicitParentheses: true });
      this.expect('rparen');
      return node;
    }
    if (t.type === 'lbracket') return this.parseList();
    if (t.type === 'lbrace') return this.parseDict();
    this.fail(`unexpected '${describe(t)}'`);
  }

  private parseTuple(o: { simplified?: boolean; withCondexpr?: boolean; extraEndRules?: string[]; explicitParentheses?: boolean; withNamespace?: boolean }): Expr {
    const start = this.cur.start;
    const parse = o.simplified ? () => this.parsePrimary(o.withNamespace) : () => this.parseExpression(o.withCondexpr !== false);
    const args: Expr[] = [];
    let isTuple = false;
    for (;;) {
      if (args.length) this.expect('comma');
      if (this.isTupleEnd(o.extraEndRules)) break;
      args.push(parse());
      if (this.ct() === 'comma') isTuple = true;
      else break;
    }
    if (!isTuple) {
      if (args.length) return args[0];
      if (!o.explicitParentheses) this.fail(`Expected an expression, got '${describe(this.cur)}'`);
    }
    return { k: 'Tuple', items: args, ctx: 'load', span: this.span(start) };
  }

  private isTupleEnd(extra?: string[]): boolean {
    const tt = this.ct();
    if (tt === 'variable_end' || tt === 'block_end' || tt === 'rparen') return true;
    return !!extra && extra.some((e) => this.test(this.cur, e));
  }

  private parseList(): Expr {
    const t = this.expect('lbracket');
    const items: Expr[] = [];
    while (this.ct() !== 'rbracket') {
      if (items.length) this.expect('comma');
      if (this.ct() === 'rbracket') break;
      items.push(this.parseExpression());
    }
    this.expect('rbracket');
    return { k: 'List', items, span: this.span(t) };
  }

  private parseDict(): Expr {
    const t = this.expect('lbrace');
    const items: { key: Expr; value: Expr }[] = [];
    while (this.ct() !== 'rbrace') {
      if (items.length) this.expect('comma');
      if (this.ct() === 'rbrace') break;
      const key = this.parseExpression();
      this.expect('colon');
      items.push({ key, value: this.parseExpression() });
    }
    this.expect('rbrace');
    return { k: 'Dict', items, span: this.span(t) };
  }

  private parsePostfix(node: Expr): Expr {
    for (;;) {
      const tt = this.ct();
      if (tt === 'dot' || tt === 'lbracket') node = this.parseSubscript(node);
      else if (tt === 'lparen') node = this.parseCall(node);
      else break;
    }
    return node;
  }

  private parseFilterExpr(node: Expr): Expr {
    for (;;) {
      const tt = this.ct();
      if (tt === 'pipe') node = this.parseFilter(node)!;
      else if (tt === 'name' && this.cur.value === 'is') node = this.parseTest(node);
      else if (tt === 'lparen') node = this.parseCall(node);
      else break;
    }
    return node;
  }

  private parseSubscript(node: Expr): Expr {
    const t = this.next();
    const start = node.span.start;
    if (t.type === 'dot') {
      const a = this.cur;
      this.next();
      if (a.type === 'name') return { k: 'Getattr', node, attr: String(a.value), span: this.span(start) };
      if (a.type !== 'integer') this.fail('expected name or number', a);
      return { k: 'Getitem', node, arg: { k: 'Const', value: a.value as number | bigint, span: { start: a.start, end: a.end } }, span: this.span(start) };
    }
    if (t.type === 'lbracket') {
      const args: Expr[] = [];
      while (this.ct() !== 'rbracket') {
        if (args.length) this.expect('comma');
        args.push(this.parseSubscribed());
      }
      this.expect('rbracket');
      const arg: Expr = args.length === 1 ? args[0] : { k: 'Tuple', items: args, ctx: 'load', span: this.span(t) };
      return { k: 'Getitem', node, arg, span: this.span(start) };
    }
    this.fail('expected subscript expression', t);
  }

  private parseSubscribed(): Expr {
    const start = this.cur.start;
    const args: (Expr | null)[] = [];
    if (this.ct() === 'colon') {
      this.next();
      args.push(null);
    } else {
      const node = this.parseExpression();
      if (this.ct() !== 'colon') return node;
      this.next();
      args.push(node);
    }
    if (this.ct() === 'colon') args.push(null);
    else if (this.ct() !== 'rbracket' && this.ct() !== 'comma') args.push(this.parseExpression());
    else args.push(null);
    if (this.ct() === 'colon') {
      this.next();
      if (this.ct() !== 'rbracket' && this.ct() !== 'comma') args.push(this.parseExpression());
      else args.push(null);
    } else args.push(null);
    return { k: 'Slice', start: args[0], stop: args[1], step: args[2], span: this.span(start) };
  }

  private parseCallArgs(): CallArgs {
    const t = this.expect('lparen');
    const args: Expr[] = [];
    const kwargs: { key: string; value: Expr }[] = [];
    let dynArgs: Expr | null = null;
    let dynKwargs: Expr | null = null;
    let requireComma = false;
    const ensure = (ok: boolean): void => {
      if (!ok) this.fail('invalid syntax for function call expression', t);
    };
    while (this.ct() !== 'rparen') {
      if (requireComma) {
        this.expect('comma');
        if (this.ct() === 'rparen') break;
      }
      if (this.ct() === 'mul') {
        ensure(dynArgs === null && dynKwargs === null);
        this.next();
        dynArgs = this.parseExpression();
      } else if (this.ct() === 'pow') {
        ensure(dynKwargs === null);
        this.next();
        dynKwargs = this.parseExpression();
      } else if (this.ct() === 'name' && this.look().type === 'assign') {
        ensure(dynKwargs === null);
        const key = String(this.cur.value);
        this.next();
        this.next();
        kwargs.push({ key, value: this.parseExpression() });
      } else {
        ensure(dynArgs === null && dynKwargs === null && kwargs.length === 0);
        args.push(this.parseExpression());
      }
      requireComma = true;
    }
    this.expect('rparen');
    return { args, kwargs, dynArgs, dynKwargs };
  }

  private parseCall(node: Expr): Expr {
    const a = this.parseCallArgs();
    return { k: 'Call', node, ...a, span: this.span(node.span.start) };
  }

  private parseFilter(node: Expr | null, startInline = false): Expr | null {
    while (this.ct() === 'pipe' || startInline) {
      if (!startInline) this.next();
      const t = this.expect('name');
      let name = String(t.value);
      while (this.ct() === 'dot') {
        this.next();
        name += '.' + String(this.expect('name').value);
      }
      const nameSpan = this.span(t);
      const a: CallArgs = this.ct() === 'lparen' ? this.parseCallArgs() : { args: [], kwargs: [], dynArgs: null, dynKwargs: null };
      node = { k: 'Filter', node, name, nameSpan, ...a, span: this.span(node ? node.span.start : t.start) };
      startInline = false;
    }
    return node;
  }

  private parseTest(node: Expr): Expr {
    const isTok = this.next();
    let negated = false;
    if (this.test(this.cur, 'name:not')) {
      this.next();
      negated = true;
    }
    const t = this.expect('name');
    let name = String(t.value);
    while (this.ct() === 'dot') {
      this.next();
      name += '.' + String(this.expect('name').value);
    }
    const nameSpan = this.span(t);
    let a: CallArgs = { args: [], kwargs: [], dynArgs: null, dynKwargs: null };
    if (this.ct() === 'lparen') a = this.parseCallArgs();
    else if (['name', 'string', 'integer', 'float', 'lparen', 'lbracket', 'lbrace'].includes(this.ct()) && !['name:else', 'name:or', 'name:and'].some((e) => this.test(this.cur, e))) {
      if (this.test(this.cur, 'name:is')) this.fail('You cannot chain multiple tests with is');
      let arg = this.parsePrimary();
      arg = this.parsePostfix(arg);
      a = { args: [arg], kwargs: [], dynArgs: null, dynKwargs: null };
    }
    let out: Expr = { k: 'Test', node, name, nameSpan, ...a, span: this.span(node.span.start) };
    if (negated) out = { k: 'Unary', op: 'not', node: out, span: this.span(isTok) };
    return out;
  }
}

function setCtx(e: Expr, ctx: 'store' | 'param'): void {
  if (e.k === 'Name' || e.k === 'Tuple') e.ctx = ctx;
  if (e.k === 'Tuple') for (const x of e.items) setCtx(x, ctx);
}

function canAssign(e: Expr): boolean {
  if (e.k === 'Name') return !['true', 'false', 'none', 'True', 'False', 'None'].includes(e.name);
  if (e.k === 'NSRef') return true;
  if (e.k === 'Tuple') return e.items.every(canAssign);
  return false;
}

/** The tag that closes a block, as the editor suggests it (`{% endfor %}`). */
function closerOf(endTokens: string[]): string {
  const end = endTokens.map((e) => e.split(':').pop() ?? '').find((e) => e.startsWith('end')) ?? endTokens[0];
  return `{% ${end} %}`;
}

/** One parse of a (normalized) Jinja template: the tree, and what the editor needs to locate in it. */
export interface JinjaParse {
  body: Stmt[];
  /** Length of the parsed text. */
  end: number;
  /** What the strict parse throws (jinja2's first error); undefined when the template parses. */
  error?: Error;
  /** The recovering parse's problems, in source order; empty when the template parses. */
  lexIssues: LexIssue[];
  issues: ParseIssue[];
  tagSpans: WeakMap<object, Span>;
  closeSpans: WeakMap<object, Span>;
  elifHeads: WeakMap<object, Span>;
}

/**
 * Parses by source text, shared by the renderer (interpreter.compileTemplate) and the editor's
 * analysis (language/prompty/jinjaBody.ts), so a body is parsed once per text.
 */
const parses = new BoundedCache<string, JinjaParse>(256, 16 * 1024 * 1024);

/**
 * Parses a template already normalized by normalizeTemplate. A template jinja2 accepts is parsed
 * once, strictly. One it refuses keeps the strict parse's first error (what rendering reports, as
 * jinja2 does) and gets its tree from a second, recovering parse that records every problem.
 */
export function parseJinja(text: string, env?: LexEnv): JinjaParse {
  const envKey = lexEnvKey(env);
  const key = envKey ? `${envKey}\u0000${text}` : text;
  const hit = parses.get(key);
  if (hit) return hit;
  let result: JinjaParse;
  try {
    const p = new Parser(tokenize(text, undefined, env));
    result = { body: p.parse(), end: text.length, lexIssues: [], issues: [], tagSpans: p.tagSpans, closeSpans: p.closeSpans, elifHeads: p.elifHeads };
  } catch (e) {
    const error = e instanceof RangeError ? new LimitError('the template nests deeper than the parser can follow') : e;
    if (!(error instanceof Error)) throw e;
    const lexIssues: LexIssue[] = [];
    const issues: ParseIssue[] = [];
    const p = new Parser(tokenize(text, lexIssues, env), issues);
    let body: Stmt[] = [];
    try {
      body = p.parse();
    } catch (inner) {
      // Recovery gave up (a bug or an exhausted stack): the strict error still locates the problem.
      if (!(inner instanceof Error)) throw inner;
    }
    result = { body, end: text.length, error, lexIssues, issues, tagSpans: p.tagSpans, closeSpans: p.closeSpans, elifHeads: p.elifHeads };
  }
  parses.set(key, result, text.length);
  return result;
}
