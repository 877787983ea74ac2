/**
 * What happened to each fixture item in an assembly: kept (where it landed) or omitted (why),
 * looked up by slot and item from the trace. Shared by the fixture lenses and hovers.
 */
import type { TemplateAnalysis } from '../core/analyze';
import type { FixtureItem, OmittedItem, TraceItem } from '../core/types';

export interface Verdict {
  slot: string;
  id: string;
  tokens: number;
  score?: number;
  kept?: TraceItem;
  omitted?: OmittedItem;
}

/**
 * The id the trace uses for an item: its own `id`, otherwise the positional id the assembler
 * gives it (see `fallbackItemIds`).
 */
export function itemIds(slot: string, item: FixtureItem): string[] {
  return item.id !== undefined ? [item.id] : fallbackItemIds(slot, item.index);
}

/**
 * Ids an item without `id` carries in a trace: the assembler names it `<slot>_<index + 1>`, with a
 * `~k` suffix when a written id already took that name (src/core/assembly/item.ts).
 */
export function fallbackItemIds(slot: string, index: number): string[] {
  const base = `${slot}_${index + 1}`;
  return [base, `${base}~2`, `${base}~3`];
}

export function itemVerdicts(a: TemplateAnalysis): { lookup(slot: string, item: FixtureItem): Verdict | undefined } {
  const trace = a.assembly?.trace;
  const kept = new Map<string, TraceItem>();
  const omitted = new Map<string, OmittedItem>();
  for (const t of trace?.retained ?? []) kept.set(`${t.slot}\0${t.id}`, t);
  for (const o of trace?.omitted ?? []) if (!omitted.has(`${o.slot}\0${o.id}`)) omitted.set(`${o.slot}\0${o.id}`, o);
  return {
    lookup(slot, item) {
      for (const id of itemIds(slot, item)) {
        const k = kept.get(`${slot}\0${id}`);
        if (k) return { slot, id, tokens: k.tokens, score: k.score, kept: k };
        const o = omitted.get(`${slot}\0${id}`);
        if (o) return { slot, id, tokens: o.tokens, score: o.score, omitted: o };
      }
      return undefined;
    },
  };
}
