/**
 * Jinja2's compile-time name resolution, ported: jinja2/idtracking.py (Symbols, RootVisitor,
 * FrameSymbolVisitor) and the frame handling of jinja2/compiler.py (CodeGenerator). Jinja2 turns
 * every variable into a Python local `l_<level>_<name>` whose initial value is decided at compile
 * time (resolved from the context, copied from an outer frame, or `missing`); which one it is
 * decides what a template prints, e.g. a name that a later `{% set %}` assigns is `missing` (not
 * the input value) inside loops and blocks before that. The interpreter executes these decisions.
 *
 * The pass also makes the compiler's checks: unknown filters and tests (outside if/else-expression
 * frames), assignments to `loop`, duplicate blocks, `extends` below the top level, `caller`
 * without default, names the compiler cannot resolve.
 */
import type { Span } from '../../types';
import { FILTERS, TESTS } from './builtins';
import type { CallArgs, Expr, IfStmt, Stmt } from './parser';
import { LimitError, PyError } from './values';

export type Load = { kind: 'param' } | { kind: 'resolve'; name: string } | { kind: 'alias'; target: string } | { kind: 'undefined' };

function compileError(type: string, msg: string, span: Span): PyError {
  const e = new PyError(type, msg);
  e.span = span;
  return e;
}

export class Symbols {
  readonly level: number;
  refs = new Map<string, string>();
  loads = new Map<string, Load>();
  stores = new Set<string>();
  constructor(
    readonly parent: Symbols | null,
    level?: number,
  ) {
    this.level = level ?? (parent ? parent.level + 1 : 0);
  }

  private defineRef(name: string, load?: Load): string {
    const ident = `l_${this.level}_${name}`;
    this.refs.set(name, ident);
    if (load) this.loads.set(ident, load);
    return ident;
  }

  findLoad(target: string): Load | undefined {
    return this.loads.get(target) ?? this.parent?.findLoad(target);
  }

  findRef(name: string): string | undefined {
    return this.refs.get(name) ?? this.parent?.findRef(name);
  }

  ref(name: string, span: Span): string {
    const r = this.findRef(name);
    if (r === undefined) throw compileError('AssertionError', `Tried to resolve a name to a reference that was unknown to the frame ('${name}')`, span);
    return r;
  }

  copy(): Symbols {
    const s = new Symbols(this.parent, this.level);
    s.refs = new Map(this.refs);
    s.loads = new Map(this.loads);
    s.stores = new Set(this.stores);
    return s;
  }

  store(name: string): void {
    this.stores.add(name);
    if (!this.refs.has(name)) {
      if (this.parent) {
        const outer = this.parent.findRef(name);
        if (outer !== undefined) {
          this.defineRef(name, { kind: 'alias', target: outer });
          return;
        }
      }
      this.defineRef(name, { kind: 'undefined' });
    }
  }

  declareParameter(name: string): string {
    this.stores.add(name);
    return this.defineRef(name, { kind: 'param' });
  }

  load(name: string): void {
    if (this.findRef(name) === undefined) this.defineRef(name, { kind: 'resolve', name });
  }

  branchUpdate(branches: Symbols[]): void {
    const stores = new Set<string>();
    for (const b of branches) for (const n of b.stores) stores.add(n);
    for (const n of this.stores) stores.delete(n);
    for (const b of branches) {
      for (const [k, v] of b.refs) this.refs.set(k, v);
      for (const [k, v] of b.loads) this.loads.set(k, v);
      for (const n of b.stores) this.stores.add(n);
    }
    for (const name of stores) {
      const target = this.findRef(name)!;
      if (this.parent) {
        const outer = this.parent.findRef(name);
        if (outer !== undefined) {
          this.loads.set(target, { kind: 'alias', target: outer });
          continue;
        }
      }
      this.loads.set(target, { kind: 'resolve', name });
    }
  }

