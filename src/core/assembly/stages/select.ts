/**
 * Stage 7, select: which of a slot's ranked candidates go into its budget.
 *
 * - By score order (`select: rank`, the default): greedy packing (pack.ts, seed 001), `stop` or
 *   `skip`, `max_items`.
 * - By marginal value per token (`select: value-per-token`, seed 002 "Allocate the token budget"):
 *   repeatedly the item with the highest (score without novelty + novelty weight x novelty against
 *   what is already selected) / (tokens + per-item overhead). Novelty is 1 minus the highest word
 *   overlap (fingerprint.ts sketches) with a selected item that shares one of its four smallest
 *   word hashes (the MinHash candidates; the 32 most recent per hash), so each evaluation is
 *   bounded. Novelty only falls as the selection grows, so a lazy greedy (re-evaluate the best,
 *   keep it if it is still the best) gives what re-evaluating every item would. Items without
 *   scores all have value 1.
 * - Coverage (`requires: [subtopic]` on the slot, `covers: [subtopic]` on items): before filling,
 *   the selector keeps the best item of each required subtopic no kept item covers yet.
 * - Diversity (`max_per_source`): at most that many items of one source (`max-per-source`).
 *
 * History slots go through their policy instead (history.ts); required slots are never cut.
 */
import type { SlotConfig } from '../../config/schema';
import type { Omission, WorkItem } from '../item';
import { fingerprintOf, metaList } from '../item';
import { pack } from '../pack';
import { sketchOverlap } from '../fingerprint';
import type { Selection, SelectOptions } from './state';
export type { Picked, Selection, SelectOptions } from './state';

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
/** Smallest word hashes of a sketch used as keys, and selected items compared per key. */
const MINHASH_KEYS = 4;
const MINHASH_POSTINGS = 32;

/** The subtopics an item covers (`covers: [subtopic]`). */
export function coversOf(item: WorkItem): string[] {
  return metaList(item, 'covers');
}

