/**
 * The working item every pipeline stage passes along: one fixture value (a list item, or a whole
 * text value) with its slot, stable id, token count and content hash. Stages never mutate the
 * fixture; they build and filter arrays of these.
 */
import type { FixtureItem, OmitReason, ScoreBreakdown, Span } from '../types';
import type { Fingerprint } from './fingerprint';
import type { Facts } from './contentCache';
import { contentFingerprint, contentScan, contentSha, factsOf } from './contentCache';
import { timeOf } from '../time';

/** Metadata a work item carries over from its fixture item unchanged. */
type ItemMetadata = Pick<FixtureItem, 'role' | 'at' | 'title' | 'source' | 'source_type' | 'version' | 'authority' | 'relevance' | 'published_at' | 'expires_at' | 'tenant' | 'meta' | 'textKey'>;

export interface WorkItem extends ItemMetadata {
  slot: string;
  /** Position in the fixture list (0 for a text value): the tie-breaker of every ordering. */
  index: number;
  /** Stable id: the fixture's `id`, else `<slot>_<index + 1>`. */
  id: string;
  /** True when the fixture gave the id (citations need a real one). */
  hasId: boolean;
  text: string;
  tokens: number;
  /** SHA-256 of the text, computed on first use (see `itemSha`): only retained items need one. */
  sha256?: string;
  /** Normalized-text hash and word sketch (fingerprint.ts), computed once for dedup and novelty. */
  fp?: Fingerprint;
  /** The text's content cache entry (contentCache.ts), looked up once; null when the text is not kept. */
  facts?: Facts | null;
  /** Sources of items merged into this one by deduplication (not including its own). */
  merged: string[];
  /** Ids of items merged into this one. */
  mergedIds: string[];
  score?: number;
  /** The score's weighted parts (score.ts), and the score without novelty (for marginal value per token). */
  breakdown?: ScoreBreakdown;
  base?: number;
  /** Contradiction risk computed from its unresolved conflicts (stages/conflicts.ts). */
  risk?: number;
  /** Items it contradicts, for the envelope's conflict note; the shared empty list until a conflict is found. */
  conflicts?: readonly ConflictNote[];
  /** Time key for chronological order when it differs from `at` (a summary sits where its turns were). */
  sortAt?: number;
  /** Where the item is in the fixture file (the value span of a text slot). */
  span: Span;
  textSpan: Span;
  /** Set when the text came from a `{ file: ... }` reference. */
  file?: string;
}

export interface Omission {
  item: WorkItem;
  reason: OmitReason;
}

/** One item a labelled conflict names in the envelope: `Conflicts with: ev_0201 (version 3.9)`. */
export interface ConflictNote {
  id: string;
  version?: string;
  source_type?: string;
}

/** Generated ids are `<slot>_<n>` with n 1-based; a clash with a written id gets a `~k` suffix. */
/**
 * The shared empty list of `merged` / `mergedIds` until dedup merges something (most items never
 * do, and two arrays per item would double the allocations of a large fixture). Frozen, so a stray
 * push fails loudly instead of leaking into every item.
 */
export const NONE = Object.freeze([]) as unknown as string[];

export function fromFixtureItem(slot: string, item: FixtureItem, text: string, id: string, hasId: boolean, tokens: number): WorkItem {
  // Every field is written, present or not, so all items share one object shape: the stages read
  // them in hot loops, and mixed shapes would make every property access polymorphic.
  return {
    slot,
    index: item.index,
    id,
    hasId,
    text,
    tokens,
    sha256: undefined,
    fp: undefined,
    facts: undefined,
    role: item.role,
    at: item.at,
    title: item.title,
    source: item.source,
    source_type: item.source_type,
    version: item.version !== undefined && item.version !== null ? String(item.version) : undefined,
    authority: typeof item.authority === 'number' ? item.authority : undefined,
    relevance: typeof item.relevance === 'number' ? item.relevance : undefined,
    published_at: item.published_at,
    expires_at: item.expires_at,
    tenant: item.tenant,
    meta: item.meta ?? {},
    textKey: item.textKey,
    merged: NONE,
    mergedIds: NONE,
    score: undefined,
    breakdown: undefined,
    base: undefined,
    risk: undefined,
    conflicts: NONE as unknown as ConflictNote[],
    sortAt: undefined,
    span: item.span,
    textSpan: item.textSpan,
    file: item.file,
  };
}

export { timeOf };

/** The item's content hash, computed once per item, and once per text while the content cache keeps it. */
export function itemSha(item: WorkItem): string {
  if (item.sha256 === undefined) item.sha256 = contentSha(item.text, itemFacts(item));
  return item.sha256;
}

/** The item's fingerprint, computed once per item, and once per text while the content cache keeps it. */
export function fingerprintOf(item: WorkItem): Fingerprint {
  if (item.fp === undefined) item.fp = contentFingerprint(item.text, itemFacts(item));
  return item.fp;
}

/** The item's content cache entry, looked up once per item. */
function itemFacts(item: WorkItem): Facts | undefined {
  if (item.facts === undefined) item.facts = factsOf(item.text) ?? null;
  return item.facts ?? undefined;
}

/** `contentScan` of the item's text (contentCache.ts): `key` names the scan, its options and its data version. */
export function itemScan<T>(item: WorkItem, key: string, scan: (text: string) => T): T {
  return contentScan(item.text, key, scan, itemFacts(item));
}

/** A metadata value as a string (strings and numbers), else undefined. */
export function metaString(item: WorkItem, key: string): string | undefined {
  const v = item.meta[key];
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** A metadata value as a list of strings: a list of strings and numbers, or one such value. */
export function metaList(item: WorkItem, key: string): string[] {
  const v = item.meta[key];
  const one = (x: unknown): string | undefined => (typeof x === 'string' && x.trim() !== '' ? x : typeof x === 'number' && Number.isFinite(x) ? String(x) : undefined);
  if (Array.isArray(v)) return v.map(one).filter((x): x is string => x !== undefined);
  const s = one(v);
  return s === undefined ? [] : [s];
}
