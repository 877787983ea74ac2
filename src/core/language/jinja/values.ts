/**
 * The Python value model of the Jinja interpreter. Python's types map to:
 *
 *   None → null, bool → boolean, int → number (a JS safe integer, always integral), float → PyFloat,
 *   str → string, Markup → Markup, list → JS array, tuple → PyTuple, dict → PyDict, Undefined → Undefined,
 *   an object with `__str__` (isStringable) → PyObj, generators / iterators → PyIter, range → PyRange.
 *
 * Everything here follows CPython 3.11 + Jinja2 3.1 (sandbox: ImmutableSandboxedEnvironment). What
 * cannot be made identical throws Unsupported; what Python would raise throws PyError.
 */
import type { Span } from '../../types';
import { isStringable } from '../engineTypes';
import { floatRepr } from './pynum';
import { codePoints, pyLen, pyStrCompare, pyStrRepr } from './pystr';

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/** An exception Python / Jinja2 would raise: the template is refused (`template-invalid`). */
export class PyError extends Error {
  span?: Span;
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
  }
}

/** Something the runtime would render but this engine cannot render identically (`unsupported-feature`). */
export class Unsupported extends Error {
  span?: Span;
}

/** A bound on the work was exceeded (reported as `unsupported-feature`). */
export class LimitError extends Error {
  span?: Span;
}

export const typeError = (m: string): PyError => new PyError('TypeError', m);
export const valueError = (m: string): PyError => new PyError('ValueError', m);

// ---------------------------------------------------------------------------
// Value classes
// ---------------------------------------------------------------------------

export class PyFloat {
  constructor(readonly v: number) {}
}

export class Markup {
  constructor(readonly s: string) {}
}

export class PyTuple {
  constructor(
    readonly items: PyValue[],
    /** Field names of a named tuple (groupby's `_GroupTuple`). */
    readonly names?: readonly string[],
  ) {}
}

export class PyDict {
  private readonly map = new Map<string, [PyValue, PyValue]>();
  get size(): number {
    return this.map.size;
  }
  get(key: PyValue): PyValue | undefined {
    return this.map.get(hashKey(key))?.[1];
  }
  has(key: PyValue): boolean {
    return this.map.has(hashKey(key));
  }
  set(key: PyValue, value: PyValue): void {
    const h = hashKey(key);
    const cur = this.map.get(h);
    if (cur) cur[1] = value;
    else this.map.set(h, [key, value]);
  }
  keys(): PyValue[] {
    return [...this.map.values()].map((e) => e[0]);
  }
  values(): PyValue[] {
    return [...this.map.values()].map((e) => e[1]);
  }
  entries(): [PyValue, PyValue][] {
    return [...this.map.values()].map((e) => [e[0], e[1]]);
  }
  delete(key: PyValue): boolean {
    return this.map.delete(hashKey(key));
  }
  clear(): void {
    this.map.clear();
  }
}

/**
 * Lists and dicts the render has iterated. Iteration here works on a copy, where Python's list
 * iterator and dict iteration see later changes (or raise): a mutating method (only Prompty
 * 0.1.x renders without the sandbox) refuses a container marked here instead of differing.
 */
const ITERATED = new WeakSet<object>();

export function markIterated(v: PyValue): void {
  if (Array.isArray(v) || v instanceof PyDict) ITERATED.add(v);
  else if (v instanceof DictView) ITERATED.add(v.dict);
}

export function wasIterated(v: PyValue[] | PyDict): boolean {
  return ITERATED.has(v);
}

export type UndefinedKind = 'undefined' | 'security';

export class Undefined {
  constructor(
    readonly hint?: string,
    readonly obj?: PyValue,
    readonly name?: PyValue,
    readonly kind: UndefinedKind = 'undefined',
    readonly hasObj = false,
  ) {}
  message(): string {
    if (this.hint) return this.hint;
    if (!this.hasObj) return `${typeof this.name === 'string' ? pyStrRepr(this.name) : reprSafe(this.name)} is undefined`;
    if (typeof this.name !== 'string') return `${typeName(this.obj ?? null)} object has no element ${reprSafe(this.name)}`;
    return `${pyStrRepr(typeName(this.obj ?? null) + ' object')} has no attribute ${pyStrRepr(this.name)}`;
  }
  fail(): PyError {
    return new PyError(this.kind === 'security' ? 'SecurityError' : 'UndefinedError', this.message());
  }
}

