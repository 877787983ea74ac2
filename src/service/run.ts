/**
 * The command line of the service, shared by `ctxlens serve` (src/cli/serve.ts) and
 * `node dist/service.js`: starts the context-assembly service over the templates under --root.
 * The first line on stdout is `listening on http://HOST:PORT` (with the bound port when --port 0
 * asked for a free one), so scripts and tests can read where it is. SIGINT and SIGTERM drain the
 * server (stop accepting, let answers being written flush, cut what is unfinished after
 * --drain-timeout) and end the process with 0.
 *
 * A bearer token comes from --token-file (the file's first line) or the CTXLENS_TOKEN environment
 * variable, never from a flag (flags show in `ps`). Binding an address other than loopback without
 * a token is refused.
 *
 * `--store redis://HOST:PORT/DB` (or $CTXLENS_STORE_URL) keeps the `context_id` evidence in a
 * shared Redis/Valkey (redisStore.ts) so that every replica validates every id. Its password comes
 * from --store-password-file or $CTXLENS_STORE_PASSWORD (or inside $CTXLENS_STORE_URL), never from
 * the command line: a URL with a password given as a flag is refused. Neither is ever printed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CACHE_SIZE, DEFAULT_DRAIN_MS, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_HOST, DEFAULT_KEEP_ALIVE_TIMEOUT_MS, DEFAULT_MAX_BODY, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_MAX_QUEUE, DEFAULT_MAX_WORK_MS, DEFAULT_PORT, DEFAULT_RESPONSE_CACHE, createService } from './server';
import { MIN_TOKEN_LENGTH, isLoopback } from './guard';
import { parseStoreUrl } from './store';
import type { ContextStore } from './store';
import { DEFAULT_STORE_MAX_ENTRY, DEFAULT_STORE_TIMEOUT_MS, DEFAULT_STORE_TTL_S, RedisStore } from './redisStore';

/** Worker threads of `ctxlens serve` by default: one, so the serving thread stays free for I/O. */
export const DEFAULT_WORKERS = 1;

/** The environment variable holding the bearer token. */
export const TOKEN_ENV = 'CTXLENS_TOKEN';
/** The environment variables of the shared store: its URL (which may hold the password) and its password. */
export const STORE_URL_ENV = 'CTXLENS_STORE_URL';
export const STORE_PASSWORD_ENV = 'CTXLENS_STORE_PASSWORD';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
  env?: Record<string, string | undefined>;
}

export const SERVE_USAGE = `ctxlens serve [--root DIR] [--host 127.0.0.1] [--port ${DEFAULT_PORT}] [--max-body 2mb] [--cache-size ${DEFAULT_CACHE_SIZE}] [--response-cache ${DEFAULT_RESPONSE_CACHE}] [--model M]
       [--token-file FILE] [--allow-host NAME]... [--max-connections ${DEFAULT_MAX_CONNECTIONS}] [--max-connections-per-client ${DEFAULT_MAX_CONNECTIONS_PER_CLIENT}] [--drain-timeout ${DEFAULT_DRAIN_MS / 1000}s]
       [--headers-timeout ${DEFAULT_HEADERS_TIMEOUT_MS / 1000}s] [--keep-alive-timeout ${DEFAULT_KEEP_ALIVE_TIMEOUT_MS / 1000}s]
       [--workers ${DEFAULT_WORKERS}] [--max-queue ${DEFAULT_MAX_QUEUE}] [--work-limit ${DEFAULT_MAX_WORK_MS / 1000}s]
       [--store redis://HOST:PORT/DB] [--store-password-file FILE] [--store-ttl ${DEFAULT_STORE_TTL_S}s] [--store-timeout ${DEFAULT_STORE_TIMEOUT_MS}ms] [--store-max-entry 1mb]
  The token may also come from $${TOKEN_ENV}; it is required for an address other than loopback (--host).
  With a shared Redis/Valkey (--store), any replica validates any context_id; the URL may also come from
  $${STORE_URL_ENV}, the password from the file or $${STORE_PASSWORD_ENV} (never from the command line).`;

/**
 * Every option of `ctxlens serve`, once: what its parser accepts and the line its `--help` prints
 * (src/cli/help.ts), so the help lists every option.
 */