  /** `{name: ident}` of every store visible from this frame (dump_local_context). */
  dumpStores(): [string, string][] {
    const rv = new Map<string, string>();
    for (let node: Symbols | null = this; node; node = node.parent) {
      for (const name of [...node.stores].sort()) if (!rv.has(name)) rv.set(name, this.findRef(name)!);
    }
    return [...rv];
  }
}

// ---------------------------------------------------------------------------
// Children in jinja2's field order (NodeVisitor.generic_visit)
// ---------------------------------------------------------------------------

type Node = Expr | Stmt;

function callChildren(e: CallArgs): Expr[] {
  return [...e.args, ...e.kwargs.map((k) => k.value), ...(e.dynArgs ? [e.dynArgs] : []), ...(e.dynKwargs ? [e.dynKwargs] : [])];
}

export function exprChildren(e: Expr): Expr[] {
  switch (e.k) {
    case 'Name':
    case 'NSRef':
    case 'Const':
      return [];
    case 'Tuple':
    case 'List':
      return e.items;
    case 'Dict':
      return e.items.flatMap((x) => [x.key, x.value]);
    case 'CondExpr':
      return [e.test, e.expr1, ...(e.expr2 ? [e.expr2] : [])];
    case 'Bin':
      return [e.left, e.right];
    case 'Unary':
      return [e.node];
    case 'Compare':
      return [e.expr, ...e.ops.map((o) => o.expr)];
    case 'Concat':
      return e.nodes;
    case 'Getattr':
      return [e.node];
    case 'Getitem':
      return [e.node, e.arg];
    case 'Slice':
      return [e.start, e.stop, e.step].filter((x): x is Expr => !!x);
    case 'Call':
      return [e.node, ...callChildren(e)];
    case 'Filter':
    case 'Test':
      return [...(e.node ? [e.node] : []), ...callChildren(e)];
  }
}

function isStmt(n: Node): n is Stmt {
  return ['Output', 'For', 'If', 'Macro', 'CallBlock', 'FilterBlock', 'With', 'Block', 'Extends', 'Include', 'Import', 'FromImport', 'Assign', 'AssignBlock', 'Autoescape'].includes(n.k);
}

export function stmtChildren(s: Stmt): Node[] {
  switch (s.k) {
    case 'Output':
      return s.nodes.filter((n): n is Expr => n.k !== 'Data');
    case 'For':
      return [s.target, s.iter, ...s.body, ...s.else_, ...(s.test ? [s.test] : [])];
    case 'If':
      return [s.test, ...s.body, ...s.elif_, ...s.else_];
    case 'Macro':
      return [...s.args, ...s.defaults, ...s.body];
    case 'CallBlock':
      return [s.call, ...s.args, ...s.defaults, ...s.body];
    case 'FilterBlock':
      return [...s.body, s.filter];
    case 'With':
      return [...s.targets, ...s.values, ...s.body];
    case 'Block':
      return s.body;
    case 'Extends':
    case 'Include':
    case 'Import':
    case 'FromImport':
      return [s.template];
    case 'Assign':
      return [s.target, s.node];
    case 'AssignBlock':
      return [s.target, ...(s.filter ? [s.filter] : []), ...s.body];
    case 'Autoescape':
      return [s.value, ...s.body];
  }
}

function children(n: Node): Node[] {
  return isStmt(n) ? stmtChildren(n) : exprChildren(n);
}

/** Every node below (find_all). */
function* findAll(nodes: Node[]): Generator<Node> {
  for (const n of nodes) {
    yield n;
    yield* findAll(children(n));
  }
}

/** jinja2's find_undeclared: which of `names` are loaded before any store of them (blocks are not entered). */
export function findUndeclared(nodes: Node[], names: string[]): Set<string> {
  const want = new Set(names);
  const out = new Set<string>();
  const visit = (n: Node): void => {
    if (n.k === 'Name') {
      if (n.ctx === 'load' && want.has(n.name)) out.add(n.name);
      else want.delete(n.name);
      return;
    }
    if (n.k === 'Block') return;
    for (const c of children(n)) visit(c);
  };
  for (const n of nodes) visit(n);
  return out;
}

