/**
 * The shared context store on Redis or Valkey (`ctxlens serve --store redis://HOST:PORT/DB`),
 * through node-redis's client (`@redis/client`), which is loaded only when a store URL is given
 * (the bundles keep it outside: esbuild.js marks it external). What is kept, the keys and what a
 * store that is down or slow means for requests: store.ts.
 *
 * Every command is bounded by `timeoutMs` here (node-redis's own command timeout stops counting once
 * a command is written, so a server that stopped answering would hold requests forever). After a
 * failed or late command the store is marked down and is not waited on again until a background
 * PING succeeds (every `checkMs`; one at a time, so a stalled server gets no pile of them), so a
 * dead store costs no time per request. Messages never hold
 * the password or the URL: every message goes through `scrub`.
 */
import { readEntry } from './store';
import type { ContextStore, Lookup, RedisTarget, StoreHealth, StoredContext } from './store';

/** Milliseconds one store command may take before the store counts as down. */
export const DEFAULT_STORE_TIMEOUT_MS = 500;
/** Seconds an entry stays in the shared store. */
export const DEFAULT_STORE_TTL_S = 3600;
/** Largest entry written to the shared store, in bytes of JSON. */
export const DEFAULT_STORE_MAX_ENTRY = 1024 * 1024;
/** Milliseconds between the health PINGs of the shared store. */
export const DEFAULT_STORE_CHECK_MS = 1000;
export const DEFAULT_STORE_PREFIX = 'ctxlens:';

export interface RedisStoreOptions {
  target: RedisTarget;
  ttlSeconds?: number;
  maxEntryBytes?: number;
  timeoutMs?: number;
  checkMs?: number;
  prefix?: string;
  /** Where failures are reported (rate-limited, scrubbed of the password). */
  log?: (line: string) => void;
}

/** The part of node-redis's client the store uses. */
interface RedisClientLike {
  connect(): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options: { expiration: { type: 'EX' | 'PX'; value: number } }): Promise<unknown>;
  ping(): Promise<unknown>;
  destroy(): void;
  readonly isReady: boolean;
}

/** A shared store on Redis or Valkey (node-redis's `@redis/client`). */
export class RedisStore implements ContextStore {
  readonly kind = 'redis' as const;
  failures = 0;
  private readonly client: RedisClientLike;
  private up = false;
  private reason = 'connecting';
  readonly ttlSeconds: number;
  private readonly maxEntry: number;
  private readonly prefix: string;
  private readonly timer: NodeJS.Timeout;
  private readonly timeoutMs: number;
  private pending?: Promise<unknown>;
  private closed = false;
  private lastLog = 0;
  private readonly log: (line: string) => void;

  constructor(private readonly options: RedisStoreOptions) {
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_STORE_TTL_S;
    this.maxEntry = options.maxEntryBytes ?? DEFAULT_STORE_MAX_ENTRY;
    this.prefix = options.prefix ?? DEFAULT_STORE_PREFIX;
    this.log = options.log ?? ((line) => process.stderr.write(line + '\n'));
    const timeout = (this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS);
    const t = options.target;
    // Loaded here, not at the top: the client is a dependency of `serve --store` only, and the
    // bundles keep it outside (esbuild.js marks it external).
    const { createClient } = require('@redis/client') as { createClient(o: unknown): RedisClientLike };
    this.client = createClient({
      socket: {
        host: t.host,
        port: t.port,
        ...(t.tls ? { tls: true, servername: t.host } : {}),
        connectTimeout: Math.max(timeout, 1000),
        // Reconnects forever, backing off to once a second: the store coming back is seen within about a second.
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 10), 1000),
      },
      database: t.database,
      ...(t.username !== undefined ? { username: t.username } : {}),
      ...(t.password !== undefined ? { password: t.password } : {}),
      // While disconnected, commands fail at once instead of waiting in a queue for the store.
      disableOfflineQueue: true,
      commandOptions: { timeout },
      name: 'ctxlens-serve',
    });
    this.client.on('error', (e: unknown) => this.down(e));
    this.client.on('ready', () => void this.check());
    this.client.on('end', () => this.down('the connection ended'));
    this.client.connect().catch((e: unknown) => this.down(e));
    this.timer = setInterval(() => void this.check(), options.checkMs ?? DEFAULT_STORE_CHECK_MS);
    this.timer.unref();
  }

  /** A message without the password (nor the URL that may hold it). */
  private scrub(text: string): string {
    const p = this.options.target.password;
    let out = text;
    if (p) out = out.split(p).join('***');
    if (p && encodeURIComponent(p) !== p) out = out.split(encodeURIComponent(p)).join('***');
    return out.replace(/rediss?:\/\/[^\s'"]*/g, 'redis://…').slice(0, 300);
  }

  private down(e: unknown): void {
    const reason = this.scrub(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    const was = this.up;
    this.up = false;
    this.reason = reason;
    this.failures++;
    const now = Date.now();
    // One line when the store goes down, then at most one every 30 s while it stays down.
    if (was || now - this.lastLog > 30_000) {
      this.lastLog = now;
      this.log(`ctxlens serve: the context store at ${this.options.target.host}:${this.options.target.port} is unavailable (${reason}); lookups by context_id answer 503 until it is back`);
    }
  }

  private async check(): Promise<void> {
    // One PING at a time: while one is unanswered (a stalled server), the store stays as marked.
    if (this.pending || this.closed) return;
    try {
      if (!this.client.isReady) throw new Error('not connected');
      const p = this.client.ping();
      this.pending = p;
      const settled = () => {
        if (this.pending === p) this.pending = undefined;
      };
      p.then(settled, settled);
      await this.bounded(p, 'PING');
      if (!this.up && this.reason !== 'connecting') this.log(`ctxlens serve: the context store at ${this.options.target.host}:${this.options.target.port} is back`);
      this.up = true;
      this.reason = '';
    } catch (e) {
      if (this.up || this.reason === 'connecting') this.down(e);
      else this.reason = this.scrub(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    }
  }

  /** The command's result, or a rejection once it took longer than the store's timeout (its late reply is still read and dropped by the client). */
  private bounded<T>(p: Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${what} took longer than ${this.timeoutMs} ms`)), this.timeoutMs);
      p.then(
        (v) => {
          clearTimeout(t);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(t);
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  private key(id: string): string {
    return `${this.prefix}ctx:${id}`;
  }

  async put(id: string, entry: StoredContext): Promise<boolean> {
    if (!this.up) return false;
    const value = JSON.stringify({ v: 1, s: entry.scope, e: entry.evidence });
    if (Buffer.byteLength(value) > this.maxEntry) return false;
    try {
      await this.bounded(this.client.set(this.key(id), value, { expiration: { type: 'EX', value: this.ttlSeconds } }), 'SET');
      return true;
    } catch (e) {
      this.down(e);
      return false;
    }
  }

  async get(id: string): Promise<Lookup> {
    if (!this.up) return { unavailable: this.reason || 'the store is not connected' };
    let text: string | null;
    try {
      text = await this.bounded(this.client.get(this.key(id)), 'GET');
    } catch (e) {
      this.down(e);
      return { unavailable: this.reason };
    }
    if (text === null) return { missing: true };
    const found = readEntry(text);
    return found ? { found } : { unavailable: 'the stored entry is not one this service wrote' };
  }

  health(): StoreHealth {
    return this.up ? { kind: 'redis', status: 'up' } : { kind: 'redis', status: 'down', reason: this.reason || 'not connected' };
  }

  close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    try {
      this.client.destroy();
    } catch {
      // already closed
    }
    return Promise.resolve();
  }
}