function reprSafe(v: PyValue | undefined): string {
  try {
    return v === undefined ? 'None' : pyRepr(v);
  } catch {
    return '?';
  }
}

/**
 * jinja2's StrictUndefined, for the render that sets it (`withStrictUndefined`): printing, testing,
 * iterating, measuring or comparing an undefined value raises UndefinedError (`is defined` and the
 * `default` filter still see it). Renders are synchronous, so the setting is the render's own.
 */
let strictUndefined = false;

export function withStrictUndefined<T>(on: boolean, f: () => T): T {
  const before = strictUndefined;
  strictUndefined = on;
  try {
    return f();
  } finally {
    strictUndefined = before;
  }
}

function strictFail<T>(v: Undefined, value: T): T {
  if (strictUndefined) throw v.fail();
  return value;
}

/** An object that prints as `text` and whose fields are its attributes and items (Python: `__str__` + `__getattr__`/`__getitem__`). */
export class PyObj {
  constructor(
    readonly text: string,
    readonly fields: PyDict,
  ) {}
}

/** A one-pass iterator (a generator, `reversed(...)`, `dict.items()` of a filter…); its repr is an address. */
export class PyIter {
  private buffered: PyValue[] = [];
  constructor(
    private readonly it: Iterator<PyValue>,
    readonly typeName: string,
  ) {}
  next(): { done: boolean; value: PyValue } {
    if (this.buffered.length) return { done: false, value: this.buffered.shift() as PyValue };
    const r = this.it.next();
    return r.done ? { done: true, value: null } : { done: false, value: r.value };
  }
}

export class PyRange {
  constructor(
    readonly start: number,
    readonly stop: number,
    readonly step: number,
  ) {}
  get length(): number {
    const { start, stop, step } = this;
    if (step > 0) return start < stop ? Math.floor((stop - start - 1) / step) + 1 : 0;
    return start > stop ? Math.floor((start - stop - 1) / -step) + 1 : 0;
  }
  at(i: number): number {
    return this.start + i * this.step;
  }
}

export class DictView {
  constructor(
    readonly kind: 'keys' | 'values' | 'items',
    readonly dict: PyDict,
  ) {}
}

export type Args = PyValue[];
export type Kwargs = Map<string, PyValue>;

/** A builtin function or bound method. */
export class PyFunc {
  constructor(
    readonly name: string,
    readonly fn: (args: Args, kwargs: Kwargs) => PyValue,
    /** A deterministic repr, when Python has one (otherwise printing it is unsupported). */
    readonly reprText?: string,
  ) {}
}

export class Namespace {
  constructor(readonly attrs: PyDict) {}
}

export class Cycler {
  pos = 0;
  constructor(readonly items: PyValue[]) {}
}

export class Joiner {
  used = false;
  constructor(readonly sep: PyValue) {}
}

/** Values the interpreter defines (Macro, LoopContext, TemplateModule) implement this. */
export interface PyInternal {
  readonly pyTypeName: string;
  repr(): string;
  getattr(name: string): PyValue | undefined;
  truthy?(): boolean;
}

export abstract class Internal implements PyInternal {
  abstract readonly pyTypeName: string;
  abstract repr(): string;
  getattr(_name: string): PyValue | undefined {
    return undefined;
  }
}

export type PyValue =
  | null
  | boolean
  | number
  | string
  | PyFloat
  | Markup
  | PyValue[]
  | PyTuple
  | PyDict
  | Undefined
  | PyObj
  | PyIter
  | PyRange
  | DictView
  | PyFunc
  | Namespace
  | Cycler
  | Joiner
  | HugeInt
  | Internal;

/** An integer beyond JS's safe range from the input: prints exactly, anything else is unsupported. */
export class HugeInt {
  constructor(readonly v: bigint) {}
}

// ---------------------------------------------------------------------------
// Lists with their own __str__ (ItemList)
// ---------------------------------------------------------------------------

const LIST_TEXT = new WeakMap<PyValue[], string>();
export function listText(l: PyValue[]): string | undefined {
  return LIST_TEXT.get(l);
}

// ---------------------------------------------------------------------------
// Conversion of the caller's data
// ---------------------------------------------------------------------------