// ---------------------------------------------------------------------------
// FrameSymbolVisitor / RootVisitor
// ---------------------------------------------------------------------------

class SymbolVisitor {
  constructor(public symbols: Symbols) {}

  visit(n: Node, storeAsParam = false): void {
    switch (n.k) {
      case 'Name':
        if (storeAsParam || n.ctx === 'param') this.symbols.declareParameter(n.name);
        else if (n.ctx === 'store') this.symbols.store(n.name);
        else this.symbols.load(n.name);
        return;
      case 'NSRef':
        this.symbols.load(n.name);
        return;
      case 'If':
        return this.visitIf(n, storeAsParam);
      case 'Macro':
        this.symbols.store(n.name);
        return;
      case 'Import':
        this.visit(n.template);
        this.symbols.store(n.target);
        return;
      case 'FromImport':
        this.visit(n.template);
        for (const [, alias] of n.names) this.symbols.store(alias);
        return;
      case 'Assign':
        this.visit(n.node, storeAsParam);
        this.visit(n.target, storeAsParam);
        return;
      case 'For':
        this.visit(n.iter, storeAsParam);
        return;
      case 'CallBlock':
        this.visit(n.call, storeAsParam);
        return;
      case 'FilterBlock':
        this.visit(n.filter, storeAsParam);
        return;
      case 'With':
        for (const v of n.values) this.visit(v);
        return;
      case 'AssignBlock':
        this.visit(n.target, storeAsParam);
        return;
      case 'Autoescape':
      case 'Block':
        return;
    }
    for (const c of children(n)) this.visit(c, storeAsParam);
  }

  private visitIf(n: IfStmt, storeAsParam: boolean): void {
    this.visit(n.test, storeAsParam);
    const original = this.symbols;
    const inner = (nodes: Node[]): Symbols => {
      const rv = original.copy();
      this.symbols = rv;
      for (const x of nodes) this.visit(x, storeAsParam);
      this.symbols = original;
      return rv;
    };
    const body = inner(n.body);
    const elif = inner(n.elif_);
    const els = inner(n.else_);
    this.symbols.branchUpdate([body, elif, els]);
  }
}

type ForBranch = 'body' | 'else' | 'test';

/** Symbols.analyze_node (RootVisitor). */
function analyze(sym: Symbols, n: Stmt | { k: 'Template'; body: Stmt[] }, forBranch: ForBranch = 'body'): void {
  const v = new SymbolVisitor(sym);
  switch (n.k) {
    case 'Template':
    case 'Block':
      for (const c of n.body) v.visit(c);
      return;
    case 'Macro':
    case 'FilterBlock':
    case 'Autoescape':
      for (const c of stmtChildren(n)) v.visit(c);
      return;
    case 'AssignBlock':
      for (const c of n.body) v.visit(c);
      return;
    case 'CallBlock':
      for (const c of [...n.args, ...n.defaults, ...n.body]) v.visit(c);
      return;
    case 'For':
      if (forBranch === 'body') {
        v.visit(n.target, true);
        for (const c of n.body) v.visit(c);
      } else if (forBranch === 'else') for (const c of n.else_) v.visit(c);
      else {
        v.visit(n.target, true);
        if (n.test) v.visit(n.test);
      }
      return;
    case 'With':
      for (const t of n.targets) v.visit(t);
      for (const c of n.body) v.visit(c);
      return;
  }
  throw new Error(`Cannot find symbols for ${n.k}`);
}

// ---------------------------------------------------------------------------
// Frames and the annotating pass (CodeGenerator)
// ---------------------------------------------------------------------------

