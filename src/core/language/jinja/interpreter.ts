/**
 * A tree-walking interpreter for the nodes of parser.ts with the semantics of the Python code that
 * Jinja2 3.1 generates for an ImmutableSandboxedEnvironment: variables are the `l_<level>_<name>`
 * locals of symbols.ts (initialised on frame entry, reset on frame exit), macros and recursive
 * loops are closures, blocks are separate functions over the context, includes and imports get
 * new contexts, `extends` hands the context to the parent template. Constant folding of the
 * optimizer is reproduced where it changes the result (a folded inf/nan float).
 *
 * Template text is never compiled to JavaScript; only the values given are reachable.
 */
import type { Span } from '../../types';
import { FILTERS, TESTS, callJoiner, makeGlobals, type BuiltinEnv } from './builtins';
import { lexEnvKey, normalizeTemplate, type LexEnv } from './lexer';
import { pyStrRepr } from './pystr';
import { MISSING, PySlice, add, compare, directSlice, floordiv, lookupAttr, lookupItem, mod, mul, neg, pos, pow, sub, truediv } from './ops';
import { parseJinja, type Expr, type Stmt } from './parser';
import { annotate, exprChildren, type Annotations, type FrameInfo } from './symbols';
import { BoundedCache } from '../../cache';
import {
  HugeInt,
  Internal,
  Joiner,
  Cycler,
  PyIter,
  PyObj,
  Markup,
  PyRange,
  listText,
  LimitError,
  Namespace,
  PyDict,
  PyError,
  PyFloat,
  PyFunc,
  PyTuple,
  Undefined,
  Unsupported,
  isStr,
  pyEq,
  pyIterate,
  pyLenOf,
  pyList,
  pyStr,
  strOf,
  truthy,
  typeError,
  typeName,
  valueError,
  type Args,
  type Kwargs,
  type PyValue,
} from './values';

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

export interface Limits {
  /** Loop iterations, macro calls and filter steps together. */
  maxSteps: number;
  /** Characters of the final output. */
  maxOutput: number;
  /** Nesting of macro calls, includes, blocks and recursive loops. */
  maxDepth: number;
}

export const DEFAULT_LIMITS: Limits = { maxSteps: 5_000_000, maxOutput: 20_000_000, maxDepth: 64 };

// ---------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------

type BlockNode = Extract<Stmt, { k: 'Block' }>;
type ForNode = Extract<Stmt, { k: 'For' }>;
type Missing = typeof MISSING;

export interface Unit {
  name: string;
  body: Stmt[];
  blocks: Map<string, BlockNode>;
  ann: Annotations;
}

const UNIT = new WeakMap<object, string>();

/** The template an error's span points into. */
export function unitOf(e: object): string | undefined {
  return UNIT.get(e);
}

/**
 * Compiled units by name and source, as Jinja2's environment caches its templates: a request is
 * rendered several times while it is fitted, and a template is edited far less often than it is
 * rendered. Units are never changed by a render (its state lives in the render's context).
 */
const compiled = new BoundedCache<string, Unit>(256, 16 * 1024 * 1024);

/** Parse a template and run Jinja2's compile-time analysis and checks. Throws PyError / Unsupported / LimitError. */
export function compileTemplate(name: string, source: string, keepTrailingNewline = false, env?: LexEnv): Unit {
  const key = `${name}\u0000${keepTrailingNewline ? 1 : 0}${lexEnvKey(env)}\u0000${source}`;
  const hit = compiled.get(key);
  if (hit) return hit;
  const unit = compileUncached(name, source, keepTrailingNewline, env);
  compiled.set(key, unit, source.length);
  return unit;
}

/** A fresh copy of a cached parse's error (each compile names its template on the error it throws). */
function copyError(e: Error): Error {
  const c = e instanceof PyError ? new PyError(e.pyType, e.message) : e instanceof Unsupported ? new Unsupported(e.message) : e instanceof LimitError ? new LimitError(e.message) : new Error(e.message);
  const span = (e as { span?: Span }).span;
  if (span) (c as { span?: Span }).span = span;
  return c;
}

function compileUncached(name: string, source: string, keepTrailingNewline: boolean, env?: LexEnv): Unit {
  const text = normalizeTemplate(source, keepTrailingNewline);
  try {
    // The parse is shared with the editor's analysis of the same text (parser.ts parseJinja).
    const parsed = parseJinja(text, env);
    if (parsed.error) throw copyError(parsed.error);
    const body = parsed.body;
    const { ann, blocks } = annotate(body, env?.filters?.length ? new Set(env.filters) : undefined);
    return { name, body, blocks, ann };
  } catch (e) {
    const err = e instanceof RangeError ? new LimitError('the template nests deeper than the parser can follow') : e;
    if (err instanceof Error) UNIT.set(err, name);
    throw err;
  }
}

// ---------------------------------------------------------------------------
// Constant folding (jinja2's optimizer): a folded inf/nan float is written as `inf` / `nan`
// into the generated Python module, which then raises NameError when it runs.
// ---------------------------------------------------------------------------

const CONTEXT_FILTERS = new Set(['map', 'select', 'reject', 'selectattr', 'rejectattr', 'random']);
const constCache = new WeakMap<Expr, boolean>();

function isConstExpr(e: Expr): boolean {
  const c = constCache.get(e);
  if (c !== undefined) return c;
  let r: boolean;
  switch (e.k) {
    case 'Const':
      r = true;
      break;
    case 'Tuple':
    case 'List':
    case 'Concat':
    case 'Dict':
    case 'Bin':
    case 'Unary':
    case 'Compare':
    case 'Getattr':
    case 'Getitem':
    case 'Slice':
      r = exprChildren(e).every(isConstExpr);
      break;
    case 'CondExpr':
      r = exprChildren(e).every(isConstExpr);
      break;
    case 'Filter':
    case 'Test':
      r = !!e.node && !CONTEXT_FILTERS.has(e.name) && (e.k === 'Filter' ? e.name in FILTERS : e.name in TESTS) && exprChildren(e).every(isConstExpr);
      break;
    default:
      r = false;
  }
  constCache.set(e, r);
  return r;
}

function hasNonFinite(v: PyValue, depth = 0): boolean {
  if (depth > 64) return false;
  if (v instanceof PyFloat) return !Number.isFinite(v.v);
  if (Array.isArray(v)) return v.some((x) => hasNonFinite(x, depth + 1));
  if (v instanceof PyTuple) return v.items.some((x) => hasNonFinite(x, depth + 1));
  if (v instanceof PyDict) return v.entries().some(([k, x]) => hasNonFinite(k, depth + 1) || hasNonFinite(x, depth + 1));
  return false;
}