export function selectItems(ranked: readonly WorkItem[], opts: SelectOptions): Omit<Selection, 'cost' | 'history'> {
  const cfg = opts.cfg;
  const mode = cfg?.select ?? 'rank';
  const requires = cfg?.requires ?? [];
  const perSource = cfg?.max_per_source;
  const coverFor = new Map<WorkItem, string>();
  const valuePerToken = new Map<WorkItem, number>();
  const policy = cfg?.pack ?? 'stop';
  const maxItems = cfg?.max_items;
  if (mode === 'rank' && !requires.length && perSource === undefined) {
    const p = pack(ranked, opts.budget, opts.overhead, policy, maxItems);
    return { picked: { kept: p.kept, omitted: p.omitted, used: p.used }, coverFor, valuePerToken };
  }

  const cap = opts.budget ?? Number.POSITIVE_INFINITY;
  const cost = (i: WorkItem) => i.tokens + opts.overhead;
  const value = (i: WorkItem, overlap: number) => Math.max(0, i.base ?? i.score ?? (i.breakdown ? 0 : 1)) + (i.base !== undefined ? opts.novelty * (1 - overlap) : 0);
  const ratio = (i: WorkItem, overlap: number) => value(i, overlap) / Math.max(1, cost(i));
  const rankPos = new Map(ranked.map((it, k) => [it, k]));
  // Preference order for coverage picks: rank order, or the best value per token (nothing selected yet).
  const preferred = mode === 'rank' ? [...ranked] : [...ranked].sort((a, b) => ratio(b, 0) - ratio(a, 0) || rankPos.get(a)! - rankPos.get(b)!);

  const kept: WorkItem[] = [];
  const chosen = new Set<WorkItem>();
  const omitted: Omission[] = [];
  const decided = new Set<WorkItem>();
  const sources = new Map<string, number>();
  let used = 0;
  const sourceFull = (i: WorkItem) => perSource !== undefined && i.source !== undefined && (sources.get(i.source) ?? 0) >= perSource;
  // Selected items by their smallest word hashes (MinHash keys): two texts that overlap much share
  // their smallest hash with a probability equal to their overlap, so these are the items whose
  // overlap can take novelty away; only they are compared, the most recent MINHASH_POSTINGS per key.
  const byKey = new Map<number, WorkItem[]>();
  const overlapWithKept = (i: WorkItem) => {
    let m = 0;
    const sk = fingerprintOf(i).sketch;
    const seen = new Set<WorkItem>();
    for (let h = 0; h < Math.min(MINHASH_KEYS, sk.length) && m < 1; h++) {
      const list = byKey.get(sk[h]);
      if (!list) continue;
      for (let k = list.length - 1; k >= Math.max(0, list.length - MINHASH_POSTINGS); k--) {
        const other = list[k];
        if (seen.has(other)) continue;
        seen.add(other);
        m = Math.max(m, sketchOverlap(sk, fingerprintOf(other).sketch));
        if (m >= 1) break;
      }
    }
    return m;
  };
  const take = (i: WorkItem) => {
    if (mode === 'value-per-token') {
      valuePerToken.set(i, round4(ratio(i, overlapWithKept(i))));
      const sk = fingerprintOf(i).sketch;
      for (let h = 0; h < Math.min(MINHASH_KEYS, sk.length); h++) {
        const list = byKey.get(sk[h]);
        if (list) list.push(i);
        else byKey.set(sk[h], [i]);
      }
    }
    kept.push(i);
    chosen.add(i);
    decided.add(i);
    used += cost(i);
    if (i.source !== undefined) sources.set(i.source, (sources.get(i.source) ?? 0) + 1);
  };
  const omit = (i: WorkItem, reason: Omission['reason']) => {
    omitted.push({ item: i, reason });
    decided.add(i);
  };

  // ---- Coverage first: the preferred item of each required subtopic not covered yet.
  for (const sub of requires) {
    if (kept.some((k) => coversOf(k).includes(sub))) continue;
    if (maxItems !== undefined && kept.length >= maxItems) break;
    const hit = preferred.find((i) => !chosen.has(i) && coversOf(i).includes(sub) && !sourceFull(i) && used + cost(i) <= cap);
    if (hit) {
      take(hit);
      coverFor.set(hit, sub);
    }
  }

  // ---- Then the rest.
  let stopped = false;
  const consider = (i: WorkItem): boolean => {
    if (stopped) {
      omit(i, 'stop-policy');
      return true;
    }
    if (maxItems !== undefined && kept.length >= maxItems) {
      omit(i, 'max-items');
      return true;
    }
    if (sourceFull(i)) {
      omit(i, 'max-per-source');
      return true;
    }
    if (used + cost(i) <= cap) {
      take(i);
      return true;
    }
    omit(i, 'over-slot-budget');
    if (policy === 'stop') stopped = true;
    return true;
  };
  if (mode === 'rank') {
    for (const i of ranked) if (!decided.has(i)) consider(i);
    kept.sort((a, b) => rankPos.get(a)! - rankPos.get(b)!);
  } else {
    // Lazy greedy on value per token: a stale bound is re-evaluated against the current selection.
    type Entry = { i: WorkItem; r: number; at: number; pos: number };
    const better = (a: Entry, b: Entry) => a.r > b.r || (a.r === b.r && a.pos < b.pos);
    const heap = new Heap<Entry>(better);
    for (const i of preferred) if (!decided.has(i)) heap.push({ i, r: ratio(i, 0), at: kept.length, pos: rankPos.get(i)! });
    const fresh = (e: Entry) => e.at === kept.length || e.i.base === undefined || opts.novelty === 0;
    while (heap.size) {
      const top = heap.pop()!;
      if (!fresh(top)) {
        top.r = ratio(top.i, overlapWithKept(top.i));
        top.at = kept.length;
        heap.push(top);
        continue;
      }
      consider(top.i);
    }
  }
  return { picked: { kept, omitted, used }, coverFor, valuePerToken };
}

/** A binary heap; `better(a, b)` is true when a comes out before b. */
class Heap<T> {
  private readonly a: T[] = [];
  constructor(private readonly better: (x: T, y: T) => boolean) {}
  get size(): number {
    return this.a.length;
  }
  push(x: T): void {
    const a = this.a;
    a.push(x);
    let k = a.length - 1;
    while (k > 0) {
      const p = (k - 1) >> 1;
      if (!this.better(a[k], a[p])) break;
      [a[k], a[p]] = [a[p], a[k]];
      k = p;
    }
  }
  pop(): T | undefined {
    const a = this.a;
    if (!a.length) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      let k = 0;
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < a.length && this.better(a[l], a[m])) m = l;
        if (r < a.length && this.better(a[r], a[m])) m = r;
        if (m === k) break;
        [a[k], a[m]] = [a[m], a[k]];
        k = m;
      }
    }
    return top;
  }
}