/**
 * A caller's object may carry its keys' source order under this symbol (a non-enumerable array of
 * keys): a Python dict keeps insertion order, while a JS object lists integer-like keys (`"10"`,
 * `"9"`) first, in numeric order. The YAML reader of the Prompty engine records it for such maps.
 */
export const PY_KEY_ORDER: unique symbol = Symbol('py-key-order');

/** Records `keys` as the Python order of `o`'s keys (see PY_KEY_ORDER). */
export function setKeyOrder<T extends object>(o: T, keys: readonly string[]): T {
  Object.defineProperty(o, PY_KEY_ORDER, { value: [...keys], enumerable: false, configurable: true, writable: true });
  return o;
}

/** The own enumerable entries of `o`, in the Python order recorded on it, if any. */
export function orderedEntries(o: object): [string, unknown][] {
  const entries = Object.entries(o);
  const order = (o as { [PY_KEY_ORDER]?: unknown })[PY_KEY_ORDER];
  if (!Array.isArray(order)) return entries;
  const byKey = new Map(entries);
  const out: [string, unknown][] = [];
  for (const k of order) if (typeof k === 'string' && byKey.has(k)) {
    out.push([k, byKey.get(k)]);
    byKey.delete(k);
  }
  for (const e of byKey) out.push(e);
  return out;
}

const PY_TUPLE: unique symbol = Symbol('py-tuple');

/** Marks a caller's array as a Python tuple (a YAML `!!python/tuple` or an `!!omap` pair); it stays an array for everyone else. */
export function markTuple<T extends unknown[]>(a: T): T {
  Object.defineProperty(a, PY_TUPLE, { value: true, enumerable: false });
  return a;
}

export function isMarkedTuple(v: unknown): v is unknown[] {
  return Array.isArray(v) && (v as { [PY_TUPLE]?: boolean })[PY_TUPLE] === true;
}

export function fromJs(v: unknown, memo = new Map<object, PyValue>()): PyValue {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      if (!Number.isFinite(v)) return null; // JSON.stringify semantics
      if (Number.isInteger(v)) {
        if (Number.isSafeInteger(v)) return Object.is(v, -0) ? 0 : v;
        if (Math.abs(v) < 1e21) return new HugeInt(BigInt(v));
        return new PyFloat(v);
      }
      return new PyFloat(v);
    case 'bigint':
      return Number.isSafeInteger(Number(v)) && BigInt(Number(v)) === v ? Number(v) : new HugeInt(v);
    case 'object':
      break;
    default:
      return null;
  }
  // A float the caller read from text that spells it as one (YAML or JSON `2.0`), which a JS
  // number cannot tell from the integer 2.
  if (v instanceof PyFloat) return v;
  const o = v as object;
  const seen = memo.get(o);
  if (seen !== undefined) return seen;
  if (isMarkedTuple(o)) {
    const t = new PyTuple(o.map((x) => fromJs(x, memo)));
    memo.set(o, t);
    return t;
  }
  if (Array.isArray(o)) {
    const out: PyValue[] = [];
    memo.set(o, out);
    for (let i = 0; i < o.length; i++) out.push(fromJs(o[i], memo));
    if (isStringable(o)) LIST_TEXT.set(out, String(o.toString()));
    return out;
  }
  const fields = new PyDict();
  if (isStringable(o)) {
    const obj = new PyObj(String(o.toString()), fields);
    memo.set(o, obj);
    for (const [k, x] of orderedEntries(o)) if (x !== undefined && typeof x !== 'function') fields.set(k, fromJs(x, memo));
    return obj;
  }
  memo.set(o, fields);
  for (const [k, x] of orderedEntries(o)) if (x !== undefined && typeof x !== 'function' && typeof x !== 'symbol') fields.set(k, fromJs(x, memo));
  return fields;
}

// ---------------------------------------------------------------------------
// Type predicates
// ---------------------------------------------------------------------------

export const isInt = (v: PyValue): v is number => typeof v === 'number';
export const isStr = (v: PyValue): v is string | Markup => typeof v === 'string' || v instanceof Markup;
export const strOf = (v: string | Markup): string => (typeof v === 'string' ? v : v.s);
export const isNumber = (v: PyValue): boolean => typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat;
export const isList = (v: PyValue): v is PyValue[] => Array.isArray(v);

