/**
 * Finds the delimiters a template wraps its placeholders in, so the trust rules can tell a
 * labelled slot (`<documents>{{docs}}</documents>`, `[EVIDENCE]...[/EVIDENCE]`, a fenced block,
 * triple quotes) from a bare one. Works on the template source, one message at a time: a
 * delimiter opened in the system message does not protect data in the user message.
 */
import type { Span } from '../types';

export interface DelimiterPair {
  /** Tag or label name (`documents`, `EVIDENCE`), or the fence itself (```, """). */
  name: string;
  /** Span of the opening marker (`<evidence id="...">`, `[EVIDENCE ev_1]`, the fence line). */
  open: Span;
  /** Span of the closing marker. */
  close: Span;
}

interface Marker {
  kind: 'xml' | 'bracket';
  closing: boolean;
  name: string;
  span: Span;
}

// Attribute and label runs are bounded so a long line of '<a' without '>' stays linear.
const XML_OPEN = /<([A-Za-z][\w:.-]{0,100})(?:\s[^<>\n]{0,300})?>/g;
const XML_CLOSE = /<\/([A-Za-z][\w:.-]*)\s*>/g;
const BRACKET_OPEN = /\[([A-Za-z][A-Za-z0-9_-]{0,100})(?:[ \t][^\]\n]{0,300})?\]/g;
const BRACKET_CLOSE = /\[\/([A-Za-z][A-Za-z0-9_-]*)\]/g;
const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})([^\n\r`]*)$/gm;
const TRIPLE = /"""|'''/g;

function collect(re: RegExp, text: string, base: number, make: (m: RegExpExecArray, span: Span) => Marker | undefined, out: Marker[]): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const marker = make(m, { start: base + m.index, end: base + m.index + m[0].length });
    if (marker) out.push(marker);
  }
}

/** All delimiter pairs inside `text.slice(start, end)`, with spans in `text`. */
export function findDelimiterPairs(text: string, start: number, end: number): DelimiterPair[] {
  const slice = text.slice(start, end);
  const pairs: DelimiterPair[] = [];

  const markers: Marker[] = [];
  collect(XML_OPEN, slice, start, (m, span) => (m[0].endsWith('/>') ? undefined : { kind: 'xml', closing: false, name: m[1], span }), markers);
  collect(XML_CLOSE, slice, start, (m, span) => ({ kind: 'xml', closing: true, name: m[1], span }), markers);
  collect(BRACKET_OPEN, slice, start, (m, span) => ({ kind: 'bracket', closing: false, name: m[1], span }), markers);
  collect(BRACKET_CLOSE, slice, start, (m, span) => ({ kind: 'bracket', closing: true, name: m[1], span }), markers);
  markers.sort((a, b) => a.span.start - b.span.start);

  // Tags pair like HTML: a closing tag closes the nearest open tag of its name, and anything
  // opened after that one and never closed is abandoned.
  const stacks: Record<Marker['kind'], Marker[]> = { xml: [], bracket: [] };
  for (const mk of markers) {
    const stack = stacks[mk.kind];
    if (!mk.closing) {
      stack.push(mk);
      continue;
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      if (stack[i].name.toLowerCase() === mk.name.toLowerCase()) {
        pairs.push({ name: stack[i].name, open: stack[i].span, close: mk.span });
        stack.length = i;
        break;
      }
    }
  }

  // Fenced code blocks: a closing fence uses the same character, is at least as long, and has no info string.
  let openFence: { char: string; len: number; span: Span } | undefined;
  FENCE.lastIndex = 0;
  for (let m = FENCE.exec(slice); m; m = FENCE.exec(slice)) {
    const span = { start: start + m.index, end: start + m.index + m[0].length };
    const fence = m[1];
    if (!openFence) openFence = { char: fence[0], len: fence.length, span };
    else if (fence[0] === openFence.char && fence.length >= openFence.len && m[2].trim() === '') {
      pairs.push({ name: '```', open: openFence.span, close: span });
      openFence = undefined;
    }
  }

  // Triple quotes pair in order of appearance, each kind on its own.
  const openQuote: Record<string, Span | undefined> = {};
  TRIPLE.lastIndex = 0;
  for (let m = TRIPLE.exec(slice); m; m = TRIPLE.exec(slice)) {
    const span = { start: start + m.index, end: start + m.index + 3 };
    const prev = openQuote[m[0]];
    if (prev) {
      pairs.push({ name: m[0], open: prev, close: span });
      openQuote[m[0]] = undefined;
    } else {
      openQuote[m[0]] = span;
    }
  }
  return pairs;
}

/** The innermost pair whose content encloses `span`. */
export function enclosingPair(pairs: readonly DelimiterPair[], span: Span, within?: Span): DelimiterPair | undefined {
  let best: DelimiterPair | undefined;
  for (const p of pairs) {
    if (p.open.end <= span.start && span.end <= p.close.start) {
      if (within && (p.open.start < within.start || p.close.end > within.end)) continue;
      if (!best || p.open.start > best.open.start) best = p;
    }
  }
  return best;
}

/** True when `span` lies inside an opening or closing marker (an attribute such as `id="{{d.id}}"`). */
export function insideMarker(pairs: readonly DelimiterPair[], span: Span): boolean {
  return pairs.some((p) => (p.open.start <= span.start && span.end <= p.open.end) || (p.close.start <= span.start && span.end <= p.close.end));
}