/** jinja2.utils' has_safe_repr: only such constants are folded into the generated code. */
function hasSafeRepr(v: PyValue, depth = 0): boolean {
  if (depth > 64) return false;
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return true;
  if (v instanceof PyFloat || v instanceof HugeInt || v instanceof Markup || v instanceof PyRange) return true;
  if (Array.isArray(v)) return listText(v) === undefined && v.every((x) => hasSafeRepr(x, depth + 1));
  if (v instanceof PyTuple) return !v.names && v.items.every((x) => hasSafeRepr(x, depth + 1));
  if (v instanceof PyDict) return v.entries().every(([k, x]) => hasSafeRepr(k, depth + 1) && hasSafeRepr(x, depth + 1));
  return false;
}

function floatName(v: PyValue): string {
  if (v instanceof PyFloat) return Number.isNaN(v.v) ? 'nan' : 'inf';
  const items = Array.isArray(v) ? v : v instanceof PyTuple ? v.items : v instanceof PyDict ? v.entries().flat() : [];
  for (const x of items) if (hasNonFinite(x)) return floatName(x);
  return 'inf';
}

// ---------------------------------------------------------------------------
// Runtime structures: Python function locals, the jinja2 Context, output buffers
// ---------------------------------------------------------------------------

/** The locals of one generated Python function; `parent` is the enclosing function (closures). */
class Fn {
  readonly vars = new Map<string, PyValue | Missing>();
  constructor(readonly parent: Fn | null) {}
  get(ident: string): PyValue | Missing {
    for (let f: Fn | null = this; f; f = f.parent) {
      const v = f.vars.get(ident);
      if (v !== undefined) return v;
    }
    return MISSING;
  }
}

interface BlockEntry {
  node: BlockNode;
  unit: Unit;
}

/** jinja2.runtime.Context */
class Context {
  readonly vars = new Map<string, PyValue>();
  readonly exported = new Set<string>();
  constructor(
    readonly parent: Map<string, PyValue>,
    readonly blocks: Map<string, BlockEntry[]>,
  ) {}
  resolve(name: string): PyValue | Missing {
    const v = this.vars.get(name);
    if (v !== undefined) return v;
    const p = this.parent.get(name);
    return p !== undefined ? p : MISSING;
  }
  getAll(): Map<string, PyValue> {
    if (!this.vars.size) return this.parent;
    if (!this.parent.size) return this.vars;
    const m = new Map(this.parent);
    for (const [k, v] of this.vars) m.set(k, v);
    return m;
  }
}

/** The `parent_template` local of a template's root function. */
interface RootExec {
  parentUnit: Unit | null;
}

interface Ctx {
  context: Context;
  fn: Fn;
  unit: Unit;
  root: RootExec;
}

class Out {
  readonly parts: string[] = [];
  constructor(private readonly interp: Interpreter) {}
  write(s: string): void {
    if (!s) return;
    this.interp.written(s.length);
    this.parts.push(s);
  }
  text(): string {
    return this.parts.join('');
  }
}

// ---------------------------------------------------------------------------
// Runtime objects
// ---------------------------------------------------------------------------

type MacroNode = Extract<Stmt, { k: 'Macro' | 'CallBlock' }>;

class Macro extends Internal {
  readonly pyTypeName = 'Macro';
  readonly argNames: string[];
  constructor(
    readonly name: string | null,
    readonly node: MacroNode,
    readonly closure: Ctx,
  ) {
    super();
    this.argNames = node.args.map((a) => (a as Extract<Expr, { k: 'Name' }>).name);
  }
  get explicitCaller(): boolean {
    return this.argNames.includes('caller');
  }
  repr(): string {
    return `<Macro ${this.name === null ? 'anonymous' : `'${this.name}'`}>`;
  }
  override getattr(name: string): PyValue | undefined {
    if (['name', 'arguments', 'catch_kwargs', 'catch_varargs', 'caller', 'explicit_caller'].includes(name)) throw new Unsupported(`Macro.${name}`);
    return undefined;
  }
}

class LoopCtx extends Internal {
  readonly pyTypeName = 'LoopContext';
  index0 = -1;
  private lengthV: number | undefined;
  private after: PyValue | Missing = MISSING;
  private current: PyValue | Missing = MISSING;
  private before: PyValue | Missing = MISSING;
  private lastChanged: PyValue[] | Missing = MISSING;
  constructor(
    private readonly iterable: PyValue | null,
    private iterator: Iterator<PyValue>,
    readonly recurse: ((it: PyValue, depth: number) => string) | null,
    readonly depth0: number,
  ) {
    super();
  }
  length(): number {
    if (this.lengthV !== undefined) return this.lengthV;
    if (this.iterable !== null) {
      try {
        this.lengthV = pyLenOf(this.iterable);
        return this.lengthV;
      } catch (e) {
        if (!(e instanceof PyError)) throw e;
      }
    }
    const rest: PyValue[] = [];
    for (let r = this.iterator.next(); !r.done; r = this.iterator.next()) rest.push(r.value);
    this.iterator = rest[Symbol.iterator]();
    this.lengthV = rest.length + this.index0 + 1 + (this.after !== MISSING ? 1 : 0);
    return this.lengthV;
  }
  private peek(): PyValue | Missing {
    if (this.after !== MISSING) return this.after;
    const r = this.iterator.next();
    this.after = r.done ? MISSING : r.value;
    return this.after;
  }
  advance(): { done: boolean; value: PyValue } {
    let rv: PyValue;
    if (this.after !== MISSING) {
      rv = this.after;
      this.after = MISSING;
    } else {
      const r = this.iterator.next();
      if (r.done) return { done: true, value: null };
      rv = r.value;
    }
    this.index0++;
    this.before = this.current;
    this.current = rv;
    return { done: false, value: rv };
  }
  repr(): string {
    return `<LoopContext ${this.index0 + 1}/${this.length()}>`;
  }
  override getattr(name: string): PyValue | undefined {
    switch (name) {
      case 'index0':
        return this.index0;
      case 'index':
        return this.index0 + 1;
      case 'length':
        return this.length();
      case 'revindex':
        return this.length() - this.index0;
      case 'revindex0':
        return this.length() - (this.index0 + 1);
      case 'first':
        return this.index0 === 0;
      case 'last':
        return this.peek() === MISSING;
      case 'depth0':
        return this.depth0;
      case 'depth':
        return this.depth0 + 1;
      case 'previtem':
        if (this.index0 === 0) return new Undefined('there is no previous item');
        return this.before === MISSING ? new Undefined('there is no previous item') : this.before;
      case 'nextitem': {
        const n = this.peek();
        return n === MISSING ? new Undefined('there is no next item') : n;
      }
      case 'cycle':
        return new PyFunc('cycle', (a, k) => {
          if (k.size) throw typeError('cycle() got an unexpected keyword argument');
          if (!a.length) throw typeError('no items for cycling given');
          return a[this.index0 % a.length];
        });
      case 'changed':
        return new PyFunc('changed', (a, k) => {
          if (k.size) throw typeError('changed() got an unexpected keyword argument');
          const value = a.slice();
          if (this.lastChanged === MISSING || !pyEq(new PyTuple(this.lastChanged), new PyTuple(value))) {
            this.lastChanged = value;
            return true;
          }
          return false;
        });
    }
    return undefined;
  }
}

