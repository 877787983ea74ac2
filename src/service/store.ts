/**
 * Where the service keeps what `POST /v1/validate` needs to check answers by `context_id`: the
 * evidence ids a response supplied (and the reasons the others were left out), under the response's
 * `context_id`.
 *
 * - `MemoryStore` (the default): a bounded LRU in the serving process. Replicas do not share it.
 * - `RedisStore` (redisStore.ts; `ctxlens serve --store redis://HOST:PORT/DB`): a shared Redis (or
 *   Valkey) server, through node-redis's client (`@redis/client`, loaded only when a store URL is
 *   given). Any replica validates any id. Entries expire after a TTL and an entry over the size bound is not
 *   stored; the server's own memory is bounded by its `maxmemory` (docs/service.md).
 *
 * Keys: `<prefix>ctx:<context_id>`. A `context_id` is a digest over the tenant, the permission
 * revision, the user, the product, the query and the trace's cache key (src/lib/identity.ts), so
 * two tenants or two permission revisions never share an entry; each entry also records a digest of
 * its tenant and permission revision, and a validation that names them is checked against it.
 *
 * A store that is down or slow never fails an assembly: the answer goes out (with
 * `ctxlens-context-stored: false`); a lookup answers `unavailable` (the service's 503
 * `store_unavailable`), never "unknown id"; `/healthz` says `degraded`. Credentials come from a file
 * or the environment (src/service/run.ts) and never appear in messages.
 */
import { createHash } from 'node:crypto';
import type { SuppliedEvidence } from '../lib/evidence';
import { Lru } from './lru';

/** What is kept per `context_id`. */
export interface StoredContext {
  evidence: SuppliedEvidence;
  /** Digest of the request's tenant and permission revision (scopeDigest). */
  scope: string;
}

/** The outcome of a lookup by id. */
export type Lookup = { found: StoredContext } | { missing: true } | { unavailable: string };

export interface StoreHealth {
  kind: 'memory' | 'redis';
  /** `up`: lookups work; `down`: lookups answer 503 and assemblies are not recorded. */
  status: 'up' | 'down';
  /** Why it is down (no credentials, no host names beyond the configured one). */
  reason?: string;
}

export interface ContextStore {
  readonly kind: 'memory' | 'redis';
  /** Seconds an entry is kept (a shared store's TTL). */
  readonly ttlSeconds?: number;
  /** Records an assembly; resolves false when it was not stored (store down, entry too large). Never rejects. */
  put(id: string, entry: StoredContext): Promise<boolean>;
  /** Looks an id up. Never rejects: a store that cannot answer gives `unavailable`. */
  get(id: string): Promise<Lookup>;
  health(): StoreHealth;
  /** Failed store operations since the start (a metric). */
  readonly failures: number;
  close(): Promise<void>;
}

/** The digest of a request's tenant and permission revision, recorded with its entry. */
export function scopeDigest(tenant: string | undefined, permissionRevision: string | number | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify([tenant ?? null, permissionRevision ?? null]))
    .digest('hex')
    .slice(0, 16);
}

/** Approximate bytes held by a supplied-evidence record (UTF-16 strings and per-entry overhead). */
export function evidenceBytes(e: SuppliedEvidence): number {
  let n = 64;
  for (const id of e.supplied) n += 2 * id.length + 16;
  for (const k in e.omitted) n += 2 * (k.length + e.omitted[k].length) + 32;
  return n;
}

/** The per-instance store: a bounded LRU (by entries and by bytes). */
export class MemoryStore implements ContextStore {
  readonly kind = 'memory' as const;
  readonly failures = 0;
  private readonly lru: Lru<string, StoredContext>;
  constructor(entries: number, bytes: number) {
    this.lru = new Lru<string, StoredContext>(entries, bytes, (s) => evidenceBytes(s.evidence) + 48);
  }

  get capacity(): number {
    return this.lru.capacity;
  }

  put(id: string, entry: StoredContext): Promise<boolean> {
    this.lru.set(id, entry);
    return Promise.resolve(true);
  }

  /** The synchronous lookup (the embedded handler without workers uses it). */
  lookup(id: string): Lookup {
    const found = this.lru.get(id);
    return found ? { found } : { missing: true };
  }

  get(id: string): Promise<Lookup> {
    return Promise.resolve(this.lookup(id));
  }

  health(): StoreHealth {
    return { kind: 'memory', status: 'up' };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface RedisTarget {
  tls: boolean;
  host: string;
  port: number;
  database: number;
  username?: string;
  password?: string;
}

/**
 * Reads `redis://[USER@]HOST[:PORT][/DB]` (or `rediss://` for TLS). `allowPassword` is false for a
 * URL from the command line: a password there shows in `ps`, so it must come from a file or the
 * environment. The messages never repeat the URL (it may hold a password).
 */
export function parseStoreUrl(text: string, allowPassword: boolean): { ok: true; target: RedisTarget } | { ok: false; message: string } {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return { ok: false, message: 'the store URL is not a URL; give redis://HOST:PORT/DB' };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return { ok: false, message: 'the store URL must start with redis:// or rediss:// (TLS)' };
  if (u.password && !allowPassword) return { ok: false, message: 'the store URL on the command line holds a password: give it with --store-password-file FILE or $CTXLENS_STORE_PASSWORD (or the whole URL in $CTXLENS_STORE_URL)' };
  if (!u.hostname) return { ok: false, message: 'the store URL names no host' };
  if ((u.search && u.search !== '?') || u.hash) return { ok: false, message: 'the store URL takes no query or fragment' };
  const port = u.port ? Number(u.port) : 6379;
  const db = u.pathname === '' || u.pathname === '/' ? 0 : Number(u.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0 || db > 1_000_000) return { ok: false, message: 'the store URL path is the database number (/0, /1, ...)' };
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return {
    ok: true,
    target: {
      tls: u.protocol === 'rediss:',
      host,
      port,
      database: db,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    },
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An entry as the store wrote it, or undefined for anything else. */
export function readEntry(text: string): StoredContext | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v) || v.v !== 1 || typeof v.s !== 'string' || !isRecord(v.e)) return undefined;
  const { supplied, omitted } = v.e;
  if (!Array.isArray(supplied) || !supplied.every((s) => typeof s === 'string') || !isRecord(omitted)) return undefined;
  // A null-prototype record, as suppliedEvidence makes: ids such as `__proto__` are plain keys.
  const o: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, r] of Object.entries(omitted)) if (typeof r === 'string') o[k] = r;
  return { scope: v.s, evidence: { supplied: supplied as string[], omitted: o } };
}
