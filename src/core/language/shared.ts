/**
 * What both template dialects share once their bodies are parsed: the raw slot uses each parser
 * records, and the step that gives every use its role (from the message it lands in) and its
 * delimiter (from the markers around it in the template source).
 */
import type { Finding, Role, SlotUse, Span, TemplateMessage, TemplateNode } from '../types';
import { enclosingPair, findDelimiterPairs, insideMarker } from './delimiters';
import type { DelimiterPair } from './delimiters';

export type EachNode = Extract<TemplateNode, { type: 'each' }>;

/** A slot reference as a parser sees it, before roles and delimiters are known. */
export interface RawUse {
  slot: string;
  span: Span;
  form: SlotUse['form'];
  /** For `each` uses: the loop, whose body may label every item itself. */
  each?: EachNode;
}

/** What a body parser gives: the messages with their node trees, the raw slot uses, its findings. */
export interface BodyResult {
  messages: TemplateMessage[];
  uses: RawUse[];
  findings: Finding[];
}

/** Variables in a loop body that stand for the item (`{{d.text}}`, `{{this}}`), recursively. */
function itemRefs(each: EachNode): Span[] {
  const out: Span[] = [];
  const walk = (nodes: readonly TemplateNode[] | undefined) => {
    for (const n of nodes ?? []) {
      if (n.type === 'var' && (n.path[0] === 'this' || (each.alias !== undefined && n.path[0] === each.alias))) out.push(n.span);
      else if (n.type === 'each' || n.type === 'if') {
        walk(n.body);
        walk(n.inverse);
      }
    }
  };
  walk(each.body);
  return out;
}

/**
 * Turns raw uses into SlotUse records in source order. A loop counts as delimited when the loop
 * itself sits inside a delimiter, or when every item it renders is wrapped inside the loop body
 * (`{{#each docs}}<doc id="{{id}}">{{text}}</doc>{{/each}}`).
 */
export function finishUses(text: string, messages: readonly TemplateMessage[], raw: readonly RawUse[], fallbackRole: Role): SlotUse[] {
  const pairsCache = new Map<TemplateMessage, DelimiterPair[]>();
  const pairsOf = (m: TemplateMessage) => {
    let p = pairsCache.get(m);
    if (!p) {
      p = findDelimiterPairs(text, m.span.start, m.span.end);
      pairsCache.set(m, p);
    }
    return p;
  };
  const uses: SlotUse[] = [];
  for (const r of raw) {
    const msg = messages.find((m) => m.span.start <= r.span.start && r.span.start < Math.max(m.span.end, m.span.start + 1));
    const role = msg?.role ?? fallbackRole;
    let delimiter: string | undefined;
    if (msg) {
      const pairs = pairsOf(msg);
      if (!insideMarker(pairs, r.span)) delimiter = enclosingPair(pairs, r.span)?.name;
      if (!delimiter && r.form === 'each' && r.each) {
        const refs = itemRefs(r.each).filter((s) => !insideMarker(pairs, s));
        const wrapped = refs.map((s) => enclosingPair(pairs, s, r.each?.span));
        if (wrapped.length > 0 && wrapped.every((p) => p !== undefined)) delimiter = wrapped[0]?.name;
      }
    }
    uses.push({ slot: r.slot, span: r.span, role, form: r.form, ...(delimiter !== undefined ? { delimiter } : {}) });
  }
  uses.sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
  return uses;
}

/** True when the nodes hold nothing but whitespace text. */
export function blankNodes(nodes: readonly TemplateNode[]): boolean {
  return nodes.every((n) => n.type === 'text' && n.text.trim() === '');
}

export function normalizeRole(name: string): Role | undefined {
  const r = name.trim().toLowerCase();
  if (r === 'system' || r === 'developer' || r === 'user' || r === 'assistant' || r === 'tool') return r;
  if (r === 'model') return 'assistant';
  if (r === 'function') return 'tool';
  return undefined;
}

/**
 * `indexOf` with memory, for scanners whose position only moves forward. A needle found (or
 * missing) after position p is not searched for again before p is passed, so a text full of
 * unterminated tags costs linear time instead of one scan to the end per tag.
 */
export class ForwardFinder {
  private readonly memo = new Map<string, { from: number; at: number }>();
  private eol = { from: -1, at: -1 };

  constructor(private readonly text: string) {}

  indexOf(needle: string, from: number): number {
    const m = this.memo.get(needle);
    if (m && from >= m.from && (m.at === -1 || m.at >= from)) return m.at;
    const at = this.text.indexOf(needle, from);
    this.memo.set(needle, { from, at });
    return at;
  }

  /** Offset of the next line break at or after `from` (or the text length). */
  lineEnd(from: number): number {
    if (from >= this.eol.from && this.eol.at >= from) return this.eol.at;
    const re = /[\r\n]/g;
    re.lastIndex = from;
    const m = re.exec(this.text);
    this.eol = { from, at: m ? m.index : this.text.length };
    return this.eol.at;
  }
}

/** Offsets of a text normalised as Jinja reads it (\r\n → \n) back to offsets in the text, from `start`. */
export function jinjaSourceOffsets(text: string, start: number): (offset: number) => number {
  const collapsed: number[] = [];
  for (let i = text.indexOf('\r\n', start); i >= 0; i = text.indexOf('\r\n', i + 2)) collapsed.push(i - start - collapsed.length);
  return (offset) => {
    let lo = 0;
    let hi = collapsed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (collapsed[mid] < offset) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(text.length, start + offset + lo);
  };
}