class TemplateModule extends Internal {
  readonly pyTypeName = 'TemplateModule';
  constructor(
    readonly name: string,
    readonly exported: Map<string, PyValue>,
    readonly body: string,
  ) {
    super();
  }
  repr(): string {
    throw new Unsupported('printing an imported template module');
  }
  override getattr(name: string): PyValue | undefined {
    return this.exported.get(name);
  }
}

/** jinja2.runtime.BlockReference: `super` and `self.name`. */
class BlockRef extends Internal {
  readonly pyTypeName = 'BlockReference';
  constructor(
    private readonly interp: Interpreter,
    readonly name: string,
    readonly context: Context,
    readonly stack: BlockEntry[],
    readonly depth: number,
  ) {
    super();
  }
  repr(): string {
    throw new Unsupported('printing a block reference (Python prints a memory address)');
  }
  call(): string {
    return this.interp.renderBlock(this.stack, this.depth, this.context);
  }
  override getattr(name: string): PyValue | undefined {
    if (name === 'super') {
      if (this.depth + 1 >= this.stack.length) return new Undefined(`there is no parent block called '${this.name}'.`, undefined, 'super');
      return new BlockRef(this.interp, this.name, this.context, this.stack, this.depth + 1);
    }
    return undefined;
  }
}

class TemplateRef extends Internal {
  readonly pyTypeName = 'TemplateReference';
  constructor(
    private readonly interp: Interpreter,
    private readonly context: Context,
  ) {
    super();
  }
  repr(): string {
    const name = this.interp.rootName;
    return `<TemplateReference ${name === null ? 'None' : pyStrRepr(name)}>`;
  }
  override getattr(name: string): PyValue | undefined {
    const stack = this.context.blocks.get(name);
    if (!stack) return undefined;
    return new BlockRef(this.interp, name, this.context, stack, 0);
  }
}

// ---------------------------------------------------------------------------
// The interpreter
// ---------------------------------------------------------------------------

export type Loader = (name: string) => Unit | undefined;

/** Something printed that the interpreter could not reproduce exactly (the render goes on). */
export interface RenderNote {
  message: string;
  span: Span;
  /** The template the span is in. */
  unit: string;
}

export class Interpreter implements BuiltinEnv {
  /** Prints not reproduced exactly, in the order they were written. */
  readonly notes: RenderNote[] = [];
  /**
   * Lenient mode, for analysing a template without its values: an attribute or item of an
   * undefined value is undefined too (Jinja2's ChainableUndefined) instead of an UndefinedError,
   * and the names looked up but undefined are collected in `missing`.
   */
  lenient = false;
  /**
   * Jinja2's ImmutableSandboxedEnvironment (Prompty v2) by default; false for its plain
   * Environment (Prompty 0.1.x): the mutating methods of list and dict work, range() has no MAX_RANGE.
   */
  sandboxed = true;
  /** With `sandboxed`: Jinja2's mutable SandboxedEnvironment (promptflow), where the mutating methods of list and dict work. */
  mutable = false;
  /** An environment that escapes what `{{ }}` prints (nunjucks' autoescape, for Prompty's TypeScript runtime); markup passes as it is. */
  outputEscape: ((text: string) => string) | null = null;
  readonly missing = new Set<string>();
  /** The name the caller's loader knows the main template by (`self` prints it); null for a nameless one. */
  mainName: string | null = null;
  /** The name of the template being rendered (Jinja2's context.name). */
  rootName: string | null = null;
  /** Loop variables bound to the keys of a mapping, and the mapping's name. */
  private readonly mappingLoops = new Map<string, string>();
  private steps = 0;
  private writtenChars = 0;
  private depth = 0;
  private folding = 0;
  private readonly globals: Map<string, PyValue>;
  private readonly loaded = new Map<string, Unit | null>();
  private readonly defaultModules = new Map<Unit, TemplateModule>();

  constructor(
    private readonly loader: Loader,
    private readonly limits: Limits = DEFAULT_LIMITS,
  ) {
    this.globals = makeGlobals(this);
  }

  tick(n = 1): void {
    this.steps += n;
    if (this.steps > this.limits.maxSteps) throw new LimitError(`the template takes more than ${this.limits.maxSteps} steps (loop iterations, macro calls, filter items)`);
  }

  written(n: number): void {
    this.writtenChars += n;
    if (this.writtenChars > this.limits.maxOutput * 4) throw new LimitError(`the template writes more than ${this.limits.maxOutput * 4} characters`);
  }

  private enter(): void {
    if (++this.depth > this.limits.maxDepth) throw new LimitError(`macro calls, includes or recursive loops nest deeper than ${this.limits.maxDepth}`);
  }

  private leave(): void {
    this.depth--;
  }

  // -- contexts and template functions --------------------------------------

  /** runtime.new_context */
  private newContext(unit: Unit, vars: Map<string, PyValue> | null, shared: boolean, locals: [string, PyValue | Missing][] | null): Context {
    let parent: Map<string, PyValue>;
    if (shared && vars) parent = vars;
    else {
      parent = new Map(this.globals);
      if (vars) for (const [k, v] of vars) parent.set(k, v);
    }
    if (locals && locals.length) {
      if (shared) parent = new Map(parent);
      for (const [k, v] of locals) if (v !== MISSING) parent.set(k, v as PyValue);
    }
    const blocks = new Map<string, BlockEntry[]>();
    for (const [name, node] of unit.blocks) blocks.set(name, [{ node, unit }]);
    return new Context(parent, blocks);
  }

  /** Template.render(**data) */
  render(unit: Unit, data: Map<string, PyValue>): string {
    this.rootName = unit.name.startsWith('\u0000') ? this.mainName : unit.name;
    const out = this.rootRender(unit, this.newContext(unit, data, false, null));
    if (out.length > this.limits.maxOutput) throw new LimitError(`the rendered text is longer than ${this.limits.maxOutput} characters`);
    return out;
  }