class Frame {
  symbols: Symbols;
  toplevel = false;
  rootlevel = false;
  loopFrame = false;
  blockFrame = false;
  soft = false;
  requireOutputCheck: boolean;
  constructor(parent: Frame | null, level?: number) {
    this.symbols = new Symbols(parent ? parent.symbols : null, level);
    this.requireOutputCheck = parent ? parent.requireOutputCheck : false;
  }
  inner(): Frame {
    return new Frame(this);
  }
  softFrame(): Frame {
    const f = Object.assign(Object.create(Frame.prototype), this) as Frame;
    f.symbols = this.symbols.copy();
    f.rootlevel = false;
    f.soft = true;
    return f;
  }
}

/** The load instructions a frame runs when it is entered (and the idents it resets on leaving). */
export type FrameInfo = [string, Load][];

export interface ForInfo {
  body: FrameInfo;
  else_?: FrameInfo;
  test?: FrameInfo;
  loopIdent?: string;
  /** recursive loops without else keep their variables (the loop is its own Python function). */
  pythonScope: boolean;
}

export interface MacroInfo {
  frame: FrameInfo;
  args: string[];
  caller?: string;
  kwargs?: string;
  varargs?: string;
  /** Macro: the ident the macro is stored in. */
  target?: string;
  toplevel: boolean;
}

export interface BlockInfo {
  frame: FrameInfo;
  self?: string;
  super?: string;
}

export interface Annotations {
  ident: WeakMap<object, string>;
  root: FrameInfo;
  rootSelf?: string;
  forInfo: WeakMap<Stmt, ForInfo>;
  macroInfo: WeakMap<Stmt, MacroInfo>;
  inner: WeakMap<Stmt, FrameInfo>;
  /** Statements executed in a top-level frame (their assignments go to the context). */
  toplevel: WeakSet<Stmt>;
  /** Names of a top-level assignment written to context.vars. */
  contextNames: WeakMap<Stmt, string[]>;
  /** Output nodes of frames with require_output_check (dropped once the template extends another). */
  guarded: WeakSet<Stmt>;
  /** Blocks jinja2 does not render (top level after a root-level extends). */
  skipped: WeakSet<Stmt>;
  /** dump_local_context at includes / imports with context / scoped blocks. */
  stores: WeakMap<Stmt, [string, string][]>;
  blocks: Map<string, BlockInfo>;
}

class CompilerExit extends Error {}

/** Nesting bounds below the limits of the Python that runs jinja2's generated code. */
export const MAX_EXPR_DEPTH = 32;
export const MAX_STMT_DEPTH = 30;
/** CPython allows 20 statically nested blocks (for / try …) per function. */
export const MAX_LOOP_BLOCKS = 16;

function nestingError(what: string, span: Span): LimitError {
  const e = new LimitError(`the template nests deeper than ${what} (Python's compiler limits start there)`);
  e.span = span;
  return e;
}

/**
 * Deep nesting that CPython would refuse (RecursionError, "too many statically nested blocks",
 * "too many levels of indentation", "too many nested parentheses") is reported, not rendered.
 */
function checkNesting(body: Stmt[]): void {
  const expr = (e: Expr, depth: number): void => {
    if (depth > MAX_EXPR_DEPTH) throw nestingError(`${MAX_EXPR_DEPTH} levels in an expression`, e.span);
    for (const c of exprChildren(e)) expr(c, depth + 1);
  };
  const stmts = (list: Stmt[], depth: number, blocks: number): void => {
    for (const s of list) {
      if (depth > MAX_STMT_DEPTH) throw nestingError(`${MAX_STMT_DEPTH} levels of tags`, s.span);
      const fn = s.k === 'Macro' || s.k === 'CallBlock' || s.k === 'Block';
      const own = s.k === 'For' ? 1 : s.k === 'Include' || s.k === 'Block' ? 2 : 0;
      const b = fn ? 0 : blocks + own;
      if (b > MAX_LOOP_BLOCKS) throw nestingError(`${MAX_LOOP_BLOCKS} nested loops`, s.span);
      for (const c of stmtChildren(s)) {
        if (s.k === 'If' && c.k === 'If' && s.elif_.includes(c)) stmts([c], depth, b);
        else if (isStmt(c)) stmts([c], depth + 1, b);
        else expr(c, 1);
      }
    }
  };
  stmts(body, 0, 0);
}

