/**
 * A Mustache `.prompty` body (`template: mustache`) as the editor sees it, from the tokens of the
 * renderer's own tokenizer (mustache.ts, chevron's): messages at role lines, node trees (a section
 * is an `each` node, an inverted section a negated `if`), slot uses, and located findings. The
 * tokenizer's recovering mode keeps going where chevron stops: an unterminated tag reads as text,
 * a stray closer is skipped, a section left open closes at the end.
 */
import { finding } from '../../rules/registry';
import type { Finding, Span, TemplateNode } from '../../types';
import type { BodyResult, EachNode, RawUse } from '../shared';
import { DEPTH_MESSAGE, MAX_BLOCK_DEPTH, isHistoryLoop, quoteTag, roleLinePattern, splitRoles, toMessages, type Item } from './body';
import type { PromptyLine } from './engine';
import { tokenizeMustache, type MustacheIssue, type MustacheToken } from './mustache';

type IfNode = Extract<TemplateNode, { type: 'if' }>;

interface Frame {
  key: string;
  list: Item[];
  node?: EachNode | IfNode;
  use?: RawUse;
  /** A section beyond MAX_BLOCK_DEPTH: its content stays inline. */
  capped?: boolean;
  /** A (non-inverted) section: bare names inside are the item's fields. */
  section: boolean;
}

/** Whether what renders first from the tokens after `from` starts a new line (a printed value: unknown, no). */
function breaksFirst(toks: readonly MustacheToken[], from: number, atEnd: boolean): boolean {
  for (let i = from; i < toks.length; i++) {
    const t = toks[i];
    if (t.type === 'literal') {
      if (t.key === '') continue;
      return t.key.startsWith('\n') || t.key.startsWith('\r');
    }
    if (t.type === 'variable' || t.type === 'no escape') return false;
  }
  return atEnd;
}

export function parseMustacheBody(path: string, text: string, bodyStart: number, inputs: Record<string, Span>, line: PromptyLine): BodyResult {
  const findings: Finding[] = [];
  const issues: MustacheIssue[] = [];
  const source = text.slice(bodyStart);
  const toks = tokenizeMustache(source, issues);
  const at = (o: number) => bodyStart + o;
  const sp = (t: { start: number; end: number }): Span => ({ start: at(t.start), end: at(t.end) });
  const invalid = (span: Span, message: string) => findings.push(finding('template-invalid', path, span, message));
  const roleLine = roleLinePattern(line);
  const uses: RawUse[] = [];
  const root: Item[] = [];
  const frames: Frame[] = [{ key: '', list: root, section: false }];
  let sections = 0;
  let depth = 0;
  let depthReported = false;
  const top = () => frames[frames.length - 1];

  /** A name's path and slot: inside a section a bare name is the item's field, unless the template declares it as an input. */
  const resolve = (key: string): { path: string[]; slot?: string } => {
    if (key === '.') return { path: ['this'] };
    const p = key.split('.');
    if (sections > 0 && inputs[p[0]] === undefined) return { path: ['this', ...p] };
    return { path: p, slot: p[0] };
  };
  const record = (t: MustacheToken, form: RawUse['form']): { path: string[]; use?: RawUse } => {
    const r = resolve(t.key);
    if (r.slot === undefined) return r;
    const use: RawUse = { slot: r.slot, span: { start: at(t.keyStart), end: at(t.keyStart + t.key.length) }, form };
    uses.push(use);
    return { path: r.path, use };
  };

  toks.forEach((t, ti) => {
    const list = top().list;
    switch (t.type) {
      case 'literal': {
        const span = sp(t);
        const rendered = (a: number, b: number) => (b === span.end ? t.key.slice(a - span.start) : text.slice(a, b));
        if (frames.length === 1) list.push(...splitRoles(text, bodyStart, span.start, span.end, roleLine, rendered, /[\r\n]$/.test(t.key) ? false : breaksFirst(toks, ti + 1, line === 'v2')));
        else if (t.key !== '') list.push({ type: 'text', text: t.key, span });
        break;
      }
      case 'variable':
      case 'no escape': {
        const r = record(t, 'var');
        list.push({ type: 'var', path: r.path, span: sp(t), raw: t.type === 'no escape' });
        break;
      }
      case 'section':
      case 'inverted section': {
        const head = sp(t);
        const r = record(t, t.type === 'section' ? 'each' : 'if');
        if (depth >= MAX_BLOCK_DEPTH) {
          if (!depthReported) invalid(head, DEPTH_MESSAGE);
          depthReported = true;
          frames.push({ key: t.key, list, capped: true, section: t.type === 'section' });
        } else {
          const node: EachNode | IfNode = t.type === 'section' ? { type: 'each', path: r.path, body: [], span: { ...head }, headSpan: head } : { type: 'if', path: r.path, negate: true, body: [], span: { ...head }, headSpan: head };
          if (node.type === 'each' && r.use) r.use.each = node;
          list.push(node);
          frames.push({ key: t.key, list: node.body, node, use: r.use, section: t.type === 'section' });
          depth++;
        }
        if (t.type === 'section') sections++;
        break;
      }
      case 'end': {
        if (frames.length === 1) break;
        const f = frames.pop() as Frame;
        if (!f.capped) depth--;
        if (f.section) sections--;
        if (!f.node) break;
        // A section closed at the end of the text (never closed) ends with the text.
        f.node.span = { start: f.node.span.start, end: t.end === source.length && t.start === t.end ? text.length : at(t.end) };
        if (f.node.type === 'each' && f.use && isHistoryLoop(text, f.node)) {
          const idx = top().list.indexOf(f.node);
          if (idx >= 0) top().list[idx] = { type: 'history', slot: f.use.slot, span: f.node.span };
          f.use.form = 'history';
          delete f.use.each;
        }
        break;
      }
      default:
        break;
    }
  });

  const quote = (s: Span) => quoteTag(text, s);
  for (const i of issues) {
    const span = sp(i.span);
    if (i.kind === 'unterminated') invalid(span, `Unterminated placeholder '${quote({ start: span.start, end: Math.min(span.end, span.start + 40) })}': no closing '}}'.`);
    else if (i.kind === 'stray') invalid(span, `'${quote(span)}' closes a block that was never opened.`);
    else if (i.kind === 'mismatch') invalid(span, `'${quote(span)}' is not closed: add '{{/${i.key}}}' before '${quote(sp(i.open ?? i.span))}'.`);
    else invalid(span, `'${quote(span)}' is never closed: add '{{/${i.key}}}'.`);
  }
  return { messages: toMessages(root, bodyStart, text.length), uses, findings };
}
