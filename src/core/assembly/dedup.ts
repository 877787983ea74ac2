/**
 * Deduplication (seed 002, step 3). Exact copies are found by content (the text itself is the
 * hash-map key: the engine's string hash is a content hash that costs nothing extra),
 * near-duplicates by normalized text (lowercase, punctuation removed, whitespace collapsed), looked
 * up by the hash of the normalized text (fingerprint.ts) and confirmed by comparing the normalized
 * texts. Each item costs one or two hash-map lookups, so the stage is linear in the number of items.
 *
 * Version differences are never erased: two items merge only when their versions do not differ
 * (both absent or equal), even when their text is identical. The first item of a group (fixture
 * order) is kept; it records every merged source and id, and takes the group's highest authority
 * and relevance so that merging never lowers its rank.
 *
 * Near-duplicates beyond normalization (`dedup: { near: 0.8 }`, `nearDedup`): the Jaccard
 * similarity of the two texts' sets of word shingles (5 consecutive normalized words by default) at
 * or above the threshold, again only within one version. Candidates are found through an index of
 * the kept items' shingles, so unrelated texts are never compared; each candidate's similarity is
 * then computed exactly from the two sorted shingle sets. The shingle hashes are 52 bits wide, so a
 * collision is negligible, and only the threshold decides.
 */
import type { Omission, WorkItem } from './item';
import { NONE, fingerprintOf, itemScan } from './item';
import { normalizeForDedup } from './normalize';

export { normalizeForDedup } from './normalize';

export interface DedupResult {
  kept: WorkItem[];
  omitted: Omission[];
}

export function dedup(items: readonly WorkItem[]): DedupResult {
  // version -> text -> first item; version -> normalized text -> first item.
  const exact = new Map<string, Map<string, WorkItem>>();
  const near = new Map<string, Map<string, WorkItem[]>>();
  const bucket = <T>(m: Map<string, Map<string, T>>, v: string) => {
    let b = m.get(v);
    if (!b) m.set(v, (b = new Map()));
    return b;
  };
  const kept: WorkItem[] = [];
  const omitted: Omission[] = [];
  for (const item of items) {
    const version = item.version ?? '\u0000none';
    const exactMap = bucket(exact, version);
    const nearMap = bucket(near, version);
    let first = exactMap.get(item.text);
    let nearKey: string | undefined;
    if (!first) {
      nearKey = fingerprintOf(item).key;
      const candidates = nearMap.get(nearKey);
      if (candidates) {
        const norm = normalizeForDedup(item.text);
        first = candidates.find((c) => normalizeForDedup(c.text) === norm);
      }
    }
    if (first) {
      merge(first, item);
      omitted.push({ item, reason: `duplicate-of:${first.id}` });
      continue;
    }
    exactMap.set(item.text, item);
    if (nearKey !== undefined) {
      const list = nearMap.get(nearKey);
      if (list) list.push(item);
      else nearMap.set(nearKey, [item]);
    }
    kept.push(item);
  }
  return { kept, omitted };
}

function merge(into: WorkItem, dup: WorkItem): void {
  if (into.mergedIds === NONE) into.mergedIds = [];
  if (into.merged === NONE) into.merged = [];
  into.mergedIds.push(dup.id);
  for (const s of [dup.source, ...dup.merged]) {
    if (s !== undefined && s !== into.source && !into.merged.includes(s)) into.merged.push(s);
  }
  if (dup.authority !== undefined && (into.authority === undefined || dup.authority > into.authority)) into.authority = dup.authority;
  if (dup.relevance !== undefined && (into.relevance === undefined || dup.relevance > into.relevance)) into.relevance = dup.relevance;
}

/** Words per shingle for near-duplicates, unless the config says otherwise. */
export const DEFAULT_SHINGLE = 5;
/** A shingle shared by more kept items than this is boilerplate: it finds no candidates (similarity stays exact). */
const MAX_POSTINGS = 64;

/** The sorted, distinct 52-bit hashes of a text's word shingles (the whole text when it has fewer words). */
export function shingles(text: string, size = DEFAULT_SHINGLE): number[] {
  const words = normalizeForDedup(text).split(' ').filter((w) => w !== '');
  if (!words.length) return [];
  const n = Math.max(1, words.length - size + 1);
  const out = new Set<number>();
  for (let i = 0; i < n; i++) {
    let h1 = 0x811c9dc5 | 0;
    let h2 = 0x01000193 | 0;
    for (let k = i; k < Math.min(words.length, i + size); k++) {
      const w = words[k];
      for (let c = 0; c < w.length; c++) {
        const ch = w.charCodeAt(c);
        h1 = Math.imul(h1 ^ ch, 0x01000193);
        h2 = Math.imul(h2 ^ ch, 0x5bd1e995) ^ (h2 >>> 15);
      }
      h1 = Math.imul(h1 ^ 32, 0x01000193);
      h2 = Math.imul(h2 ^ 32, 0x5bd1e995) ^ (h2 >>> 15);
    }
    out.add((h1 >>> 0) * 1_048_576 + (h2 >>> 12));
  }
  return [...out].sort((a, b) => a - b);
}

/** Jaccard similarity of two sorted sets. */
export function jaccard(a: readonly number[], b: readonly number[]): number {
  if (!a.length && !b.length) return 1;
  let i = 0;
  let j = 0;
  let inter = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      inter++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return inter / (a.length + b.length - inter);
}

/**
 * Merges near-duplicates of the same version (Jaccard of word shingles >= threshold) into the first
 * of them in fixture order, keeping every source: `near-duplicate-of:<id>`.
 */
export function nearDedup(items: readonly WorkItem[], threshold: number, size = DEFAULT_SHINGLE): DedupResult {
  const kept: WorkItem[] = [];
  const omitted: Omission[] = [];
  const sets: number[][] = [];
  // version -> shingle -> indices into `kept`.
  const index = new Map<string, Map<number, number[]>>();
  for (const item of items) {
    const version = item.version ?? '\u0000none';
    let postings = index.get(version);
    if (!postings) index.set(version, (postings = new Map()));
    // Shared with other items and requests through the content cache: never changed here.
    const set = itemScan(item, `shingles:${size}`, (t) => shingles(t, size));
    // Shared shingles per kept item, from the index; boilerplate shingles (long postings) are
    // skipped and only bound the count from above.
    const counts = new Map<number, number>();
    let skipped = 0;
    for (const h of set) {
      const list = postings.get(h);
      if (!list) continue;
      if (list.length > MAX_POSTINGS) {
        skipped++;
        continue;
      }
      for (const k of list) counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    let best = -1;
    let bestSim = -1;
    for (const [k, shared] of counts) {
      const other = sets[k];
      const union = set.length + other.length;
      // Jaccard s / (|A| + |B| - s) >= t  <=>  s >= t (|A| + |B|) / (1 + t).
      if (shared + skipped + 1e-9 < (threshold * union) / (1 + threshold)) continue;
      const sim = skipped ? jaccard(set, other) : shared / (union - shared);
      if (sim >= threshold && (sim > bestSim || (sim === bestSim && k < best))) {
        best = k;
        bestSim = sim;
      }
    }
    if (best >= 0) {
      const first = kept[best];
      merge(first, item);
      omitted.push({ item, reason: `near-duplicate-of:${first.id}` });
      continue;
    }
    const k = kept.length;
    kept.push(item);
    sets.push(set);
    for (const h of set) {
      const list = postings.get(h);
      if (list) list.push(k);
      else postings.set(h, [k]);
    }
  }
  return { kept, omitted };
}
