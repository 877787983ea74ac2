/**
 * Hard filters (seed 002, "Normalize and filter"): deterministic gates applied before anything is
 * counted or scored. An item fails a version, expiry or source-type filter only when it carries the
 * metadata the filter reads: a filter cannot judge what is not stated. Tenant isolation is the
 * exception (seed 002: "never rely on ranking to prevent cross-tenant leakage"): under a `tenant`
 * filter an item that states no tenant is excluded too (`filtered:tenant-missing`), unless
 * `tenant_missing: keep`; the caller exempts conversation history, the requester's own turns.
 * Each rejection names the config key that caused it: `filtered:<key>`.
 */
import type { Filters } from '../config/schema';
import type { FilterKey } from '../types';
import type { Omission, WorkItem } from './item';
import { timeOf } from './item';

/**
 * `version: "4.2"` accepts 4.2, 4.2.0 and 4.2.7 (the filter's dot-separated segments are a prefix of
 * the item's), and rejects 3.9 and 4.20. A leading `v` is ignored on both sides.
 */
export function versionMatches(itemVersion: string, wanted: string): boolean {
  const norm = (v: string) => v.trim().replace(/^v/i, '').split('.');
  const have = norm(itemVersion);
  const want = norm(wanted);
  if (want.length > have.length) return false;
  for (let i = 0; i < want.length; i++) if (have[i] !== want[i]) return false;
  return true;
}

/** `versionMatches` against one wanted version, memoized per item version (fixtures repeat a few versions). */
export function versionMatcher(wanted: string): (itemVersion: string) => boolean {
  const memo = new Map<string, boolean>();
  return (v) => {
    let m = memo.get(v);
    if (m === undefined) {
      m = versionMatches(v, wanted);
      memo.set(v, m);
    }
    return m;
  };
}

export interface FilterResult {
  kept: WorkItem[];
  omitted: Omission[];
}

export interface FilterOptions {
  /** Items without a tenant under a tenant filter: excluded (default, or `filters.tenant_missing`) or kept. */
  tenantMissing?: 'exclude' | 'keep';
}

/** Applies tenant, version, expiry and source-type filters in that order; the first failing one is the reason. */
export function applyFilters(items: readonly WorkItem[], filters: Filters | undefined, now: string | undefined, opts: FilterOptions = {}): FilterResult {
  if (!filters) return { kept: [...items], omitted: [] };
  const nowMs = timeOf(filters.now ?? now);
  const allowed = filters.source_types ? new Set(filters.source_types) : undefined;
  const excluded = filters.exclude_source_types ? new Set(filters.exclude_source_types) : undefined;
  const kept: WorkItem[] = [];
  const omitted: Omission[] = [];
  const matches = filters.version !== undefined ? versionMatcher(filters.version) : undefined;
  const dropUntenanted = (opts.tenantMissing ?? filters.tenant_missing ?? 'exclude') === 'exclude';
  for (const item of items) {
    const reason = rejection(item, filters, nowMs, dropUntenanted, matches, allowed, excluded);
    if (reason) omitted.push({ item, reason: `filtered:${reason}` });
    else kept.push(item);
  }
  return { kept, omitted };
}

function rejection(item: WorkItem, f: Filters, nowMs: number | undefined, dropUntenanted: boolean, matches?: (v: string) => boolean, allowed?: Set<string>, excluded?: Set<string>): FilterKey | undefined {
  if (f.tenant !== undefined) {
    if (item.tenant === undefined) {
      if (dropUntenanted) return 'tenant-missing';
    } else if (item.tenant !== f.tenant) return 'tenant';
  }
  if (matches && item.version !== undefined && !matches(item.version)) return 'version';
  // Without a reference time, expiry is not checked: reading the clock would make traces irreproducible.
  if (f.expired !== false && nowMs !== undefined) {
    const exp = timeOf(item.expires_at);
    if (exp !== undefined && exp < nowMs) return 'expired';
  }
  if (allowed && item.source_type !== undefined && !allowed.has(item.source_type)) return 'source_types';
  if (excluded && item.source_type !== undefined && excluded.has(item.source_type)) return 'exclude_source_types';
  return undefined;
}
