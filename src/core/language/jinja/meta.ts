/**
 * What a Jinja template reads from its context, from the engine's own tree: jinja2's
 * `meta.find_undeclared_variables` (every name a frame resolves from the context, less the
 * environment's globals), and where each of those names is loaded, with the form of the use (a
 * loop's iterable, an `if` test, or printed/used otherwise). The slot uses of a `.prompty` body
 * come from here, so the linter and the renderer can never disagree on which slots a template
 * uses.
 */
import type { Span } from '../../types';
import type { Expr, Stmt } from './parser';
import type { FrameInfo } from './symbols';
import type { Unit } from './interpreter';
import { annotate, exprChildren, stmtChildren } from './symbols';

/** The globals of Prompty's Jinja environment (jinja2's DEFAULT_NAMESPACE); never context variables. */
const GLOBALS = new Set(['range', 'dict', 'lipsum', 'cycler', 'joiner', 'namespace']);

type Node = Expr | Stmt | { k: 'Data'; span: Span; data: string };

function isStmtNode(n: Node): n is Stmt {
  return 'body' in n || n.k === 'Output' || n.k === 'Extends' || n.k === 'Include' || n.k === 'Import' || n.k === 'FromImport' || n.k === 'Assign';
}

function childrenOf(n: Node): Node[] {
  if (n.k === 'Data') return [];
  return (isStmtNode(n) ? stmtChildren(n as Stmt) : exprChildren(n as Expr)) as Node[];
}

/** jinja2.meta.find_undeclared_variables over a compiled unit: the resolve loads of every frame. */
export function undeclaredVariables(unit: Pick<Unit, 'body' | 'ann'>): Set<string> {
  const out = new Set<string>();
  const take = (frame: FrameInfo | undefined) => {
    for (const [, load] of frame ?? []) if (load.kind === 'resolve' && !GLOBALS.has(load.name)) out.add(load.name);
  };
  take(unit.ann.root);
  for (const info of unit.ann.blocks.values()) take(info.frame);
  const visit = (n: Node) => {
    if (isStmtNode(n)) {
      take(unit.ann.inner.get(n));
      const f = unit.ann.forInfo.get(n);
      if (f) {
        take(f.body);
        take(f.else_);
        take(f.test);
      }
      take(unit.ann.macroInfo.get(n)?.frame);
    }
    for (const c of childrenOf(n)) visit(c);
  };
  for (const s of unit.body) visit(s);
  return out;
}

/**
 * The undeclared variables of a tree jinja2's compiler refuses (a template with syntax errors, read
 * by the recovering parse): its own analysis when it runs on the tree, else every name loaded that
 * is no global and that no `set`, macro or import of the template defines (loop targets and
 * other bindings are left to the walk in variableUses).
 */
export function undeclaredOf(body: Stmt[]): Set<string> {
  try {
    return undeclaredVariables({ body, ann: annotate(body).ann });
  } catch {
    const loads = new Set<string>();
    const defined = new Set<string>();
    const visit = (n: Node): void => {
      if (n.k === 'Name') {
        if (n.ctx === 'load' && !GLOBALS.has(n.name)) loads.add(n.name);
        return;
      }
      if (n.k === 'Assign' || n.k === 'AssignBlock') for (const t of targets(n.target)) defined.add(t);
      else if (n.k === 'Macro') defined.add(n.name);
      else if (n.k === 'Import') defined.add(n.target);
      else if (n.k === 'FromImport') for (const [, as] of n.names) defined.add(as);
      for (const c of childrenOf(n)) visit(c);
    };
    for (const s of body) visit(s);
    for (const d of defined) loads.delete(d);
    return loads;
  }
}

/** One load of a context variable in the tree. */
export interface VariableUse {
  name: string;
  /** The name, with the attribute and constant-subscript chain read from it (`customer.firstName`), in template-body offsets. */
  span: Span;
  /** `each`: the iterable of a for loop; `if`: inside an if test; `var`: anything else. */
  form: 'var' | 'each' | 'if';
}