  /** A template's root_render_func, then its parent's when it extends one. */
  private rootRender(unit: Unit, context: Context): string {
    let out = '';
    let u: Unit | null = unit;
    while (u) {
      const root: RootExec = { parentUnit: null };
      const fn = new Fn(null);
      const ctx: Ctx = { context, fn, unit: u, root };
      if (u.ann.rootSelf) fn.vars.set(u.ann.rootSelf, new TemplateRef(this, context));
      this.enterFrame(u.ann.root, ctx);
      const o = new Out(this);
      this.execBody(u.body, o, ctx);
      out += o.text();
      u = root.parentUnit;
    }
    return out;
  }

  renderBlock(stack: BlockEntry[], index: number, context: Context): string {
    const entry = stack[index];
    const info = entry.unit.ann.blocks.get(entry.node.name)!;
    this.enter();
    try {
      const fn = new Fn(null);
      const ctx: Ctx = { context, fn, unit: entry.unit, root: { parentUnit: null } };
      if (info.self) fn.vars.set(info.self, new TemplateRef(this, context));
      if (info.super) {
        fn.vars.set(info.super, index + 1 < stack.length ? new BlockRef(this, entry.node.name, context, stack, index + 1) : new Undefined(`there is no parent block called '${entry.node.name}'.`, undefined, 'super'));
      }
      this.enterFrame(info.frame, ctx);
      const out = new Out(this);
      this.execBody(entry.node.body, out, ctx);
      return out.text();
    } finally {
      this.leave();
    }
  }

  private enterFrame(info: FrameInfo, ctx: Ctx): void {
    for (const [ident, load] of info) {
      switch (load.kind) {
        case 'param':
          break;
        case 'resolve':
          ctx.fn.vars.set(ident, ctx.context.resolve(load.name));
          break;
        case 'alias':
          ctx.fn.vars.set(ident, ctx.fn.get(load.target));
          break;
        case 'undefined':
          ctx.fn.vars.set(ident, MISSING);
          break;
      }
    }
  }

  private leaveFrame(info: FrameInfo, ctx: Ctx): void {
    for (const [ident] of info) ctx.fn.vars.set(ident, MISSING);
  }

  private getTemplate(nameV: PyValue): Unit | undefined {
    if (nameV instanceof Undefined) throw nameV.fail();
    const names = Array.isArray(nameV) ? nameV : nameV instanceof PyTuple ? nameV.items : [nameV];
    for (const n of names) {
      if (n instanceof Undefined) throw n.fail();
      if (typeof n !== 'string') continue;
      let u = this.loaded.get(n);
      if (u === undefined) {
        u = this.loader(n) ?? null;
        this.loaded.set(n, u);
      }
      if (u) return u;
    }
    return undefined;
  }

  private notFound(nameV: PyValue, span: Span): PyError {
    const e = new PyError(Array.isArray(nameV) || nameV instanceof PyTuple ? 'TemplatesNotFound' : 'TemplateNotFound', pyStr(nameV));
    e.span = span;
    return e;
  }

  private locals(s: Stmt, ctx: Ctx): [string, PyValue | Missing][] {
    return (ctx.unit.ann.stores.get(s) ?? []).map(([name, ident]) => [name, ctx.fn.get(ident)]);
  }

  /** Template.make_module */
  private makeModule(unit: Unit, context: Context): TemplateModule {
    this.enter();
    try {
      const body = this.rootRender(unit, context);
      const exported = new Map<string, PyValue>();
      for (const k of context.exported) {
        const v = context.vars.get(k);
        if (v !== undefined) exported.set(k, v);
      }
      return new TemplateModule(unit.name, exported, body);
    } finally {
      this.leave();
    }
  }

  private defaultModule(unit: Unit): TemplateModule {
    let m = this.defaultModules.get(unit);
    if (!m) {
      m = this.makeModule(unit, this.newContext(unit, null, false, null));
      this.defaultModules.set(unit, m);
    }
    return m;
  }

  // -- statements -----------------------------------------------------------

  private execBody(body: Stmt[], out: Out, ctx: Ctx): void {
    for (const s of body) this.exec(s, out, ctx);
  }

  private exec(s: Stmt, out: Out, ctx: Ctx): void {
    try {
      this.execInner(s, out, ctx);
    } catch (e) {
      throw located(e, s.k === 'Output' || s.k === 'Block' ? undefined : s.span, ctx.unit.name);
    }
  }

  private store(target: Expr, value: PyValue, ctx: Ctx): void {
    if (target.k === 'Name') {
      ctx.fn.vars.set(ctx.unit.ann.ident.get(target)!, value);
      return;
    }
    if (target.k === 'NSRef') {
      const ns = ctx.fn.get(ctx.unit.ann.ident.get(target)!);
      if (!(ns instanceof Namespace)) throw new PyError('TemplateRuntimeError', 'cannot assign attribute on non-namespace object');
      ns.attrs.set(target.attr, value);
      return;
    }
    if (target.k === 'Tuple') {
      const items = pyList(value, target.items.length + 1);
      if (items.length > target.items.length) throw valueError(`too many values to unpack (expected ${target.items.length})`);
      if (items.length < target.items.length) throw valueError(`not enough values to unpack (expected ${target.items.length}, got ${items.length})`);
      target.items.forEach((t, i) => this.store(t, items[i], ctx));
      return;
    }
    throw new PyError('TemplateSyntaxError', "can't assign to this target");
  }

  /** The value of an assignment target re-read (the loop filter yields the unpacked target). */
  private reread(target: Expr, ctx: Ctx): PyValue {
    if (target.k === 'Tuple') return new PyTuple(target.items.map((t) => this.reread(t, ctx)));
    const v = ctx.fn.get(ctx.unit.ann.ident.get(target)!);
    return v === MISSING ? null : (v as PyValue);
  }

  /** NSRef targets must hold a Namespace before the value is computed (visit_Assign). */
  private checkNamespaces(target: Expr, ctx: Ctx): void {
    if (target.k === 'NSRef') {
      const ns = ctx.fn.get(ctx.unit.ann.ident.get(target)!);
      if (!(ns instanceof Namespace)) throw new PyError('TemplateRuntimeError', 'cannot assign attribute on non-namespace object');
    } else if (target.k === 'Tuple') for (const t of target.items) this.checkNamespaces(t, ctx);
  }

  private toContext(s: Stmt, ctx: Ctx): void {
    const names = ctx.unit.ann.contextNames.get(s);
    if (!names) return;
    for (const name of names) {
      const ident = findIdent(s, name, ctx);
      const v = ctx.fn.get(ident);
      if (v !== MISSING) ctx.context.vars.set(name, v as PyValue);
      if (!name.startsWith('_')) ctx.context.exported.add(name);
    }
  }