/** `codeFilters`: filters the application registers on its Environment (known to the compile-time check). */
export function annotate(body: Stmt[], codeFilters?: ReadonlySet<string>): { ann: Annotations; blocks: Map<string, Extract<Stmt, { k: 'Block' }>> } {
  const ann: Annotations = {
    ident: new WeakMap(),
    root: [],
    forInfo: new WeakMap(),
    macroInfo: new WeakMap(),
    inner: new WeakMap(),
    toplevel: new WeakSet(),
    contextNames: new WeakMap(),
    guarded: new WeakSet(),
    skipped: new WeakSet(),
    stores: new WeakMap(),
    blocks: new Map(),
  };
  checkNesting(body);
  const blocks = new Map<string, Extract<Stmt, { k: 'Block' }>>();
  for (const n of findAll(body)) {
    if (n.k === 'Block') {
      if (blocks.has(n.name)) throw compileError('TemplateAssertionError', `block '${n.name}' defined twice`, n.span);
      blocks.set(n.name, n);
    }
  }
  const haveExtends = [...findAll(body)].some((n) => n.k === 'Extends');
  const g = new Codegen(ann, codeFilters);
  const frame = new Frame(null);
  if (findUndeclared(body, ['self']).has('self')) ann.rootSelf = frame.symbols.declareParameter('self');
  analyze(frame.symbols, { k: 'Template', body });
  frame.toplevel = frame.rootlevel = true;
  frame.requireOutputCheck = haveExtends;
  ann.root = [...frame.symbols.loads];
  g.blockvisit(body, frame);
  for (const [name, block] of blocks) {
    const bf = new Frame(null);
    bf.blockFrame = true;
    const und = findUndeclared(block.body, ['self', 'super']);
    const info: BlockInfo = { frame: [] };
    if (und.has('self')) info.self = bf.symbols.declareParameter('self');
    if (und.has('super')) info.super = bf.symbols.declareParameter('super');
    analyze(bf.symbols, block);
    info.frame = [...bf.symbols.loads];
    ann.blocks.set(name, info);
    g.blockvisit(block.body, bf);
  }
  return { ann, blocks };
}

class Codegen {
  private hasKnownExtends = false;
  private extendsSoFar = 0;
  constructor(
    private readonly ann: Annotations,
    private readonly codeFilters?: ReadonlySet<string>,
  ) {}

  blockvisit(nodes: Stmt[], frame: Frame): void {
    try {
      for (const n of nodes) this.stmt(n, frame);
    } catch (e) {
      if (!(e instanceof CompilerExit)) throw e;
    }
  }

  private target(t: Expr, frame: Frame): string[] {
    const names: string[] = [];
    const visit = (e: Expr): void => {
      if (e.k === 'Name') {
        this.ann.ident.set(e, frame.symbols.ref(e.name, e.span));
        if (frame.toplevel || frame.loopFrame || frame.blockFrame) names.push(e.name);
      } else if (e.k === 'NSRef') this.ann.ident.set(e, frame.symbols.ref(e.name, e.span));
      else if (e.k === 'Tuple') e.items.forEach(visit);
    };
    visit(t);
    return names;
  }

