/**
 * Document symbols (outline, breadcrumbs, Go to Symbol): messages and the slots used in them for a
 * template; the budget keys and slot entries of a config; slots and their items in a fixture.
 * Parent ranges are widened to cover their children, as the LSP requires.
 */
import { SymbolKind } from 'vscode-languageserver';
import type { DocumentSymbol, Range } from 'vscode-languageserver';
import type { ConfigAnalysis, FixtureAnalysis, TemplateAnalysis } from '../core/analyze';
import type { Span } from '../core/types';
import { num } from './format';
import type { TextView } from './textMap';

const MAX_ITEM_SYMBOLS = 2_000;

function cover(span: Span, children: Span[]): Span {
  let { start, end } = span;
  for (const c of children) {
    start = Math.min(start, c.start);
    end = Math.max(end, c.end);
  }
  return { start, end };
}

function sym(view: TextView, name: string, kind: SymbolKind, span: Span, selection: Span, detail?: string, children?: DocumentSymbol[]): DocumentSymbol {
  const range: Range = view.range(span);
  // selectionRange must lie inside range.
  const sel = view.range({ start: Math.max(span.start, Math.min(selection.start, span.end)), end: Math.max(span.start, Math.min(selection.end, span.end)) });
  const s: DocumentSymbol = { name: name || ' ', kind, range, selectionRange: sel };
  if (detail) s.detail = detail;
  if (children?.length) s.children = children;
  return s;
}

export function templateSymbols(a: TemplateAnalysis, view: TextView): DocumentSymbol[] {
  const t = a.template;
  const slotDetail = (name: string): string | undefined => {
    const s = a.slots.find((x) => x.name === name);
    return s ? `${s.kind} · ${s.trust ?? 'trust?'}${s.budget !== undefined ? ` · ${num(s.budget)} tok` : ''}` : undefined;
  };
  const useSym = (u: TemplateAnalysis['template']['uses'][number]): DocumentSymbol =>
    sym(view, u.slot, u.form === 'each' ? SymbolKind.Array : SymbolKind.Variable, u.span, u.span, slotDetail(u.slot));
  const placed = new Set<number>();
  const out: DocumentSymbol[] = [];
  t.messages.forEach((m, i) => {
    const uses = t.uses.filter((u, k) => !u.path && !placed.has(k) && u.span.start >= m.span.start && u.span.end <= m.span.end && (placed.add(k), true));
    const span = cover(m.span, uses.map((u) => u.span));
    out.push(sym(view, m.role, SymbolKind.Namespace, span, m.markerSpan, `message ${i + 1}`, uses.map(useSym)));
  });
  t.uses.forEach((u, k) => {
    // Uses in another file of a composed request are that file's symbols.
    if (!placed.has(k) && !u.path) out.push(useSym(u));
  });
  return out;
}

export function configSymbols(a: ConfigAnalysis, view: TextView): DocumentSymbol[] {
  const doc = a.doc;
  const out: DocumentSymbol[] = [];
  for (const key of ['model', 'tokenizer', 'window', 'limits', 'output', 'margin', 'overhead']) {
    const k = doc.keySpan([key]);
    if (!k) continue;
    const v = doc.valueSpan([key]);
    out.push(sym(view, key, SymbolKind.Property, cover(k, v ? [v] : []), k, v ? doc.text.slice(v.start, Math.min(v.end, v.start + 60)).replace(/\s+/g, ' ') : undefined));
  }
  const slotsKey = doc.keySpan(['slots']);
  if (slotsKey) {
    const children: DocumentSymbol[] = [];
    const spans: Span[] = [];
    for (const [name, cfg] of Object.entries(doc.config?.slots ?? {})) {
      const k = doc.keySpan(['slots', name]);
      if (!k) continue;
      const v = doc.valueSpan(['slots', name]);
      const span = cover(k, v ? [v] : []);
      spans.push(span);
      const line = a.budget?.slots.find((s) => s.name === name);
      const budget = line?.budget !== undefined ? ` · ${num(line.budget)} tok` : '';
      children.push(sym(view, name, SymbolKind.Field, span, k, `${cfg.kind} · ${cfg.trust ?? 'trust?'}${budget}`));
    }
    const v = doc.valueSpan(['slots']);
    out.push(sym(view, 'slots', SymbolKind.Struct, cover(slotsKey, [...(v ? [v] : []), ...spans]), slotsKey, `${children.length} slots`, children));
  }
  return out;
}

export function fixtureSymbols(a: FixtureAnalysis, view: TextView): DocumentSymbol[] {
  const doc = a.doc;
  const out: DocumentSymbol[] = [];
  let items = 0;
  for (const [name, value] of Object.entries(doc.slots)) {
    const key = doc.slotKeySpans[name] ?? value.span;
    const children: DocumentSymbol[] = [];
    if (value.type === 'items') {
      for (const item of value.items) {
        if (items++ >= MAX_ITEM_SYMBOLS) break;
        children.push(sym(view, item.id ?? `#${item.index + 1}`, SymbolKind.Object, item.span, item.span, item.title ?? item.source ?? item.role));
      }
    }
    const span = cover(key, [value.span, ...children.map((c) => ({ start: view.offsetAt(c.range.start), end: view.offsetAt(c.range.end) }))]);
    const detail = value.type === 'items' ? `${value.items.length} items` : value.type === 'data' ? (value.value === null ? 'null' : Array.isArray(value.value) ? 'list' : typeof value.value) : value.fileRef ? `file ${value.fileRef.value}` : 'text';
    out.push(sym(view, name, SymbolKind.Field, span, key, detail, children));
  }
  return out;
}