  private execInner(s: Stmt, out: Out, ctx: Ctx): void {
    const ann = ctx.unit.ann;
    switch (s.k) {
      case 'Output':
        if (ann.guarded.has(s) && ctx.root.parentUnit) return;
        for (const n of s.nodes) {
          if (n.k === 'Data') out.write(n.data);
          else out.write(this.printed(n, ctx));
        }
        return;
      case 'If': {
        if (truthy(this.eval(s.test, ctx))) return this.execBody(s.body, out, ctx);
        for (const e of s.elif_) if (truthy(this.eval(e.test, ctx))) return this.execBody(e.body, out, ctx);
        return this.execBody(s.else_, out, ctx);
      }
      case 'For': {
        const info = ann.forInfo.get(s)!;
        if (s.recursive) {
          const iterable = this.eval(s.iter, ctx);
          out.write(this.loopFunction(s, ctx)(iterable, 0));
          return;
        }
        this.runFor(s, info, ctx, out, null);
        return;
      }
      case 'Assign': {
        this.checkNamespaces(s.target, ctx);
        const v = this.eval(s.node, ctx);
        this.store(s.target, v, ctx);
        this.toContext(s, ctx);
        return;
      }
      case 'AssignBlock': {
        const info = ann.inner.get(s)!;
        this.enterFrame(info, ctx);
        const inner = new Out(this);
        this.execBody(s.body, inner, ctx);
        let v: PyValue = inner.text();
        if (s.filter) v = this.eval(s.filter, ctx, v);
        this.store(s.target, v, ctx);
        this.toContext(s, ctx);
        this.leaveFrame(info, ctx);
        return;
      }
      case 'With': {
        const info = ann.inner.get(s)!;
        this.enterFrame(info, ctx);
        s.targets.forEach((t, i) => {
          const v = this.eval(s.values[i], ctx);
          this.store(t, v, ctx);
        });
        this.execBody(s.body, out, ctx);
        this.leaveFrame(info, ctx);
        return;
      }
      case 'FilterBlock': {
        const info = ann.inner.get(s)!;
        this.enterFrame(info, ctx);
        const inner = new Out(this);
        this.execBody(s.body, inner, ctx);
        out.write(this.str(this.eval(s.filter, ctx, inner.text()), s.span, ctx));
        this.leaveFrame(info, ctx);
        return;
      }
      case 'Autoescape': {
        const info = ann.inner.get(s)!;
        this.enterFrame(info, ctx);
        const v = this.eval(s.value, ctx);
        if (truthy(v)) throw new Unsupported('{% autoescape true %} (HTML escaping of the output)');
        this.execBody(s.body, out, ctx);
        this.leaveFrame(info, ctx);
        return;
      }
      case 'Macro': {
        const info = ann.macroInfo.get(s)!;
        const m = new Macro(s.name, s, ctx);
        ctx.fn.vars.set(info.target!, m);
        if (info.toplevel) {
          if (!s.name.startsWith('_')) ctx.context.exported.add(s.name);
          ctx.context.vars.set(s.name, m);
        }
        return;
      }
      case 'CallBlock': {
        const caller = new Macro(null, s, ctx);
        const call = s.call as Extract<Expr, { k: 'Call' }>;
        const v = this.evalCall(call, ctx, caller);
        out.write(this.str(v, s.span, ctx));
        return;
      }
      case 'Block': {
        if (ann.skipped.has(s)) return;
        if (ann.toplevel.has(s) && ctx.root.parentUnit) return;
        const stack = ctx.context.blocks.get(s.name)!;
        let context = ctx.context;
        if (s.scoped) context = this.derived(ctx.context, this.locals(s, ctx));
        if (s.required && stack.length <= 1) throw new PyError('TemplateRuntimeError', `Required block '${s.name}' not found`);
        out.write(this.renderBlock(context === ctx.context ? stack : context.blocks.get(s.name)!, 0, context));
        return;
      }
      case 'Extends': {
        if (ctx.root.parentUnit) throw new PyError('TemplateRuntimeError', 'extended multiple times');
        const nameV = this.eval(s.template, ctx);
        const unit = this.getTemplate(nameV);
        if (!unit) throw this.notFound(nameV, s.template.span);
        for (const [name, node] of unit.blocks) {
          const list = ctx.context.blocks.get(name) ?? [];
          list.push({ node, unit });
          ctx.context.blocks.set(name, list);
        }
        ctx.root.parentUnit = unit;
        return;
      }
      case 'Include': {
        const nameV = this.eval(s.template, ctx);
        const unit = this.getTemplate(nameV);
        if (!unit) {
          if (s.ignoreMissing) return;
          throw this.notFound(nameV, s.template.span);
        }
        this.enter();
        try {
          if (s.withContext) out.write(this.rootRender(unit, this.newContext(unit, ctx.context.getAll(), true, this.locals(s, ctx))));
          else out.write(this.defaultModule(unit).body);
        } finally {
          this.leave();
        }
        return;
      }
      case 'Import':
      case 'FromImport': {
        const info = ann.macroInfo.get(s)!;
        const nameV = this.eval(s.template, ctx);
        const unit = this.getTemplate(nameV);
        if (!unit) throw this.notFound(nameV, s.template.span);
        const module = s.withContext ? this.makeModule(unit, this.newContext(unit, ctx.context.getAll(), true, this.locals(s, ctx))) : this.defaultModule(unit);
        if (s.k === 'Import') {
          ctx.fn.vars.set(info.args[0], module);
          if (info.toplevel) {
            ctx.context.vars.set(s.target, module);
            ctx.context.exported.delete(s.target);
          }
          return;
        }
        s.names.forEach(([name, alias], i) => {
          const v = module.exported.get(name);
          const value = v !== undefined ? v : new Undefined(`the template '${unit.name}' does not export the requested name '${name}'`, undefined, name);
          ctx.fn.vars.set(info.args[i], value);
          if (info.toplevel) {
            ctx.context.vars.set(alias, value);
            ctx.context.exported.delete(alias);
          }
        });
        return;
      }
    }
  }

  /** Context.derived */
  private derived(context: Context, locals: [string, PyValue | Missing][]): Context {
    let parent = new Map(context.getAll());
    for (const [k, v] of locals) if (v !== MISSING) parent.set(k, v as PyValue);
    parent = new Map(parent);
    const c = new Context(parent, new Map());
    for (const [k, v] of context.blocks) c.blocks.set(k, v.slice());
    return c;
  }

  private loopFunction(s: ForNode, ctx: Ctx): (it: PyValue, depth: number) => string {
    const info = ctx.unit.ann.forInfo.get(s)!;
    const fnParent = ctx.fn;
    const self = (it: PyValue, depth: number): string => {
      this.enter();
      try {
        const inner: Ctx = { ...ctx, fn: new Fn(fnParent) };
        const o = new Out(this);
        this.runFor(s, info, inner, o, { iterable: it, depth, recurse: self });
        return o.text();
      } finally {
        this.leave();
      }
    };
    return self;
  }