export const SERVE_OPTIONS = {
  root: { type: 'string', arg: 'DIR', help: 'the folder of the templates the service assembles (default the current folder)' },
  host: { type: 'string', arg: 'ADDRESS', help: `the address to listen on (default ${DEFAULT_HOST}; an address other than loopback needs a token)` },
  port: { type: 'string', arg: 'N', help: `the port (default ${DEFAULT_PORT}; 0 picks a free one)` },
  'max-body': { type: 'string', arg: 'SIZE', help: 'the largest request body, e.g. 512kb or 2mb (default 2mb; a larger one is 413 as soon as its headers say so)' },
  'cache-size': { type: 'string', arg: 'N', help: `context_id evidence entries kept in memory without --store (default ${DEFAULT_CACHE_SIZE}; 0 turns it off)` },
  'response-cache': { type: 'string', arg: 'N', help: `answers kept for identical requests (default ${DEFAULT_RESPONSE_CACHE}; 0 turns it off)` },
  model: { type: 'string', arg: 'NAME', help: "the model for templates and configs that name none" },
  'token-file': { type: 'string', arg: 'FILE', help: `the bearer token, the file's first line (or $${TOKEN_ENV})` },
  'allow-host': { type: 'string', multiple: true, arg: 'NAME', help: 'a Host header to accept besides the listening address (repeatable), e.g. the name a proxy forwards' },
  'max-connections': { type: 'string', arg: 'N', help: `open connections at most (default ${DEFAULT_MAX_CONNECTIONS}; at the cap the one idle the longest is closed)` },
  'max-connections-per-client': { type: 'string', arg: 'N', help: `open connections per client address (default ${DEFAULT_MAX_CONNECTIONS_PER_CLIENT})` },
  'headers-timeout': { type: 'string', arg: 'DURATION', help: `time a client has to send its headers (default ${DEFAULT_HEADERS_TIMEOUT_MS / 1000}s)` },
  'keep-alive-timeout': { type: 'string', arg: 'DURATION', help: `time an idle keep-alive connection stays open (default ${DEFAULT_KEEP_ALIVE_TIMEOUT_MS / 1000}s)` },
  'drain-timeout': { type: 'string', arg: 'DURATION', help: `time requests under way get to finish after SIGTERM (default ${DEFAULT_DRAIN_MS / 1000}s)` },
  workers: { type: 'string', arg: 'N', help: `assembly worker threads (default ${DEFAULT_WORKERS}; 0: the serving thread assembles)` },
  'max-queue': { type: 'string', arg: 'N', help: `requests waiting for a worker at most (default ${DEFAULT_MAX_QUEUE}; beyond it 503 overloaded)` },
  'work-limit': { type: 'string', arg: 'DURATION', help: `time one assembly may take before its worker is replaced (default ${DEFAULT_MAX_WORK_MS / 1000}s)` },
  store: { type: 'string', arg: 'redis://HOST:PORT/DB', help: `keep context_id evidence in a shared Redis or Valkey, so any replica validates any id (or $${STORE_URL_ENV})` },
  'store-password-file': { type: 'string', arg: 'FILE', help: `the store's password, the file's first line (or $${STORE_PASSWORD_ENV}; never in the URL)` },
  'store-ttl': { type: 'string', arg: 'DURATION', help: `how long a stored context_id is kept (default ${DEFAULT_STORE_TTL_S}s)` },
  'store-timeout': { type: 'string', arg: 'DURATION', help: `the longest wait for the store before a lookup answers 503 (default ${DEFAULT_STORE_TIMEOUT_MS}ms)` },
  'store-max-entry': { type: 'string', arg: 'SIZE', help: 'the largest entry written to the store (default 1mb)' },
} as const satisfies Record<string, { type: 'string' | 'boolean'; multiple?: boolean; arg?: string; help: string }>;

/** SERVE_OPTIONS as node's parseArgs takes them. */
function serveArgOptions(): Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> {
  const out: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const [name, o] of Object.entries(SERVE_OPTIONS)) out[name] = { type: o.type, ...('multiple' in o ? { multiple: true } : {}) };
  return out;
}

/** `2097152`, `512kb`, `2mb` as bytes. */
export function parseSize(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|k|kib|mb|m|mib)?$/i.exec(s.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? 'b').toLowerCase();
  const mult = unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 * 1024 : 1;
  const n = Math.floor(Number(m[1]) * mult);
  return n > 0 ? n : undefined;
}

function usage(io: Io, message: string): number {
  io.err(`ctxlens serve: ${message}\n\nUsage: ${SERVE_USAGE}\n`);
  return 2;
}

/** `10s`, `500ms`, `2000` (milliseconds), `30m`, `1h` as milliseconds. */
export function parseDuration(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(s.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? 'ms').toLowerCase();
  const n = Math.round(Number(m[1]) * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1));
  return n >= 0 ? n : undefined;
}