  private stmt(s: Stmt, frame: Frame): void {
    switch (s.k) {
      case 'Output':
        if (frame.requireOutputCheck) this.ann.guarded.add(s);
        for (const n of s.nodes) if (n.k !== 'Data') this.expr(n, frame);
        return;
      case 'If': {
        const f = frame.softFrame();
        this.expr(s.test, f);
        this.blockvisit(s.body, f);
        for (const e of s.elif_) {
          this.expr(e.test, f);
          this.blockvisit(e.body, f);
        }
        this.blockvisit(s.else_, f);
        return;
      }
      case 'For':
        return this.visitFor(s, frame);
      case 'Macro':
      case 'CallBlock': {
        const info = this.macroBody(s, frame);
        if (s.k === 'Macro') {
          info.target = frame.symbols.ref(s.name, s.span);
          info.toplevel = frame.toplevel;
          if (frame.toplevel) this.ann.toplevel.add(s);
        } else this.expr(s.call, frame);
        this.ann.macroInfo.set(s, info);
        return;
      }
      case 'FilterBlock': {
        const f = frame.inner();
        analyze(f.symbols, s);
        this.ann.inner.set(s, [...f.symbols.loads]);
        this.blockvisit(s.body, f);
        this.expr(s.filter, f);
        return;
      }
      case 'With': {
        const f = frame.inner();
        analyze(f.symbols, s);
        this.ann.inner.set(s, [...f.symbols.loads]);
        s.targets.forEach((t, i) => {
          this.target(t, f);
          this.expr(s.values[i], frame);
        });
        this.blockvisit(s.body, f);
        return;
      }
      case 'Autoescape': {
        const f = frame.inner();
        analyze(f.symbols, s);
        this.ann.inner.set(s, [...f.symbols.loads]);
        this.expr(s.value, f);
        this.blockvisit(s.body, f);
        return;
      }
      case 'Block':
        if (frame.toplevel) {
          this.ann.toplevel.add(s);
          if (this.hasKnownExtends) this.ann.skipped.add(s);
        }
        if (s.scoped) this.ann.stores.set(s, frame.symbols.dumpStores());
        return;
      case 'Extends':
        if (!frame.toplevel) throw compileError('TemplateAssertionError', 'cannot use extend from a non top-level scope', s.span);
        if (this.extendsSoFar > 0 && this.hasKnownExtends) {
          this.expr(s.template, frame);
          this.extendsSoFar++;
          throw new CompilerExit();
        }
        this.expr(s.template, frame);
        if (frame.rootlevel) this.hasKnownExtends = true;
        this.extendsSoFar++;
        return;
      case 'Include':
        this.expr(s.template, frame);
        if (s.withContext) this.ann.stores.set(s, frame.symbols.dumpStores());
        return;
      case 'Import':
      case 'FromImport': {
        this.expr(s.template, frame);
        if (s.withContext) this.ann.stores.set(s, frame.symbols.dumpStores());
        const names = s.k === 'Import' ? [s.target] : s.names.map(([, a]) => a);
        const idents = names.map((n) => frame.symbols.ref(n, s.span));
        this.ann.macroInfo.set(s, { frame: [], args: idents, toplevel: frame.toplevel });
        if (frame.toplevel) this.ann.toplevel.add(s);
        return;
      }
      case 'Assign': {
        const names = this.target(s.target, frame);
        this.expr(s.node, frame);
        if (frame.toplevel) {
          this.ann.toplevel.add(s);
          this.ann.contextNames.set(s, names);
        }
        return;
      }
      case 'AssignBlock': {
        const f = frame.inner();
        f.requireOutputCheck = false;
        analyze(f.symbols, s);
        this.ann.inner.set(s, [...f.symbols.loads]);
        this.blockvisit(s.body, f);
        const names = this.target(s.target, frame);
        if (s.filter) this.expr(s.filter, f);
        if (frame.toplevel) {
          this.ann.toplevel.add(s);
          this.ann.contextNames.set(s, names);
        }
        return;
      }
    }
  }