  private runFor(
    s: ForNode,
    info: NonNullable<ReturnType<Annotations['forInfo']['get']>>,
    ctx: Ctx,
    out: Out,
    rec: { iterable: PyValue; depth: number; recurse: (it: PyValue, depth: number) => string } | null,
  ): void {
    if (info.loopIdent) ctx.fn.vars.set(info.loopIdent, MISSING);
    const iterable = rec ? rec.iterable : this.eval(s.iter, ctx);
    // Remembered to explain a print of the loop variable's methods (iterating a mapping yields its keys).
    if (iterable instanceof PyDict && s.target.k === 'Name') {
      const from = dotted(s.iter);
      if (from) this.mappingLoops.set(s.target.name, from);
    }
    let iterator = pyIterate(iterable);
    let lenSource: PyValue | null = iterable;
    if (s.test && info.test) {
      const base = iterator;
      const test = s.test;
      const testInfo = info.test;
      const tctx: Ctx = { ...ctx, fn: new Fn(ctx.fn) };
      let started = false;
      lenSource = null;
      iterator = {
        next: () => {
          if (!started) {
            started = true;
            this.enterFrame(testInfo, tctx);
          }
          for (;;) {
            const r = base.next();
            if (r.done) return r;
            this.tick();
            this.store(s.target, r.value, tctx);
            if (truthy(this.eval(test, tctx))) return { done: false, value: this.reread(s.target, tctx) };
          }
        },
      };
    }
    const loop = new LoopCtx(lenSource, iterator, rec ? rec.recurse : null, rec ? rec.depth : 0);
    let any = false;
    for (;;) {
      const r = loop.advance();
      if (r.done) break;
      any = true;
      this.tick();
      this.store(s.target, r.value, ctx);
      if (info.loopIdent) ctx.fn.vars.set(info.loopIdent, loop);
      this.enterFrame(info.body, ctx);
      this.execBody(s.body, out, ctx);
    }
    if (!info.pythonScope) this.leaveFrame(info.body, ctx);
    if (!any && info.else_) {
      this.enterFrame(info.else_, ctx);
      this.execBody(s.else_, out, ctx);
      this.leaveFrame(info.else_, ctx);
    }
  }

  private callMacro(m: Macro, args: Args, kwargsIn: Kwargs): string {
    this.tick();
    const def = m.closure;
    const info = def.unit.ann.macroInfo.get(m.node)!;
    const kwargs = new Map(kwargsIn);
    const n = m.argNames.length;
    const values: (PyValue | Missing)[] = args.slice(0, n);
    let foundCaller = false;
    if (values.length !== n) {
      for (const name of m.argNames.slice(values.length)) {
        let v: PyValue | Missing = MISSING;
        if (kwargs.has(name)) {
          v = kwargs.get(name)!;
          kwargs.delete(name);
        }
        if (name === 'caller') foundCaller = true;
        values.push(v);
      }
    } else foundCaller = m.explicitCaller;
    let callerV: PyValue | undefined;
    if (info.caller && !foundCaller) {
      const c = kwargs.get('caller');
      kwargs.delete('caller');
      callerV = c === undefined || c === null ? new Undefined('No caller defined', undefined, 'caller') : c;
    }
    let kwDict: PyDict | undefined;
    if (info.kwargs) {
      kwDict = new PyDict();
      for (const [k, v] of kwargs) kwDict.set(k, v);
    } else if (kwargs.size) {
      if (kwargs.has('caller')) throw typeError(`macro '${m.name}' was invoked with two values for the special caller argument. This is most likely a bug.`);
      throw typeError(`macro '${m.name}' takes no keyword argument '${[...kwargs.keys()][0]}'`);
    }
    let varargs: PyTuple | undefined;
    if (info.varargs) varargs = new PyTuple(args.slice(n));
    else if (args.length > n) throw typeError(`macro '${m.name}' takes not more than ${n} argument(s)`);
    this.enter();
    try {
      const fn = new Fn(def.fn);
      const ctx: Ctx = { ...def, fn };
      info.args.forEach((ident, i) => fn.vars.set(ident, values[i]));
      if (info.caller) fn.vars.set(info.caller, callerV ?? MISSING);
      if (info.kwargs) fn.vars.set(info.kwargs, kwDict!);
      if (info.varargs) fn.vars.set(info.varargs, varargs!);
      this.enterFrame(info.frame, ctx);
      const firstDefault = n - m.node.defaults.length;
      info.args.forEach((ident, i) => {
        if (fn.vars.get(ident) !== MISSING) return;
        const name = m.argNames[i];
        if (i >= firstDefault) fn.vars.set(ident, this.eval(m.node.defaults[i - firstDefault], ctx));
        else fn.vars.set(ident, new Undefined(`parameter '${name}' was not provided`, undefined, name));
      });
      const out = new Out(this);
      this.execBody(m.node.body, out, ctx);
      return out.text();
    } finally {
      this.leave();
    }
  }

  // -- expressions ----------------------------------------------------------

  /**
   * One `{{ … }}` as printed. A value Python prints with a memory address is written with
   * `0xADDR` and noted; a value whose printing is not reproduced becomes a visible placeholder
   * and a note, so one such expression never costs the rest of the request.
   */
  private printed(n: Expr, ctx: Ctx): string {
    try {
      const v = this.eval(n, ctx, undefined, true);
      if (this.lenient && v instanceof Undefined && !v.hasObj && typeof v.name === 'string') this.missing.add(v.name);
      const text = this.str(v, n.span, ctx);
      if (text.includes(' at 0xADDR>')) this.notes.push({ message: this.addressCause(n, v), span: n.span, unit: ctx.unit.name });
      return this.outputEscape && !(v instanceof Markup) ? this.outputEscape(text) : text;
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      this.notes.push({ message: e.message, span: n.span, unit: ctx.unit.name });
      return `[not reproduced: ${e.message}]`;
    }
  }

  /** Why a print holds a memory address, worded as the cause. */
  private addressCause(n: Expr, v: PyValue): string {
    if (n.k === 'Getattr' && v instanceof PyFunc) {
      const owner = dotted(n.node);
      if (owner) {
        const loop = n.node.k === 'Name' ? this.mappingLoops.get(n.node.name) : undefined;
        const why = loop ? `\`${loop}\` is a mapping, so iterating it yields its keys: \`${owner}\` is a key (a string), and ` : '';
        return `${why}\`${owner}.${n.attr}\` is a method of the value, which Python prints with its memory address (shown as 0xADDR)`;
      }
    }
    return 'Python prints a memory address here (a method, generator or iterator object); it is shown as 0xADDR';
  }

