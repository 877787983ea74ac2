/**
 * Stable identities of an assembled request, for callers that cache or log it: the context id
 * (seed 002: "every cache key must include the inputs that affect correctness") and the template
 * version. The trace's `cache_key` already covers the template text, the config (with the call's
 * filters and input limit), the values, the model, the tokenizer, the reference time, partials
 * and the pipeline version; the context id adds what the assembly never sees: who asks (user and
 * tenant scope), under which permission revision, the normalised query, and the library version.
 */
import type { Trace } from '../core/types';
import { canonicalJson, sha256 } from '../core/assembly';
import { VERSION } from './version';

export interface RequestScope {
  /** The user's question; normalised (Unicode NFKC, whitespace collapsed, trimmed) before hashing. */
  query?: string;
  user_id?: string;
  tenant?: string;
  /** Revision of the caller's permissions: a change makes a new id, so a cached context never outlives an access change. */
  permission_revision?: string | number;
  product?: string;
}

/** NFKC, runs of white space as one space, trimmed: the same question typed twice is one query. */
export function normaliseQuery(q: string): string {
  return q.normalize('NFKC').replace(/\s+/gu, ' ').trim();
}

/** `ctx_` + 32 hex digits of SHA-256 over the trace's cache key and the request scope. */
export function contextId(trace: Pick<Trace, 'cache_key'>, scope: RequestScope = {}): string {
  const key = canonicalJson({
    v: 1,
    library: VERSION,
    cache_key: trace.cache_key,
    query: scope.query === undefined ? null : normaliseQuery(scope.query),
    user_id: scope.user_id ?? null,
    tenant: scope.tenant ?? null,
    permission_revision: scope.permission_revision ?? null,
    product: scope.product ?? null,
  });
  return `ctx_${sha256(key).slice(0, 32)}`;
}

/** `<declared version>+<first 12 hex digits of the template's SHA-256>`, `unversioned+…` without a declared version. */
export function templateVersion(trace: Pick<Trace, 'template'>, declared: string | undefined): string {
  return `${declared ?? 'unversioned'}+${trace.template.sha256.slice(0, 12)}`;
}
