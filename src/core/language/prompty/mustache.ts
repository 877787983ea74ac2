/**
 * Mustache as Prompty renders `template: mustache`: Prompty 0.1.x with its own `mustache.py`,
 * Prompty v2 with chevron; both follow chevron's algorithm (mustache.py is a port of it), which
 * this file reproduces: the tokenizer with its standalone-line rules and delimiter changes, the
 * scope chain, Python's `str()` of values, chevron's HTML escaping (`& " < >`, not `'`), and the
 * falsy rules (`0` and `False` print, other falsy values print nothing). No partials are given
 * by either runtime, so a partial renders empty. Lambdas cannot occur (the values are data).
 */
import type { Span } from '../../types';
import { isPySpaceCode } from '../jinja/pystr';
import { PyDict, PyFloat, PyTuple, Unsupported, fromJs, pyStr, type PyValue } from '../jinja/values';

/** `langchain`: langchain_core.utils.mustache (chevron's algorithm, traversing only dicts, lists and tuples). */
export type MustacheDialect = 'prompty-0.1' | 'chevron' | 'langchain';

/** The runtime's ChevronError (a SyntaxError): the template cannot be tokenized. */
export class MustacheError extends Error {
  span?: Span;
}

export type TagType = 'literal' | 'comment' | 'section' | 'inverted section' | 'end' | 'partial' | 'set delimiter' | 'no escape' | 'variable';

/** A token of chevron's tokenizer, with where it stands in the template. */
export interface MustacheToken {
  type: TagType;
  /** The literal's text (standalone-line trimming applied), or the tag's key. */
  key: string;
  /** The literal's source, or the whole tag (`{{#docs}}`). */
  start: number;
  end: number;
  /** Offset of the key inside the tag. */
  keyStart: number;
}

/** A problem the recovering tokenizer stepped over (the editor's view; chevron stops at the first). */
export interface MustacheIssue {
  kind: 'unterminated' | 'stray' | 'mismatch' | 'unclosed';
  span: Span;
  /** The section the problem is about (`unclosed`, `mismatch`: the open one). */
  key?: string;
  open?: Span;
}

const TAG_TYPES: Record<string, TagType | 'set delimiter?' | 'no escape?'> = {
  '!': 'comment',
  '#': 'section',
  '^': 'inverted section',
  '/': 'end',
  '>': 'partial',
  '=': 'set delimiter?',
  '{': 'no escape?',
  '&': 'no escape',
};

function isSpace(s: string): boolean {
  if (!s) return false;
  for (let i = 0; i < s.length; i++) if (!isPySpaceCode(s.charCodeAt(i))) return false;
  return true;
}