  private str(v: PyValue, span: Span, ctx: Ctx): string {
    try {
      return pyStr(v);
    } catch (e) {
      throw located(e, span, ctx.unit.name);
    }
  }

  eval(e: Expr, ctx: Ctx, hole?: PyValue, outputChild = false): PyValue {
    try {
      if (this.folding === 0 && isConstExpr(e)) return this.evalFolded(e, ctx, outputChild);
      return this.evalInner(e, ctx, hole);
    } catch (err) {
      if (err instanceof RangeError) throw located(new LimitError('expressions nest deeper than the interpreter can follow'), e.span, ctx.unit.name);
      throw located(err, e.span, ctx.unit.name);
    }
  }

  /**
   * A constant expression: jinja2 folds it at compile time. Printed directly ({{ … }}) its str() is
   * template data; elsewhere its repr() is written into the generated Python code, where a float
   * inf / nan becomes the unknown name `inf` / `nan` (NameError when it runs). When folding fails
   * (the expression raises), its constant children are folded instead.
   */
  private evalFolded(e: Expr, ctx: Ctx, outputChild: boolean): PyValue {
    let v: PyValue = null;
    let failed = false;
    this.folding++;
    try {
      v = this.evalInner(e, ctx);
    } catch (x) {
      if (!(x instanceof PyError)) throw x;
      failed = true;
    } finally {
      this.folding--;
    }
    // a printed constant is str()-ed at compile time whatever it is; elsewhere only safe reprs are folded
    if (!failed && (outputChild || hasSafeRepr(v))) {
      if (!outputChild && hasNonFinite(v)) throw new PyError('NameError', `name '${floatName(v)}' is not defined`);
      return v;
    }
    // not folded: the expression runs, its constant children are folded on their own
    return this.evalInner(e, ctx);
  }

  private evalInner(e: Expr, ctx: Ctx, hole?: PyValue): PyValue {
    switch (e.k) {
      case 'Const':
        if (typeof e.value === 'number' && e.float) return new PyFloat(e.value);
        if (typeof e.value === 'bigint') return new HugeInt(e.value);
        return e.value;
      case 'Name': {
        const ident = ctx.unit.ann.ident.get(e);
        const v = ident === undefined ? MISSING : ctx.fn.get(ident);
        return v === MISSING ? new Undefined(undefined, undefined, e.name) : (v as PyValue);
      }
      case 'Tuple':
        return new PyTuple(e.items.map((x) => this.eval(x, ctx)));
      case 'List':
        return e.items.map((x) => this.eval(x, ctx));
      case 'Dict': {
        const d = new PyDict();
        for (const it of e.items) {
          const k = this.eval(it.key, ctx);
          const v = this.eval(it.value, ctx);
          d.set(k, v);
        }
        return d;
      }
      case 'CondExpr':
        if (truthy(this.eval(e.test, ctx))) return this.eval(e.expr1, ctx);
        if (e.expr2) return this.eval(e.expr2, ctx);
        return new Undefined('the inline if-expression evaluated to false and no else section was defined.');
      case 'Bin': {
        if (e.op === 'and') {
          const l = this.eval(e.left, ctx);
          return truthy(l) ? this.eval(e.right, ctx) : l;
        }
        if (e.op === 'or') {
          const l = this.eval(e.left, ctx);
          return truthy(l) ? l : this.eval(e.right, ctx);
        }
        const l = this.eval(e.left, ctx);
        const r = this.eval(e.right, ctx);
        switch (e.op) {
          case 'add':
            return add(l, r);
          case 'sub':
            return sub(l, r);
          case 'mul':
            return mul(l, r);
          case 'div':
            return truediv(l, r);
          case 'floordiv':
            return floordiv(l, r);
          case 'mod':
            return mod(l, r);
          case 'pow':
            return pow(l, r);
        }
        throw new Error('unreachable');
      }
      case 'Unary': {
        const v = this.eval(e.node, ctx);
        if (e.op === 'not') return !truthy(v);
        return e.op === 'neg' ? neg(v) : pos(v);
      }
      case 'Compare': {
        let left = this.eval(e.expr, ctx);
        for (const o of e.ops) {
          const right = this.eval(o.expr, ctx);
          if (!compare(o.op, left, right)) return false;
          left = right;
        }
        return true;
      }
      case 'Concat': {
        let s = '';
        for (const n of e.nodes) s += pyStr(this.eval(n, ctx));
        if (s.length > this.limits.maxOutput) throw new LimitError(`a string longer than ${this.limits.maxOutput} characters`);
        return s;
      }
      case 'Getattr':
        return this.getattr(this.eval(e.node, ctx), e.attr);
      case 'Getitem': {
        const obj = this.eval(e.node, ctx);
        const key = this.eval(e.arg, ctx);
        // slices bypass the environment's getitem (compiler.visit_Getitem), but not when folded
        if (e.arg.k === 'Slice' && this.folding === 0) return directSlice(obj, key as unknown as PySlice);
        return this.getitem(obj, key);
      }
      case 'Slice':
        return new PySlice(e.start ? this.eval(e.start, ctx) : null, e.stop ? this.eval(e.stop, ctx) : null, e.step ? this.eval(e.step, ctx) : null) as unknown as PyValue;
      case 'Call':
        return this.evalCall(e, ctx);
      case 'Filter': {
        const value = e.node ? this.eval(e.node, ctx, hole) : (hole as PyValue);
        // Lenient mode: a missing value a filter reads is missing too (`items|first`), unless the filter gives one instead.
        if (this.lenient && value instanceof Undefined && value.kind === 'undefined' && e.name !== 'default' && e.name !== 'd') this.chained(value);
        const [args, kwargs] = this.evalArgs(e, ctx);
        return this.callFilter(e.name, value, args, kwargs);
      }
      case 'Test': {
        const value = this.eval(e.node, ctx);
        const [args, kwargs] = this.evalArgs(e, ctx);
        return this.callTest(e.name, value, args, kwargs);
      }
      case 'NSRef':
        throw new PyError('TemplateSyntaxError', 'namespace reference outside an assignment');
    }
  }

  private evalArgs(e: { args: Expr[]; kwargs: { key: string; value: Expr }[]; dynArgs: Expr | null; dynKwargs: Expr | null }, ctx: Ctx): [Args, Kwargs] {
    const args: Args = e.args.map((a) => this.eval(a, ctx));
    const kwargs: Kwargs = new Map();
    for (const kw of e.kwargs) kwargs.set(kw.key, this.eval(kw.value, ctx));
    if (e.dynArgs) {
      const v = this.eval(e.dynArgs, ctx);
      if (v instanceof Undefined) throw v.fail();
      args.push(...pyList(v));
    }
    if (e.dynKwargs) {
      const v = this.eval(e.dynKwargs, ctx);
      if (!(v instanceof PyDict)) {
        if (v instanceof Undefined) throw v.fail();
        throw typeError(`argument after ** must be a mapping, not ${typeName(v)}`);
      }
      for (const [k, x] of v.entries()) {
        if (!isStr(k)) throw typeError('keywords must be strings');
        const key = strOf(k);
        if (kwargs.has(key)) throw typeError(`got multiple values for keyword argument '${key}'`);
        kwargs.set(key, x);
      }
    }
    return [args, kwargs];
  }

