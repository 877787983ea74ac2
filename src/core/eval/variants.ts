/**
 * Position variants (seed 000, 3.4: "A position test holds the question, source text, and
 * generation settings constant while moving the relevant passage"): the same request with one
 * kept item moved to the start, the middle or the end of its slot, everything else held fixed.
 *
 * Done through the config and the fixture only: the slot is ordered `rank` with `max_items` at the
 * number it kept, and the ranking is made the wanted order (the weights become relevance alone,
 * and each kept item's relevance encodes its wanted place; every other list slot's relevance
 * encodes its own baseline order, so it renders as before). Items the baseline dropped rank last
 * and stay dropped. Each variant is checked: every slot keeps exactly the items it kept, and the
 * moved item sits where it was asked to, or the variant is refused.
 */
import type { ContextConfig, SlotConfig } from '../config/schema';
import type { AssemblyResult, FixtureDoc, FixtureItem } from '../types';
import type { Subject } from './subject';
import { assembleWith, mapItems } from './subject';
import { RETRIEVAL_ORDER, itemId } from './ablate';

export type PositionName = 'start' | 'middle' | 'end';

export interface Variant {
  /** The position as asked: start, middle, end, or a 1-based number. */
  position: string;
  /** 0-based index of the moved item in its slot. */
  index: number;
  /** The slot's item ids in request order. */
  order: string[];
  result: AssemblyResult;
}

export interface VariantSet {
  slot: string;
  item: string;
  /** Items kept in the slot. */
  count: number;
  baseline: AssemblyResult;
  variants: Variant[];
}

/** 0-based index of a position among n places: start 0, middle floor((n - 1) / 2), end n - 1, or a 1-based number. */
export function positionIndex(position: string, n: number): number | undefined {
  if (position === 'start') return 0;
  if (position === 'end') return n - 1;
  if (position === 'middle') return Math.floor((n - 1) / 2);
  if (/^\d+$/.test(position)) {
    const k = Number(position);
    return k >= 1 && k <= n ? k - 1 : undefined;
  }
  return undefined;
}

/** The kept ids of each slot, in request order. */
function keptBySlot(result: AssemblyResult): Map<string, string[]> {
  const out = new Map<string, Array<{ id: string; position: number }>>();
  for (const r of result.trace.retained) {
    const list = out.get(r.slot) ?? [];
    list.push({ id: r.id, position: r.position });
    out.set(r.slot, list);
  }
  return new Map([...out].map(([slot, list]) => [slot, list.sort((a, b) => a.position - b.position).map((x) => x.id)]));
}

/**
 * The fixture and config that render `order` (ids) in `slot`, every other list slot in the
 * baseline's order.
 */
function pinned(subject: Subject, fixture: FixtureDoc, baseline: Map<string, string[]>, slot: string, order: string[], marker: string): { fixture: FixtureDoc; config: ContextConfig } {
  const slots: Record<string, SlotConfig> = { ...(subject.config.slots ?? {}) };
  const wanted = new Map(baseline);
  wanted.set(slot, order);
  for (const [name, ids] of wanted) {
    const cfg = slots[name];
    const value = fixture.slots[name];
    if (!cfg || value?.type !== 'items' || cfg.kind === 'history') continue;
    slots[name] = { ...cfg, order: 'rank', max_items: Math.max(1, ids.length) };
  }
  const config: ContextConfig = { ...subject.config, slots, scoring: { ...RETRIEVAL_ORDER } };
  const rank = new Map<string, Map<string, number>>();
  for (const [name, ids] of wanted) rank.set(name, new Map(ids.map((id, i) => [id, i])));
  const fx = mapItems(fixture, marker, (item: FixtureItem, name: string) => {
    const r = rank.get(name);
    if (!r || slots[name]?.kind === 'history') return item;
    const n = r.size;
    const i = r.get(itemId(item, name));
    // Kept items in (0, 1], best first; dropped ones at 0, after every kept one.
    return { ...item, relevance: i === undefined ? 0 : (n - i) / n };
  });
  return { fixture: fx, config };
}

export function positionVariants(subject: Subject, fixture: FixtureDoc | undefined, item: string, positions: readonly string[]): { set?: VariantSet; error?: string } {
  if (!fixture) return { error: 'position variants need a fixture' };
  const baseline = assembleWith(subject, fixture);
  if (!baseline.ok) return { error: `the request cannot be built: ${baseline.error}` };
  const kept = keptBySlot(baseline);
  const hit = baseline.trace.retained.find((r) => r.id === item);
  if (!hit) {
    const o = baseline.trace.omitted.find((x) => x.id === item);
    return { error: o ? `${item} is not in the request (${o.slot}: ${o.reason}); only kept items can be moved` : `${item} is not an item of fixture ${fixture.name}` };
  }
  const slot = hit.slot;
  if (subject.config.slots?.[slot]?.kind === 'history') return { error: `${item} is a history turn; turns keep their conversation order` };
  if (fixture.slots[slot]?.type !== 'items') return { error: `${slot} is not a list slot` };
  const ids = kept.get(slot) ?? [];
  const rest = ids.filter((id) => id !== item);
  const variants: Variant[] = [];
  for (const position of positions) {
    const index = positionIndex(position, ids.length);
    if (index === undefined) return { error: `position '${position}' is not start, middle, end or a number from 1 to ${ids.length}` };
    const order = [...rest.slice(0, index), item, ...rest.slice(index)];
    const p = pinned(subject, fixture, kept, slot, order, `variant ${item}@${position}`);
    const result = assembleWith(subject, p.fixture, p.config);
    if (!result.ok) return { error: `variant ${position}: the request cannot be built: ${result.error}` };
    const got = keptBySlot(result);
    const extra = [...got.keys()].find((name) => !kept.has(name));
    if (extra) return { error: `variant ${position}: slot ${extra} would keep ${got.get(extra)!.join(', ')}, which the baseline does not; the position cannot be changed without changing what is kept` };
    for (const [name, list] of kept) {
      const mine = got.get(name) ?? [];
      const same = name === slot ? mine.join('\u0000') === order.join('\u0000') : [...mine].sort().join('\u0000') === [...list].sort().join('\u0000');
      if (!same) return { error: `variant ${position}: slot ${name} would keep ${mine.join(', ') || 'nothing'} instead of ${(name === slot ? order : list).join(', ')}; the position cannot be changed without changing what is kept` };
    }
    variants.push({ position, index, order, result });
  }
  return { set: { slot, item, count: ids.length, baseline, variants } };
}
