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
 */
import type { Omission, WorkItem } from './item';
import { NONE, fingerprintOf } from './item';
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