/** Where each of `names` (a template's undeclared variables) is loaded in the tree, in source order of the walk. */
export function variableUses(body: Stmt[], names: ReadonlySet<string>): VariableUse[] {
  const uses: VariableUse[] = [];
  // Loads are found by walking the tree; a name is a context variable at a load only where no
  // enclosing construct binds it (a loop target, a macro argument, a set, a with).
  const walk = (n: Node, bound: ReadonlySet<string>, form: VariableUse['form']): void => {
    switch (n.k) {
      case 'Name':
        if (n.ctx === 'load' && names.has(n.name) && !bound.has(n.name)) uses.push({ name: n.name, span: n.span, form });
        return;
      case 'Getattr':
      case 'Getitem': {
        // `customer.firstName` / `doc["title"]`: the use spans the chain from its root name.
        let root: Expr = n;
        while (root.k === 'Getattr' || (root.k === 'Getitem' && root.arg.k === 'Const')) root = root.node;
        if (root.k === 'Name' && root.ctx === 'load' && names.has(root.name) && !bound.has(root.name)) {
          uses.push({ name: root.name, span: { start: root.span.start, end: n.span.end }, form });
          if (n.k === 'Getitem') walkDeep(n, bound, form, root);
          return;
        }
        break;
      }
      case 'Call': {
        // `meta.items()` reads `meta`: a method name is not part of the value's path.
        const callee = n.node;
        if (callee.k === 'Getattr') walk(callee.node, bound, form);
        else walk(callee, bound, form);
        for (const a of n.args) walk(a, bound, form);
        for (const kw of n.kwargs) walk(kw.value, bound, form);
        if (n.dynArgs) walk(n.dynArgs, bound, form);
        if (n.dynKwargs) walk(n.dynKwargs, bound, form);
        return;
      }
      case 'For': {
        walk(n.iter, bound, 'each');
        const inner = new Set(bound);
        for (const t of targets(n.target)) inner.add(t);
        inner.add('loop');
        if (n.test) walk(n.test, inner, 'if');
        for (const s of n.body) walk(s, inner, form);
        for (const s of n.else_) walk(s, bound, form);
        return;
      }
      case 'If':
        walk(n.test, bound, 'if');
        for (const s of n.body) walk(s, bound, form);
        for (const e of n.elif_) walk(e, bound, form);
        for (const s of n.else_) walk(s, bound, form);
        return;
      case 'CondExpr':
        walk(n.test, bound, 'if');
        walk(n.expr1, bound, form);
        if (n.expr2) walk(n.expr2, bound, form);
        return;
      case 'Macro':
      case 'CallBlock': {
        const inner = new Set(bound);
        for (const a of n.args) for (const t of targets(a)) inner.add(t);
        for (const extra of ['caller', 'varargs', 'kwargs']) inner.add(extra);
        if (n.k === 'CallBlock') walk(n.call, bound, form);
        for (const d of n.defaults) walk(d, bound, form);
        for (const s of n.body) walk(s, inner, form);
        return;
      }
      case 'With': {
        for (const v of n.values) walk(v, bound, form);
        const inner = new Set(bound);
        for (const t of n.targets) for (const x of targets(t)) inner.add(x);
        for (const s of n.body) walk(s, inner, form);
        return;
      }
      default:
        break;
    }
    for (const c of childrenOf(n)) walk(c, bound, form);
  };
  // Subscripts inside a chain (`d[key]`) may read variables too.
  const walkDeep = (n: Expr, bound: ReadonlySet<string>, form: VariableUse['form'], root: Expr) => {
    let cur: Expr = n;
    while (cur !== root && (cur.k === 'Getattr' || cur.k === 'Getitem')) {
      if (cur.k === 'Getitem' && cur.arg.k !== 'Const') walk(cur.arg, bound, form);
      cur = cur.node;
    }
  };
  for (const s of body) walk(s, new Set(), 'var');
  return uses;
}

/** Names a store target binds (`d`, `k, v`). */
function targets(e: Expr): string[] {
  if (e.k === 'Name') return [e.name];
  if (e.k === 'Tuple') return e.items.flatMap(targets);
  return [];
}