export function typeName(v: PyValue): string {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      return 'int';
    case 'string':
      return 'str';
  }
  if (v instanceof PyFloat) return 'float';
  if (v instanceof Markup) return 'Markup';
  if (Array.isArray(v)) return LIST_TEXT.has(v) ? 'ItemList' : 'list';
  if (v instanceof PyTuple) return v.names ? '_GroupTuple' : 'tuple';
  if (v instanceof PyDict) return 'dict';
  if (v instanceof Undefined) return 'Undefined';
  if (v instanceof PyObj) return 'Item';
  if (v instanceof PyIter) return v.typeName;
  if (v instanceof PyRange) return 'range';
  if (v instanceof DictView) return `dict_${v.kind}`;
  if (v instanceof PyFunc) return 'builtin_function_or_method';
  if (v instanceof Namespace) return 'Namespace';
  if (v instanceof Cycler) return 'Cycler';
  if (v instanceof Joiner) return 'Joiner';
  if (v instanceof HugeInt) return 'int';
  return v.pyTypeName;
}

function huge(): Unsupported {
  return new Unsupported('an integer beyond 2^53 (JavaScript numbers cannot do exact big-integer arithmetic)');
}

// ---------------------------------------------------------------------------
// Hashing (dict keys, sets)
// ---------------------------------------------------------------------------

const identity = new WeakMap<object, number>();
let nextId = 1;
function idOf(o: object): number {
  let id = identity.get(o);
  if (id === undefined) {
    id = nextId++;
    identity.set(o, id);
  }
  return id;
}

export function hashKey(v: PyValue): string {
  if (v === null) return 'N';
  switch (typeof v) {
    case 'boolean':
      return v ? 'n1' : 'n0';
    case 'number':
      return 'n' + v;
    case 'string':
      return 's' + v;
  }
  if (v instanceof Markup) return 's' + v.s;
  if (v instanceof PyFloat) return Number.isInteger(v.v) ? 'n' + (Number.isSafeInteger(v.v) ? String(v.v === 0 ? 0 : v.v) : BigInt(v.v).toString()) : 'f' + floatRepr(v.v);
  if (v instanceof PyTuple) return 't(' + v.items.map(hashKey).join(',') + ')';
  if (Array.isArray(v) || v instanceof PyDict || v instanceof DictView) throw typeError(`unhashable type: '${typeName(v)}'`);
  if (v instanceof Undefined) return 'U';
  if (v instanceof HugeInt) return 'n' + v.v.toString();
  if (v instanceof PyRange) return 'r' + [v.start, v.stop, v.step].join(',');
  return 'o' + idOf(v as object);
}

// ---------------------------------------------------------------------------
// str() and repr()
// ---------------------------------------------------------------------------

const MAX_REPR_DEPTH = 64;

export function pyStr(v: PyValue): string {
  if (typeof v === 'string') return v;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  if (v instanceof Markup) return v.s;
  if (v instanceof Undefined) return strictFail(v, '');
  if (v instanceof PyObj) return v.text;
  if (Array.isArray(v)) {
    const t = LIST_TEXT.get(v);
    if (t !== undefined) return t;
  }
  return pyRepr(v);
}