  private visitFor(s: Extract<Stmt, { k: 'For' }>, frame: Frame): void {
    const loopFrame = frame.inner();
    loopFrame.loopFrame = true;
    const testFrame = frame.inner();
    const elseFrame = frame.inner();
    const extended = s.recursive || findUndeclared(s.body, ['loop']).has('loop') || [...findAll(s.body)].some((n) => n.k === 'Block' && n.scoped);
    const info: ForInfo = { body: [], pythonScope: s.recursive && !s.else_.length };
    if (extended) info.loopIdent = loopFrame.symbols.declareParameter('loop');
    analyze(loopFrame.symbols, s, 'body');
    if (s.else_.length) analyze(elseFrame.symbols, s, 'else');
    if (s.test) {
      analyze(testFrame.symbols, s, 'test');
      info.test = [...testFrame.symbols.loads];
      this.target(s.target, loopFrame);
      this.expr(s.test, testFrame);
    }
    for (const n of findAll([s])) {
      if (n.k === 'Name' && n.ctx === 'store' && n.name === 'loop') throw compileError('TemplateAssertionError', "Can't assign to special loop variable in for-loop target", n.span);
    }
    this.target(s.target, loopFrame);
    this.expr(s.iter, frame);
    info.body = [...loopFrame.symbols.loads];
    this.blockvisit(s.body, loopFrame);
    if (s.else_.length) {
      info.else_ = [...elseFrame.symbols.loads];
      this.blockvisit(s.else_, elseFrame);
    }
    this.ann.forInfo.set(s, info);
  }

  private macroBody(s: Extract<Stmt, { k: 'Macro' | 'CallBlock' }>, outer: Frame): MacroInfo {
    const frame = outer.inner();
    analyze(frame.symbols, s);
    const names = s.args.map((a) => (a as Extract<Expr, { k: 'Name' }>).name);
    const und = findUndeclared(s.body, ['caller', 'kwargs', 'varargs']);
    const info: MacroInfo = { frame: [], args: [], toplevel: false };
    const ci = names.indexOf('caller');
    if (und.has('caller')) {
      if (ci >= 0) {
        if (ci - names.length + s.defaults.length < 0) throw compileError('TemplateAssertionError', 'When defining macros or call blocks the special "caller" argument must be omitted or be given a default.', s.span);
      } else info.caller = frame.symbols.declareParameter('caller');
    }
    if (und.has('kwargs') && !names.includes('kwargs')) info.kwargs = frame.symbols.declareParameter('kwargs');
    if (und.has('varargs') && !names.includes('varargs')) info.varargs = frame.symbols.declareParameter('varargs');
    frame.requireOutputCheck = false;
    analyze(frame.symbols, s);
    info.args = s.args.map((a) => {
      const id = frame.symbols.ref((a as Extract<Expr, { k: 'Name' }>).name, a.span);
      this.ann.ident.set(a, id);
      return id;
    });
    info.frame = [...frame.symbols.loads];
    for (const d of s.defaults) this.expr(d, frame);
    this.blockvisit(s.body, frame);
    return info;
  }

  private expr(e: Expr, frame: Frame): void {
    switch (e.k) {
      case 'Name':
        this.ann.ident.set(e, frame.symbols.ref(e.name, e.span));
        return;
      case 'NSRef':
        this.ann.ident.set(e, frame.symbols.ref(e.name, e.span));
        return;
      case 'CondExpr': {
        const f = frame.softFrame();
        for (const c of exprChildren(e)) this.expr(c, f);
        return;
      }
      case 'Filter':
      case 'Test': {
        if (e.k === 'Filter' && !(e.name in FILTERS) && !this.codeFilters?.has(e.name) && !frame.soft) throw compileError('TemplateAssertionError', `No filter named '${e.name}'.`, e.nameSpan);
        if (e.k === 'Test' && !(e.name in TESTS) && !frame.soft) throw compileError('TemplateAssertionError', `No test named '${e.name}'.`, e.nameSpan);
        const keys = new Set<string>();
        for (const k of e.kwargs) {
          if (keys.has(k.key)) throw compileError('SyntaxError', `keyword argument repeated: ${k.key}`, k.value.span);
          keys.add(k.key);
        }
        break;
      }
      case 'Call': {
        const keys = new Set<string>();
        for (const k of e.kwargs) {
          if (keys.has(k.key)) throw compileError('SyntaxError', `keyword argument repeated: ${k.key}`, k.value.span);
          keys.add(k.key);
        }
        break;
      }
    }
    for (const c of exprChildren(e)) this.expr(c, frame);
  }
}