/** Python's str.strip() (whitespace). */
function strip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isPySpaceCode(s.charCodeAt(a))) a++;
  while (b > a && isPySpaceCode(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

/** Leading whitespace Python's strip() removes. */
function leading(s: string): number {
  let a = 0;
  while (a < s.length && isPySpaceCode(s.charCodeAt(a))) a++;
  return a;
}

/**
 * chevron.tokenizer.tokenize, eagerly, over offsets of `source`. Strict (no `issues`): throws
 * chevron's error. Recovering (`issues` given, for the editor): an unterminated tag reads as text,
 * a stray or mismatched closer is skipped, a section left open is closed at the end, each recorded.
 */
export function tokenizeMustache(source: string, issues?: MustacheIssue[]): MustacheToken[] {
  const tokens: MustacheToken[] = [];
  const n = source.length;
  let pos = 0;
  let isStandalone = true;
  const open: Array<{ key: string; span: Span }> = [];
  let lDel = '{{';
  let rDel = '}}';
  // Text an unterminated tag left to read as text joins the next literal.
  let carry = -1;
  while (pos < n) {
    // grab_literal
    const litStart = carry >= 0 ? carry : pos;
    carry = -1;
    const k = source.indexOf(lDel, pos);
    if (k < 0 || k + lDel.length >= n) {
      const end = k < 0 ? n : k;
      tokens.push({ type: 'literal', key: source.slice(litStart, end), start: litStart, end, keyStart: litStart });
      break;
    }
    let literal = source.slice(litStart, k);
    const tagStart = k;
    // l_sa_check
    if (literal.includes('\n') || isStandalone) {
      const padding = literal.split('\n').pop() ?? '';
      isStandalone = isSpace(padding) || padding === '';
    } else isStandalone = false;
    // parse_tag
    const r = source.indexOf(rDel, k + lDel.length);
    if (r < 0) {
      if (!issues) throw new MustacheError('unclosed tag');
      const nl = source.indexOf('\n', k);
      issues.push({ kind: 'unterminated', span: { start: k, end: Math.max(k + lDel.length, nl < 0 ? n : nl) } });
      carry = litStart;
      pos = k + lDel.length;
      isStandalone = false;
      continue;
    }
    let tag = source.slice(k + lDel.length, r);
    let keyStart = k + lDel.length;
    pos = r + rDel.length;
    let type: TagType | 'set delimiter?' | 'no escape?' = TAG_TYPES[tag[0] ?? ''] ?? 'variable';
    if (tag === '') type = 'variable';
    if (type !== 'variable') {
      tag = tag.slice(1);
      keyStart++;
    }
    if (type === 'set delimiter?') {
      if (tag.endsWith('=')) {
        type = 'set delimiter';
        tag = tag.slice(0, -1);
      } else {
        if (!issues) throw new MustacheError('unclosed set delimiter tag');
        issues.push({ kind: 'unterminated', span: { start: k, end: pos } });
        continue;
      }
    } else if (type === 'no escape?' && lDel === '{{' && rDel === '}}' && source.startsWith('}', pos)) {
      pos++;
      type = 'no escape';
    }
    const key = strip(tag);
    keyStart += leading(tag);
    const span = { start: tagStart, end: pos };
    if (type === 'set delimiter') {
      const dels = strip(key).split(' ');
      if (!dels[0] || !dels[dels.length - 1]) {
        if (!issues) throw new Unsupported('an empty mustache delimiter');
      } else {
        lDel = dels[0];
        rDel = dels[dels.length - 1];
      }
    } else if (type === 'section' || type === 'inverted section') open.push({ key, span });
    else if (type === 'end') {
      const last = open[open.length - 1];
      if (last === undefined) {
        if (!issues) throw new MustacheError(`Trying to close tag "${key}"\nLooks like it was not opened.`);
        issues.push({ kind: 'stray', span });
        type = 'comment';
      } else if (key !== last.key) {
        if (!issues) throw new MustacheError(`Trying to close tag "${key}"\nlast open tag is "${last.key}"`);
        // The closer of an outer section closes the ones inside; any other is skipped.
        const at = open.map((o) => o.key).lastIndexOf(key);
        if (at < 0) {
          issues.push({ kind: 'stray', span });
          type = 'comment';
        } else {
          for (let j = open.length - 1; j > at; j--) {
            issues.push({ kind: 'mismatch', span: open[j].span, key: open[j].key, open: span });
            tokens.push({ type: 'end', key: open[j].key, start: tagStart, end: tagStart, keyStart: tagStart });
          }
          open.length = at + 1;
          open.pop();
        }
      } else open.pop();
    }
    // r_sa_check
    if (isStandalone && type !== 'variable' && type !== 'no escape') {
      const nl = source.indexOf('\n', pos);
      const first = source.slice(pos, nl < 0 ? n : nl);
      isStandalone = isSpace(first) || !first;
    } else isStandalone = false;
    if (isStandalone) {
      const nl = source.indexOf('\n', pos);
      if (nl >= 0) pos = nl + 1;
      if (type !== 'partial') literal = literal.replace(/ +$/, '');
    }
    if (literal !== '') tokens.push({ type: 'literal', key: literal, start: litStart, end: tagStart, keyStart: litStart });
    // chevron yields a `{` tag without its third brace too, and then renders nothing for it.
    if (type !== 'comment' && type !== 'set delimiter' && type !== 'no escape?') tokens.push({ type, key, start: tagStart, end: pos, keyStart });
  }
  if (open.length) {
    if (!issues) throw new MustacheError(`Unexpected EOF\nthe tag "${open[open.length - 1].key}" was never closed`);
    for (let j = open.length - 1; j >= 0; j--) {
      issues.push({ kind: 'unclosed', span: open[j].span, key: open[j].key });
      tokens.push({ type: 'end', key: open[j].key, start: n, end: n, keyStart: n });
    }
  }
  return tokens;
}

/** A scope of the chain: a value, or chevron's `False` placeholder of a skipped section. */
type Scope = PyValue;

function isZeroOrFalse(v: PyValue): boolean {
  return v === false || v === 0 || (v instanceof PyFloat && v.v === 0);
}

function truthy(v: PyValue): boolean {
  if (v === null || v === false || v === 0 || v === '') return false;
  if (v instanceof PyFloat) return v.v !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (v instanceof PyDict) return v.size > 0;
  return true;
}

const NOT_FOUND = Symbol('not found');

function child(scope: PyValue, key: string, dialect: MustacheDialect): PyValue | typeof NOT_FOUND {
  if (scope instanceof PyDict) return scope.has(key) ? (scope.get(key) as PyValue) : NOT_FOUND;
  if (Array.isArray(scope) || scope instanceof PyTuple) {
    const items = Array.isArray(scope) ? scope : scope.items;
    if (!/^[+-]?\d+$/.test(strip(key))) return NOT_FOUND;
    let i = Number(strip(key));
    if (i < 0) i += items.length;
    return i >= 0 && i < items.length ? items[i] : NOT_FOUND;
  }
  if (typeof scope === 'string' && dialect !== 'langchain') {
    if (/^(?:capitalize|casefold|center|count|encode|endswith|find|format|index|join|lower|lstrip|replace|rstrip|split|startswith|strip|title|upper|zfill)$/.test(key)) throw new Unsupported(`a mustache key that names a method of a string ('${key}': Python prints a memory address)`);
    if (!/^[+-]?\d+$/.test(strip(key))) return NOT_FOUND;
    const cps = Array.from(scope);
    let i = Number(strip(key));
    if (i < 0) i += cps.length;
    return i >= 0 && i < cps.length ? cps[i] : NOT_FOUND;
  }
  return NOT_FOUND;
}

/** chevron's _get_key. */
function getKey(key: string, scopes: Scope[], dialect: MustacheDialect): PyValue {
  if (key === '.') return scopes[0];
  for (const start of scopes) {
    let scope = start;
    if (isZeroOrFalse(scope)) return scope;
    let found = true;
    for (const part of key.split('.')) {
      if (isZeroOrFalse(scope)) return scope;
      const next = child(scope, part, dialect);
      if (next === NOT_FOUND) {
        found = false;
        break;
      }
      scope = next;
    }
    if (!found) continue;
    if (isZeroOrFalse(scope)) return scope;
    return truthy(scope) ? scope : '';
  }
  return '';
}

function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const MAX_OUTPUT = 20_000_000;
const MAX_STEPS = 5_000_000;

function render(tokens: MustacheToken[], scopes: Scope[], budget: { steps: number }, dialect: MustacheDialect): string {
  let output = '';
  let i = 0;
  while (i < tokens.length) {
    const { type: tag, key } = tokens[i++];
    if (++budget.steps > MAX_STEPS) throw new Unsupported(`a mustache template that takes more than ${MAX_STEPS} steps`);
    const current = scopes[0];
    if (tag === 'end') scopes.shift();
    else if (!truthy(current) && scopes.length !== 1) {
      if (tag === 'section' || tag === 'inverted section') scopes.unshift(false);
    } else if (tag === 'literal') output += key;
    else if (tag === 'variable') {
      let thing = getKey(key, scopes, dialect);
      if (thing === true && key === '.' && scopes.length > 1) thing = scopes[1];
      output += htmlEscape(pyStr(thing));
    } else if (tag === 'no escape') output += pyStr(getKey(key, scopes, dialect));
    else if (tag === 'section') {
      const scope = getKey(key, scopes, dialect);
      if (Array.isArray(scope) || scope instanceof PyTuple) {
        // The tokens up to the matching end tag (nested sections of the same key counted).
        const inner: MustacheToken[] = [];
        let same = 0;
        while (i < tokens.length) {
          const t = tokens[i++];
          if (t.type === 'section' && t.key === key) same++;
          if (t.type === 'end' && t.key === key) {
            same--;
            if (same < 0) break;
          }
          inner.push(t);
        }
        for (const thing of Array.isArray(scope) ? scope : scope.items) output += render(inner, [thing, ...scopes], budget, dialect);
      } else scopes.unshift(scope);
    } else if (tag === 'inverted section') scopes.unshift(!truthy(getKey(key, scopes, dialect)));
    // partials: neither runtime passes any, so a partial renders nothing
    if (output.length > MAX_OUTPUT) throw new Unsupported(`a mustache output longer than ${MAX_OUTPUT} characters`);
  }
  return output;
}

/** chevron.render(template, data) as the Prompty line's renderer calls it. */
export function renderMustache(template: string, data: Record<string, unknown>, dialect: MustacheDialect): string {
  const tokens = tokenizeMustache(template);
  return render(tokens, [fromJs(data ?? {})], { steps: 0 }, dialect);
}