export function pyRepr(v: PyValue, depth = 0): string {
  if (depth > MAX_REPR_DEPTH) throw new LimitError('values nested deeper than 64 levels');
  if (v === null) return 'None';
  switch (typeof v) {
    case 'boolean':
      return v ? 'True' : 'False';
    case 'number':
      return String(v);
    case 'string':
      return pyStrRepr(v);
  }
  if (v instanceof PyFloat) return floatRepr(v.v);
  if (v instanceof Markup) return `Markup(${pyStrRepr(v.s)})`;
  if (Array.isArray(v)) return '[' + v.map((x) => pyRepr(x, depth + 1)).join(', ') + ']';
  if (v instanceof PyTuple) {
    if (v.items.length === 1) return '(' + pyRepr(v.items[0], depth + 1) + ',)';
    return '(' + v.items.map((x) => pyRepr(x, depth + 1)).join(', ') + ')';
  }
  if (v instanceof PyDict) return '{' + v.entries().map(([k, x]) => pyRepr(k, depth + 1) + ': ' + pyRepr(x, depth + 1)).join(', ') + '}';
  if (v instanceof Undefined) return 'Undefined';
  if (v instanceof PyRange) return v.step === 1 ? `range(${v.start}, ${v.stop})` : `range(${v.start}, ${v.stop}, ${v.step})`;
  if (v instanceof DictView) {
    const items = v.kind === 'keys' ? v.dict.keys() : v.kind === 'values' ? v.dict.values() : v.dict.entries().map(([a, b]) => new PyTuple([a, b]));
    return `dict_${v.kind}([` + items.map((x) => pyRepr(x, depth + 1)).join(', ') + '])';
  }
  if (v instanceof Namespace) return `<Namespace ${pyRepr(v.attrs, depth + 1)}>`;
  if (v instanceof HugeInt) return bigStr(v.v);
  if (v instanceof PyFunc) {
    if (v.reprText !== undefined) return v.reprText;
    throw new Unsupported(`printing the function '${v.name}' (Python prints a memory address)`);
  }
  if (v instanceof PyObj) throw new Unsupported("the repr of an item object (Python prints the object's memory address)");
  if (v instanceof PyIter) throw new Unsupported(`printing a ${v.typeName} object (Python prints a memory address); add '|list'`);
  if (v instanceof Cycler || v instanceof Joiner) throw new Unsupported(`printing a ${typeName(v)} object (Python prints a memory address)`);
  return v.repr();
}

// ---------------------------------------------------------------------------
// Truthiness, length, iteration
// ---------------------------------------------------------------------------

export function truthy(v: PyValue): boolean {
  if (v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'number':
      return v !== 0;
    case 'string':
      return v.length > 0;
  }
  if (v instanceof PyFloat) return v.v !== 0;
  if (v instanceof Markup) return v.s.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (v instanceof PyDict) return v.size > 0;
  if (v instanceof Undefined) return strictFail(v, false);
  if (v instanceof PyRange) return v.length > 0;
  if (v instanceof DictView) return v.dict.size > 0;
  if (v instanceof HugeInt) return v.v !== 0n;
  if (v instanceof Internal && 'truthy' in v && typeof (v as PyInternal).truthy === 'function') return (v as PyInternal).truthy!();
  return true;
}

export function pyLenOf(v: PyValue): number {
  if (typeof v === 'string') return pyLen(v);
  if (v instanceof Markup) return pyLen(v.s);
  if (Array.isArray(v)) return v.length;
  if (v instanceof PyTuple) return v.items.length;
  if (v instanceof PyDict) return v.size;
  if (v instanceof DictView) return v.dict.size;
  if (v instanceof PyRange) return v.length;
  if (v instanceof Undefined) return strictFail(v, 0);
  if (v instanceof Internal && v.pyTypeName === 'LoopContext') {
    const n = v.getattr('length');
    if (typeof n === 'number') return n;
  }
  throw typeError(`object of type '${typeName(v)}' has no len()`);
}

/** `iter(v)` as a JS iterator. */
export function pyIterate(v: PyValue): Iterator<PyValue> {
  // An iterator may be consumed later, after the template changed the container (see ITERATED).
  markIterated(v);
  return iterate(v);
}

function iterate(v: PyValue): Iterator<PyValue> {
  if (Array.isArray(v)) return v.slice()[Symbol.iterator]();
  if (typeof v === 'string') return codePoints(v)[Symbol.iterator]();
  if (v instanceof Markup) return codePoints(v.s)[Symbol.iterator]();
  if (v instanceof PyTuple) return v.items[Symbol.iterator]();
  if (v instanceof PyDict) return v.keys()[Symbol.iterator]();
  if (v instanceof DictView) {
    const items = v.kind === 'keys' ? v.dict.keys() : v.kind === 'values' ? v.dict.values() : v.dict.entries().map(([a, b]) => new PyTuple([a, b]));
    return items[Symbol.iterator]();
  }
  if (v instanceof PyRange) {
    let i = 0;
    const r = v;
    const n = r.length;
    return { next: () => (i < n ? { done: false, value: r.at(i++) } : { done: true, value: null }) };
  }
  if (v instanceof PyIter) {
    const it = v;
    return { next: () => it.next() };
  }
  if (v instanceof Undefined) return strictFail(v, [][Symbol.iterator]());
  if (v instanceof PyObj) throw new PyError('KeyError', '0');
  throw typeError(`'${typeName(v)}' object is not iterable`);
}