  private evalCall(e: Extract<Expr, { k: 'Call' }>, ctx: Ctx, caller?: Macro): PyValue {
    const fn = this.eval(e.node, ctx);
    const [args, kwargs] = this.evalArgs(e, ctx);
    if (caller) {
      if (kwargs.has('caller')) throw typeError("got multiple values for keyword argument 'caller'");
      kwargs.set('caller', caller);
    }
    return this.call(fn, args, kwargs);
  }

  call(fn: PyValue, args: Args, kwargs: Kwargs): PyValue {
    if (fn instanceof PyFunc) return fn.fn(args, kwargs);
    if (fn instanceof Macro) return this.callMacro(fn, args, kwargs);
    if (fn instanceof LoopCtx) {
      if (!fn.recurse) throw typeError("The loop must have the 'recursive' marker to be called recursively.");
      if (args.length !== 1 || kwargs.size) throw typeError('__call__() takes 2 positional arguments');
      return fn.recurse(args[0], fn.depth0 + 1);
    }
    if (fn instanceof BlockRef) {
      if (args.length || kwargs.size) throw typeError('__call__() takes 1 positional argument');
      return fn.call();
    }
    if (fn instanceof Joiner) return callJoiner(fn, args, kwargs);
    if (fn instanceof Undefined) throw fn.fail();
    throw typeError(`'${typeName(fn)}' object is not callable`);
  }

  /** Filters the application registers in code: each call gives back the value it filters (a placeholder), and is noted. */
  readonly codeFilters = new Set<string>();
  readonly codeFilterCalls = new Set<string>();

  callFilter(name: string, value: PyValue, args: Args, kwargs: Kwargs): PyValue {
    const f = Object.prototype.hasOwnProperty.call(FILTERS, name) ? FILTERS[name] : undefined;
    if (!f && this.codeFilters.has(name)) {
      this.codeFilterCalls.add(name);
      return value;
    }
    if (!f) throw new PyError('TemplateRuntimeError', `No filter named '${name}' found.`);
    return f(this, value, args, kwargs);
  }

  callTest(name: string, value: PyValue, args: Args, kwargs: Kwargs): boolean {
    const t = Object.prototype.hasOwnProperty.call(TESTS, name) ? TESTS[name] : undefined;
    if (!t) throw new PyError('TemplateRuntimeError', `No test named '${name}' found.`);
    return t(this, value, args, kwargs);
  }

  getattr(obj: PyValue, name: string): PyValue {
    if (this.lenient && obj instanceof Undefined && obj.kind === 'undefined') return this.chained(obj);
    this.privateAttr(obj, name);
    const r = lookupAttr(this, obj, name);
    if (r !== MISSING) return name.startsWith('_') ? unsafeUndefined(obj, name) : r;
    const it = lookupItem(obj, name);
    if (it !== MISSING) return it;
    return new Undefined(undefined, obj, name, 'undefined', true);
  }

  /**
   * Without the sandbox (Prompty 0.1.x) `_name` reaches the Python object itself: Jinja2's own
   * objects (loop, macros, cycler, joiner, namespace, modules) and functions have private
   * attributes this engine does not model. (str, int, float, list, tuple, dict and None have none.)
   */
  private privateAttr(obj: PyValue, name: string): void {
    if (this.sandboxed || !name.startsWith('_')) return;
    if (obj instanceof Internal || obj instanceof Cycler || obj instanceof Joiner || obj instanceof Namespace || obj instanceof PyFunc || obj instanceof PyIter || obj instanceof PyObj) throw new Unsupported(`the private attribute '${name}' of a ${typeName(obj)} object (Prompty 0.1.x renders without Jinja2's sandbox, so Python's own attribute is read)`);
  }

  /** Lenient mode: the root name of an undefined chain is noted as missing, and the chain stays undefined. */
  private chained(u: Undefined): Undefined {
    if (!u.hasObj && typeof u.name === 'string') this.missing.add(u.name);
    return u;
  }

  getitem(obj: PyValue, key: PyValue): PyValue {
    if (this.lenient && obj instanceof Undefined && obj.kind === 'undefined') return this.chained(obj);
    const it = lookupItem(obj, key);
    if (it !== MISSING) return it;
    if (isStr(key)) {
      const name = strOf(key);
      this.privateAttr(obj, name);
      const r = lookupAttr(this, obj, name);
      if (r !== MISSING) return name.startsWith('_') ? unsafeUndefined(obj, name) : r;
    }
    return new Undefined(undefined, obj, key, 'undefined', true);
  }
}

/** The ident a top-level assignment stored `name` in (its target's Name node). */
function findIdent(s: Stmt, name: string, ctx: Ctx): string {
  const target = s.k === 'Assign' || s.k === 'AssignBlock' ? s.target : null;
  const find = (e: Expr | null): string | undefined => {
    if (!e) return undefined;
    if (e.k === 'Name' && e.name === name) return ctx.unit.ann.ident.get(e);
    if (e.k === 'Tuple') for (const x of e.items) {
      const r = find(x);
      if (r) return r;
    }
    return undefined;
  };
  return find(target) ?? `l_0_${name}`;
}

function unsafeUndefined(obj: PyValue, name: string): Undefined {
  return new Undefined(`access to attribute '${name}' of '${typeName(obj)}' object is unsafe.`, obj, name, 'security', true);
}

/** Give an error the span of the innermost node of the current template that saw it. */
function located(e: unknown, span: Span | undefined, unit: string): unknown {
  if (span && (e instanceof PyError || e instanceof Unsupported || e instanceof LimitError)) {
    if (!e.span || (UNIT.has(e) && UNIT.get(e) !== unit)) {
      e.span = span;
      UNIT.set(e, unit);
    } else if (!UNIT.has(e)) UNIT.set(e, unit);
  }
  return e;
}

/** `a`, `a.b.c` of an expression made of names and attributes, else undefined. */
function dotted(e: Expr): string | undefined {
  if (e.k === 'Name') return e.name;
  if (e.k === 'Getattr') {
    const base = dotted(e.node);
    return base === undefined ? undefined : `${base}.${e.attr}`;
  }
  return undefined;
}