/** Starts the service; returns 0 once listening is under way, 2 on a usage error. */
export function serveMain(args: string[], io: Io, opts: { signals?: boolean } = { signals: true }): number {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    values = parseArgs({
      args,
      allowPositionals: false,
      options: serveArgOptions(),
    }).values as Record<string, string | boolean | string[] | undefined>;
  } catch (e) {
    return usage(io, (e as Error).message);
  }
  const root = path.resolve(io.cwd, (values.root as string | undefined) ?? '.');
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return usage(io, `--root ${root} is not a folder`);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return usage(io, '--port takes a port number (0 picks a free one)');
  const maxBody = values['max-body'] === undefined ? DEFAULT_MAX_BODY : parseSize(values['max-body'] as string);
  if (maxBody === undefined) return usage(io, '--max-body takes a size such as 2097152, 512kb or 2mb');
  const cacheSize = values['cache-size'] === undefined ? DEFAULT_CACHE_SIZE : Number(values['cache-size']);
  if (!Number.isInteger(cacheSize) || cacheSize < 0) return usage(io, '--cache-size takes a whole number (0 turns the context_id cache off)');
  const responseCache = values['response-cache'] === undefined ? DEFAULT_RESPONSE_CACHE : Number(values['response-cache']);
  if (!Number.isInteger(responseCache) || responseCache < 0) return usage(io, '--response-cache takes a whole number (0 turns the response cache off)');
  const maxConnections = values['max-connections'] === undefined ? DEFAULT_MAX_CONNECTIONS : Number(values['max-connections']);
  if (!Number.isInteger(maxConnections) || maxConnections < 1) return usage(io, '--max-connections takes a whole number of at least 1');
  const perClient = values['max-connections-per-client'] === undefined ? Math.min(DEFAULT_MAX_CONNECTIONS_PER_CLIENT, maxConnections) : Number(values['max-connections-per-client']);
  if (!Number.isInteger(perClient) || perClient < 1) return usage(io, '--max-connections-per-client takes a whole number of at least 1 (behind a proxy: --max-connections)');
  const headersTimeoutMs = values['headers-timeout'] === undefined ? DEFAULT_HEADERS_TIMEOUT_MS : parseDuration(values['headers-timeout'] as string);
  if (headersTimeoutMs === undefined || headersTimeoutMs < 1) return usage(io, '--headers-timeout takes a duration such as 10s or 500ms');
  const keepAliveTimeoutMs = values['keep-alive-timeout'] === undefined ? DEFAULT_KEEP_ALIVE_TIMEOUT_MS : parseDuration(values['keep-alive-timeout'] as string);
  if (keepAliveTimeoutMs === undefined || keepAliveTimeoutMs < 1) return usage(io, '--keep-alive-timeout takes a duration such as 5s (behind a proxy: above its idle timeout)');
  const drainMs = values['drain-timeout'] === undefined ? DEFAULT_DRAIN_MS : parseDuration(values['drain-timeout'] as string);
  if (drainMs === undefined) return usage(io, '--drain-timeout takes a duration such as 10s or 500ms');
  const workers = values.workers === undefined ? DEFAULT_WORKERS : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 0 || workers > 64) return usage(io, '--workers takes a whole number from 0 to 64 (0 assembles in the serving thread)');
  const maxQueue = values['max-queue'] === undefined ? DEFAULT_MAX_QUEUE : Number(values['max-queue']);
  if (!Number.isInteger(maxQueue) || maxQueue < 0) return usage(io, '--max-queue takes a whole number (requests waiting for a worker; more are answered 503)');
  const maxWorkMs = values['work-limit'] === undefined ? DEFAULT_MAX_WORK_MS : parseDuration(values['work-limit'] as string);
  if (maxWorkMs === undefined || maxWorkMs < 1) return usage(io, '--work-limit takes a duration such as 20s or 500ms');
  const host = (values.host as string | undefined) ?? DEFAULT_HOST;
  const allowHosts = (values['allow-host'] as string[] | undefined) ?? [];
  if (allowHosts.some((h) => !/^[A-Za-z0-9.\-:[\]]{1,253}$/.test(h))) return usage(io, '--allow-host takes a host name or address (no scheme, port or path)');

  let token: string | undefined;
  const tokenFile = values['token-file'] as string | undefined;
  if (tokenFile !== undefined) {
    try {
      token = (fs.readFileSync(path.resolve(io.cwd, tokenFile), 'utf8').split(/\r?\n/)[0] ?? '').trim();
    } catch {
      return usage(io, `--token-file ${tokenFile} cannot be read`);
    }
  } else {
    const fromEnv = (io.env ?? process.env)[TOKEN_ENV];
    if (fromEnv !== undefined && fromEnv.trim() !== '') token = fromEnv.trim();
  }
  // The token's value never appears in a message: only its length is mentioned.
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH) return usage(io, `the token is ${token.length} characters long; give at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`);
  if (!isLoopback(host) && token === undefined) return usage(io, `--host ${host} is reachable from other machines; give a bearer token with --token-file FILE or $${TOKEN_ENV} (or bind 127.0.0.1)`);

  const made = makeStore(values, io);
  if (!made.ok) return usage(io, made.message);
  const store = made.store;

  const service = createService({ root, host, port, maxBody, cacheSize, responseCache, defaultModel: values.model as string | undefined, allowHosts, maxConnections, maxConnectionsPerClient: perClient, headersTimeoutMs, keepAliveTimeoutMs, workers, maxQueue, maxWorkMs, ...(token !== undefined ? { token } : {}), ...(store ? { store } : {}) });
  service
    .listen()
    .then((a) => {
      io.out(`listening on ${a.url}\n`);
      io.err(`ctxlens serve: templates under ${root}; POST /v1/context, POST /v1/validate, GET /healthz, GET /metrics${token !== undefined ? '; bearer token required (except /healthz)' : ''}${store ? `; context_id store: redis at ${made.where}` : ''}\n`);
    })
    .catch((e: NodeJS.ErrnoException) => {
      io.err(`ctxlens serve: cannot listen: ${e.code === 'EADDRINUSE' ? `port ${port} is in use` : e.message}\n`);
      process.exitCode = 2;
    });
  if (opts.signals !== false) {
    const stop = () => {
      void service.drain(drainMs).then(() => process.exit(process.exitCode ?? 0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  return 0;
}

/**
 * The shared store of --store (or $CTXLENS_STORE_URL), or none (the per-instance default). The
 * messages name the host and port at most, never the URL or the password.
 */
function makeStore(values: Record<string, string | boolean | string[] | undefined>, io: Io): { ok: true; store?: ContextStore; where?: string } | { ok: false; message: string } {
  const env = io.env ?? process.env;
  const flag = values.store as string | undefined;
  const fromEnv = env[STORE_URL_ENV]?.trim() ? env[STORE_URL_ENV]!.trim() : undefined;
  const text = flag ?? fromEnv;
  const storeFlags = ['store-password-file', 'store-ttl', 'store-timeout', 'store-max-entry'].filter((f) => values[f] !== undefined);
  if (text === undefined) return storeFlags.length ? { ok: false, message: `--${storeFlags[0]} needs --store redis://HOST:PORT/DB (or $${STORE_URL_ENV})` } : { ok: true };
  const parsed = parseStoreUrl(text, flag === undefined);
  if (!parsed.ok) return { ok: false, message: `--store: ${parsed.message}` };
  const target = parsed.target;
  const file = values['store-password-file'] as string | undefined;
  if (file !== undefined) {
    try {
      target.password = (fs.readFileSync(path.resolve(io.cwd, file), 'utf8').split(/\r?\n/)[0] ?? '').trim();
    } catch {
      return { ok: false, message: `--store-password-file ${file} cannot be read` };
    }
    if (!target.password) return { ok: false, message: `--store-password-file ${file} is empty` };
  } else if (env[STORE_PASSWORD_ENV]?.trim()) target.password = env[STORE_PASSWORD_ENV]!.trim();
  const ttl = values['store-ttl'] === undefined ? DEFAULT_STORE_TTL_S * 1000 : parseDuration(values['store-ttl'] as string);
  if (ttl === undefined || ttl < 1000) return { ok: false, message: '--store-ttl takes a duration of at least 1s, such as 3600s, 30m or 1h' };
  const timeout = values['store-timeout'] === undefined ? DEFAULT_STORE_TIMEOUT_MS : parseDuration(values['store-timeout'] as string);
  if (timeout === undefined || timeout < 1) return { ok: false, message: '--store-timeout takes a duration such as 500ms or 2s' };
  const maxEntry = values['store-max-entry'] === undefined ? DEFAULT_STORE_MAX_ENTRY : parseSize(values['store-max-entry'] as string);
  if (maxEntry === undefined) return { ok: false, message: '--store-max-entry takes a size such as 1mb or 256kb' };
  const where = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}/${target.database}`;
  try {
    return { ok: true, where, store: new RedisStore({ target, ttlSeconds: Math.round(ttl / 1000), timeoutMs: timeout, maxEntryBytes: maxEntry, log: (line) => io.err(line + '\n') }) };
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND';
    return { ok: false, message: missing ? '--store needs the Redis client @redis/client, a dependency of context-lens: reinstall the package' : `--store: the Redis client could not start (${(e as Error).name})` };
  }
}
