/**
 * Deduplication (seed 002, step 3). Exact copies are found by content hash, near-duplicates by
 * normalized text (lowercase, punctuation removed, whitespace collapsed). Both are one hash-map
 * lookup per item, so the stage is linear in the number of items.
 *
 * Version differences are never erased: two items merge only when their versions do not differ
 * (both absent or equal), even when their text is identical. The first item of a group (fixture
 * order) is kept; it records every merged source and id, and takes the group's highest authority
 * and relevance so that merging never lowers its rank.
 */
import type { Omission, WorkItem } from './item';

/** The near-duplicate key of a text. */
export function normalizeForDedup(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, '')
    .replace(/\s+/gu, ' ')
    .trim();
}

export interface DedupResult {
  kept: WorkItem[];
  omitted: Omission[];
}

export function dedup(items: readonly WorkItem[]): DedupResult {
  const exact = new Map<string, WorkItem>();
  const near = new Map<string, WorkItem>();
  const kept: WorkItem[] = [];
  const omitted: Omission[] = [];
  for (const item of items) {
    const version = item.version ?? '\u0000none';
    const exactKey = `${item.sha256}\u0000${version}`;
    let first = exact.get(exactKey);
    let nearKey: string | undefined;
    if (!first) {
      nearKey = `${normalizeForDedup(item.text)}\u0000${version}`;
      first = near.get(nearKey);
    }
    if (first) {
      merge(first, item);
      omitted.push({ item, reason: `duplicate-of:${first.id}` });
      continue;
    }
    exact.set(exactKey, item);
    if (nearKey !== undefined) near.set(nearKey, item);
    kept.push(item);
  }
  return { kept, omitted };
}

function merge(into: WorkItem, dup: WorkItem): void {
  into.mergedIds.push(dup.id);
  for (const s of [dup.source, ...dup.merged]) {
    if (s !== undefined && s !== into.source && !into.merged.includes(s)) into.merged.push(s);
  }
  if (dup.authority !== undefined && (into.authority === undefined || dup.authority > into.authority)) into.authority = dup.authority;
  if (dup.relevance !== undefined && (into.relevance === undefined || dup.relevance > into.relevance)) into.relevance = dup.relevance;
}