/** `list(v)`: consumed at once, so a later change of the container cannot differ from Python. */
export function pyList(v: PyValue, limit = Infinity): PyValue[] {
  if (Array.isArray(v)) return v.slice();
  const out: PyValue[] = [];
  const it = iterate(v);
  for (let r = it.next(); !r.done; r = it.next()) {
    out.push(r.value);
    if (out.length > limit) throw new LimitError('a sequence of more than the allowed number of items');
  }
  return out;
}

export function isIterable(v: PyValue): boolean {
  return (
    Array.isArray(v) ||
    typeof v === 'string' ||
    v instanceof Markup ||
    v instanceof PyTuple ||
    v instanceof PyDict ||
    v instanceof DictView ||
    v instanceof PyRange ||
    v instanceof PyIter ||
    v instanceof Undefined ||
    v instanceof PyObj ||
    (v instanceof Internal && v.pyTypeName === 'LoopContext')
  );
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

export interface Num {
  /** A float (not an int or bool). */
  f: boolean;
  /** The value as a double (an int beyond 2^53 rounded, possibly ±Infinity). */
  n: number;
  /** The exact value of an int beyond 2^53. */
  big?: bigint;
}

/** int, bool or float as a number; undefined for other types. */
export function numOf(v: PyValue): Num | undefined {
  if (typeof v === 'number') return { f: false, n: v };
  if (typeof v === 'boolean') return { f: false, n: v ? 1 : 0 };
  if (v instanceof PyFloat) return { f: true, n: v.v };
  if (v instanceof HugeInt) return { f: false, n: Number(v.v), big: v.v };
  return undefined;
}

/** The exact value of an int-like Num. */
export function bigOf(x: Num): bigint {
  return x.big ?? BigInt(x.n);
}

/** float(x) as Python converts an int for float arithmetic (OverflowError beyond the double range). */
export function floatOf(x: Num): number {
  if (x.big !== undefined && !Number.isFinite(x.n)) throw new PyError('OverflowError', 'int too large to convert to float');
  return x.n;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An exact int result: a JS number when safe, else a HugeInt. */
export function intOut(b: bigint): number | HugeInt {
  if (b <= MAX_SAFE && b >= -MAX_SAFE) return Number(b);
  return new HugeInt(b);
}

/** An int result computed in doubles from safe ints; recomputed exactly when it left the safe range. */
export function mkInt(n: number, exact?: () => bigint): number | HugeInt {
  if (Number.isSafeInteger(n)) return n === 0 ? 0 : n;
  if (exact) return intOut(exact());
  throw huge();
}

/** Numeric comparison (-1/0/1, NaN when unordered), exact between ints of any size and floats. */
export function numCompare(a: Num, b: Num): number {
  if (a.big === undefined && b.big === undefined) {
    if (Number.isNaN(a.n) || Number.isNaN(b.n)) return NaN;
    return a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
  }
  const x: number | bigint = a.big ?? a.n;
  const y: number | bigint = b.big ?? b.n;
  if ((typeof x === 'number' && Number.isNaN(x)) || (typeof y === 'number' && Number.isNaN(y))) return NaN;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** str(int) of an int beyond 2^53 (CPython 3.11 refuses more than 4300 digits). */
export function bigStr(b: bigint): string {
  const s = b.toString();
  if (s.length - (b < 0n ? 1 : 0) > 4300) throw valueError(`Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit`);
  return s;
}

export function mkFloat(n: number): PyFloat {
  return new PyFloat(n);
}

// ---------------------------------------------------------------------------
// Equality and ordering
// ---------------------------------------------------------------------------

export function pyEq(a: PyValue, b: PyValue, depth = 0): boolean {
  if (strictUndefined) {
    if (a instanceof Undefined) throw a.fail();
    if (b instanceof Undefined) throw b.fail();
  }
  if (depth > MAX_REPR_DEPTH) throw new LimitError('values nested deeper than 64 levels');
  if (a === b) return !(a instanceof PyFloat && Number.isNaN(a.v));
  const na = numOf(a);
  const nb = numOf(b);
  if (na && nb) return numCompare(na, nb) === 0;
  if (na || nb) return false;
  if (isStr(a) && isStr(b)) return strOf(a) === strOf(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i] || pyEq(x, b[i], depth + 1));
  if (a instanceof PyTuple && b instanceof PyTuple) return a.items.length === b.items.length && a.items.every((x, i) => x === b.items[i] || pyEq(x, b.items[i], depth + 1));
  if (a instanceof PyDict && b instanceof PyDict) {
    if (a.size !== b.size) return false;
    for (const [k, x] of a.entries()) {
      if (!b.has(k)) return false;
      const y = b.get(k)!;
      if (!(x === y || pyEq(x, y, depth + 1))) return false;
    }
    return true;
  }
  if (a instanceof Undefined && b instanceof Undefined) return true;
  if (a instanceof PyRange && b instanceof PyRange) {
    const n = a.length;
    if (n !== b.length) return false;
    if (n === 0) return true;
    if (a.start !== b.start) return false;
    return n === 1 || a.step === b.step;
  }
  if (a instanceof Namespace || b instanceof Namespace) return false;
  if (a instanceof DictView && b instanceof DictView) {
    if (a.kind === 'values' || b.kind === 'values') return false;
    throw new Unsupported('comparing dict views');
  }
  return false;
}

/** Python's `<` (-1/0/1 ordering) for the types that support it; TypeError otherwise. */
export function pyCompare(a: PyValue, b: PyValue, op: string, depth = 0): number {
  if (a instanceof Undefined) throw a.fail();
  if (b instanceof Undefined) throw b.fail();
  const na = numOf(a);
  const nb = numOf(b);
  if (na && nb) return numCompare(na, nb);
  if (isStr(a) && isStr(b)) return pyStrCompare(strOf(a), strOf(b));
  const seqA = Array.isArray(a) ? a : a instanceof PyTuple ? a.items : undefined;
  const seqB = Array.isArray(b) ? b : b instanceof PyTuple ? b.items : undefined;
  if (seqA && seqB && Array.isArray(a) === Array.isArray(b)) {
    if (depth > MAX_REPR_DEPTH) throw new LimitError('values nested deeper than 64 levels');
    const n = Math.min(seqA.length, seqB.length);
    for (let i = 0; i < n; i++) {
      if (seqA[i] === seqB[i] || pyEq(seqA[i], seqB[i])) continue;
      return pyCompare(seqA[i], seqB[i], op, depth + 1);
    }
    return seqA.length === seqB.length ? 0 : seqA.length < seqB.length ? -1 : 1;
  }
  if (a instanceof DictView || b instanceof DictView) throw new Unsupported('ordering dict views (set comparisons)');
  throw typeError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

export function pyContains(container: PyValue, item: PyValue): boolean {
  if (isStr(container)) {
    if (!isStr(item)) throw typeError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return strOf(container).includes(strOf(item));
  }
  if (Array.isArray(container)) return container.some((x) => x === item || pyEq(x, item));
  if (container instanceof PyTuple) return container.items.some((x) => x === item || pyEq(x, item));
  if (container instanceof PyDict) return container.has(item);
  if (container instanceof DictView) {
    if (container.kind === 'keys') return container.dict.has(item);
    if (container.kind === 'values') return container.dict.values().some((x) => x === item || pyEq(x, item));
    if (!(item instanceof PyTuple) || item.items.length !== 2) return false;
    const [k, v] = item.items;
    if (!container.dict.has(k)) return false;
    const x = container.dict.get(k)!;
    return x === v || pyEq(x, v);
  }
  if (container instanceof PyRange) {
    const n = numOf(item);
    if (!n) return false;
    if (!Number.isInteger(n.n)) return false;
    const { start, stop, step } = container;
    if (step > 0 ? n.n < start || n.n >= stop : n.n > start || n.n <= stop) return false;
    return (n.n - start) % step === 0;
  }
  if (container instanceof Undefined) return strictFail(container, false);
  if (container instanceof PyIter) {
    for (let r = container.next(); !r.done; r = container.next()) if (r.value === item || pyEq(r.value, item)) return true;
    return false;
  }
  if (container instanceof PyObj) throw new PyError('KeyError', '0');
  if (container instanceof Internal && container.pyTypeName === 'LoopContext') throw new Unsupported("'in' over a loop object");
  throw typeError(`argument of type '${typeName(container)}' is not iterable`);
}
