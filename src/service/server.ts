/**
 * `ctxlens serve`: the context-assembly service of seed 002 as a stateless node:http server over
 * the library. Routes:
 *
 *   POST /v1/context    assemble a template under --root with the request's values (context.ts)
 *   POST /v1/validate   check a model answer's citations against a trace (or a recent context_id)
 *   GET  /healthz       liveness: {"status":"ok"}, or "degraded" while the shared context store is down
 *   GET  /metrics       Prometheus text format (metrics.ts)
 *
 * Bodies are JSON, at most `maxBody` bytes (413 beyond); malformed JSON and invalid fields are 400
 * with the path of the field; errors are `{ "error": { code, message, path? } }`. The server binds
 * 127.0.0.1 unless told otherwise and reads nothing outside --root.
 *
 * Network posture (docs/security.md): every request's `Host` and `Origin` must name the bound
 * address or an allowed name (guard.ts); with a token, every route but `/healthz` needs
 * `Authorization: Bearer <token>`; connections are capped (globally and per client address; at the
 * cap the connection idle the longest is closed to admit a new one) and timed out; a body announced
 * over the limit is refused at once; the caches are bounded by
 * bytes; `drain()` stops accepting, lets answers being written flush, cuts what is still
 * unfinished after a deadline and resolves.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import * as nodePath from 'node:path';
import { VERSION } from '../lib/version';
import { toPosix } from '../node/fileHost';
import { errorReply } from './context';
import type { Reply } from './context';
import { DEFAULT_RESPONSE_CACHE, DEFAULT_RESPONSE_CACHE_BYTES, DEFAULT_REVALIDATE_MS, createAnswerer } from './answer';
import type { Answer, AnswerOptions, AnswerRoute } from './answer';
import { AnswerPool, Overloaded, WorkerFailed, WorkerLost } from './pool';
import { MemoryStore } from './store';
import type { ContextStore } from './store';
import { BearerToken, checkHostAndOrigin } from './guard';
import { redactSecrets } from '../core/text/secrets';
import { Metrics } from './metrics';

export const DEFAULT_PORT = 8710;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_BODY = 2 * 1024 * 1024;
export const DEFAULT_CACHE_SIZE = 1000;
export { DEFAULT_RESPONSE_CACHE, DEFAULT_RESPONSE_CACHE_BYTES, DEFAULT_REVALIDATE_MS } from './answer';
/** Requests waiting for a worker at most (beyond: 503 `overloaded`). */
export const DEFAULT_MAX_QUEUE = 64;
/** Milliseconds one request may run in a worker. */
export const DEFAULT_MAX_WORK_MS = 20_000;
/** Heap (old generation, MB) of each worker at least; more for larger --max-body. */
export const DEFAULT_WORKER_HEAP_MB = 1024;
/** Bytes of the `context_id` evidence cache. */
export const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_CONNECTIONS = 256;
/** Open connections of one client address at most (behind a proxy, raise it to --max-connections: every connection comes from the proxy). */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 128;
/** Milliseconds a connection answered 413 is still read (and what it sends dropped) before it is cut. */
export const LINGER_MS = 5_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
export const DEFAULT_DRAIN_MS = 10_000;

export interface ServiceOptions {
  /** Folder of the templates (default: the current folder). */
  root?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Largest accepted request body in bytes. */
  maxBody?: number;
  /** Recent responses kept for `/v1/validate` by `context_id` (0 turns the convenience off). */
  cacheSize?: number;
  /** Model used when neither the request, the template nor its config names one. */
  defaultModel?: string;
  /** Responses kept for byte-identical requests, while the template's files read the same (0 turns the cache off). */
  responseCache?: number;
  /** Milliseconds a template's files are trusted without re-reading them (an edit is seen within this). */
  revalidateMs?: number;
  /** Byte budget of the response cache. */
  responseCacheBytes?: number;
  /** Byte budget of the `context_id` evidence cache. */
  cacheBytes?: number;
  /** When set, every route but `/healthz` requires `Authorization: Bearer <token>`. */
  token?: string;
  /** More host names accepted in `Host` and `Origin` besides the bound address. */
  allowHosts?: string[];
  /**
   * Open connections at most. A new connection over the cap closes the connection idle the longest
   * (no request under way: never used, between keep-alive requests, or still sending its headers);
   * when every connection has a request under way, the new one is closed.
   */
  maxConnections?: number;
  /** Open connections of one client address at most, with the same rule among its own connections. */
  maxConnectionsPerClient?: number;
  /** Milliseconds a client has to send the request headers. */
  headersTimeoutMs?: number;
  /** Milliseconds a client has to send the whole request (headers and body). */
  requestTimeoutMs?: number;
  /** Milliseconds an idle keep-alive connection stays open (behind a proxy: above the proxy's idle timeout). */
  keepAliveTimeoutMs?: number;
  /**
   * Worker threads that parse and assemble (0: this thread does, as an embedded handler). `ctxlens
   * serve` starts one, so `/healthz` and refusals are answered while assemblies run.
   */
  workers?: number;
  /** The worker script (default: serviceWorker.js beside the bundle). */
  workerFile?: string;
  /** Requests waiting for a worker at most; more are answered 503 `overloaded`. */
  maxQueue?: number;
  /** Milliseconds one request may run in a worker before it is stopped (503 `work_limit`). */
  maxWorkMs?: number;
  /**
   * Where the `context_id` evidence is kept (store.ts): by default a per-instance LRU of
   * `cacheSize` entries and `cacheBytes` bytes; a shared store (redisStore.ts) lets any replica
   * validate any id. The service closes it when it closes.
   */
  store?: ContextStore;
}

export interface Service {
  readonly server: http.Server;
  readonly metrics: Metrics;
  /** Starts listening; resolves with the bound address. */
  listen(): Promise<{ host: string; port: number; url: string }>;
  close(): Promise<void>;
  /**
   * Graceful stop: stops accepting connections, lets responses being written flush, closes idle
   * connections, and after `deadlineMs` cuts whatever is still open (a slow body, a slow reader).
   */
  drain(deadlineMs?: number): Promise<void>;
  /** The request handler, for embedding the service in another server. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): void;
}

const ROUTES: Record<string, string> = { '/v1/context': 'POST', '/v1/validate': 'POST', '/healthz': 'GET', '/metrics': 'GET' };

class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads the body up to `max` bytes. A body over it is refused at once (413): when the headers
 * announce it, before any of it is read; otherwise as soon as the count passes the limit. The
 * caller closes such a connection with a linger (lingerClose): what the client still sends is read
 * and dropped, up to `discardMax` bytes, so that the answer is not lost to a connection reset.
 */
function readBody(req: http.IncomingMessage, max: number, discardMax: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const over = (message: string) => {
      done = true;
      chunks.length = 0;
      reject(new BodyError(413, 'payload_too_large', message));
    };
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (done) {
        // Past the discard budget, the refused client is cut.
        if (size > discardMax) req.socket.destroy();
        return;
      }
      if (size > max) return over(`the body is over the ${max}-byte limit`);
      chunks.push(c);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
    if (Number.isFinite(declared) && declared > max) over(`the body is ${declared} bytes, over the ${max}-byte limit`);
  });
}

/**
 * Closes a refused connection without losing its answer. Node ends a `connection: close` answer
 * with `socket.destroySoon()`, which closes both directions: if the client is still sending, its
 * kernel then resets the connection, and the reset can destroy the answer before the client reads
 * it. Here the write side is closed after the answer instead (the client reads the answer, then
 * the end), what the client still sends is read and dropped, and the socket is destroyed when the
 * client closes its side, after LINGER_MS, or past the discard budget (readBody).
 */
function lingerClose(socket: Socket): void {
  socket.destroySoon = function (this: Socket) {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref?.();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
  };
}

export function createService(options: ServiceOptions = {}): Service {
  const root = toPosix(nodePath.resolve(options.root ?? '.'));
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new Error(`--root ${root} is not a folder`);
  const maxBody = options.maxBody ?? DEFAULT_MAX_BODY;
  const metrics = new Metrics();
  const memory = options.store ? undefined : new MemoryStore(options.cacheSize ?? DEFAULT_CACHE_SIZE, options.cacheBytes ?? DEFAULT_CACHE_BYTES);
  const store: ContextStore = options.store ?? memory!;
  const answerOptions: AnswerOptions = {
    root,
    ...(options.defaultModel !== undefined ? { defaultModel: options.defaultModel } : {}),
    responseCache: options.responseCache ?? DEFAULT_RESPONSE_CACHE,
    responseCacheBytes: options.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES,
    revalidateMs: options.revalidateMs ?? DEFAULT_REVALIDATE_MS,
    contextCacheSize: memory?.capacity ?? 0,
    ...(store.ttlSeconds !== undefined ? { sharedStoreTtl: store.ttlSeconds } : {}),
  };
  const workers = options.workers ?? 0;
  // With workers, the answers are made in their threads (pool.ts); without, in this one.
  const pool =
    workers > 0
      ? new AnswerPool({
          file: options.workerFile ?? nodePath.join(__dirname, 'serviceWorker.js'),
          size: workers,
          answer: answerOptions,
          maxQueue: options.maxQueue ?? DEFAULT_MAX_QUEUE,
          maxWorkMs: options.maxWorkMs ?? DEFAULT_MAX_WORK_MS,
          heapMb: Math.max(DEFAULT_WORKER_HEAP_MB, Math.ceil(maxBody / (1024 * 1024)) * 256),
          evidence: (id) => store.get(id),
        })
      : undefined;
  const local = pool ? undefined : createAnswerer(answerOptions);
  metrics.gauges = () => ({ workers: pool?.size ?? 0, busy: pool?.busy ?? 0, queued: pool?.queued ?? 0, replaced: pool?.replaced ?? 0 });
  if (store.kind !== 'memory') metrics.store = () => ({ up: store.health().status === 'up', failures: store.failures });
  const token = options.token !== undefined ? new BearerToken(options.token) : undefined;
  const host = options.host ?? DEFAULT_HOST;
  const policy = { bound: host, allow: (options.allowHosts ?? []).map((h) => h.toLowerCase()) };
  let draining = false;

  /** The answer, and whether its `context_id` could not be recorded (a shared store that is down). */
  const answer = async (route: AnswerRoute, body: Buffer): Promise<{ a: Answer; unrecorded: boolean }> => {
    let a: Answer;
    if (pool) a = await pool.run(route, body);
    else {
      const first = local!.answer(route, body);
      a = 'need' in first ? first.resume(memory ? memory.lookup(first.need) : await store.get(first.need)) : first;
    }
    // Recorded before the answer goes out, so a validation sent to another replica right after it finds the id.
    const unrecorded = a.remember ? !(await store.put(a.remember.contextId, { evidence: a.remember.evidence, scope: a.remember.scope })) : false;
    if (a.assembled) metrics.assembled();
    if (a.cacheHit) metrics.cacheHit();
    return { a, unrecorded };
  };

  const send = (res: http.ServerResponse, status: number, body: string | Uint8Array, type: string, extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...extra });
    res.end(body);
  };
  const sendJson = (res: http.ServerResponse, reply: Reply, extra: Record<string, string> = {}) => send(res, reply.status, JSON.stringify(reply.body), 'application/json; charset=utf-8', extra);

  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const started = process.hrtime.bigint();
    const url = (req.url ?? '/').split('?')[0];
    const route = url in ROUTES ? url : 'other';
    let errorKind: string | undefined;
    res.on('finish', () => {
      metrics.observe(route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
      if (res.statusCode >= 400) metrics.error(errorKind ?? (res.statusCode === 503 ? 'overloaded' : res.statusCode >= 500 ? 'internal' : res.statusCode === 413 ? 'payload_too_large' : res.statusCode === 404 ? 'not_found' : 'bad_request'));
    });
    const fail = (e: unknown) => {
      // The client went away (or the request timed out) mid-body: nothing to answer, nothing to log.
      // (A request read to its end is `destroyed` too: the socket tells whether the client is there.)
      if ((res.destroyed || req.socket.destroyed) && !(e instanceof BodyError)) return void res.destroy();
      if (e instanceof BodyError) {
        // After a 413 the connection is closed (with a linger: what the client still sends is dropped).
        if (e.status === 413) lingerClose(req.socket);
        sendJson(res, errorReply(e.status, e.code, e.message), e.status === 413 ? { connection: 'close' } : {});
        return;
      }
      if (e instanceof Overloaded) return sendJson(res, errorReply(503, 'overloaded', `the service is busy (${e.message}); retry shortly`), { 'retry-after': '1' });
      if (e instanceof WorkerLost) {
        if (e.reason === 'timeout') return sendJson(res, errorReply(503, 'work_limit', `${e.message} (${options.maxWorkMs ?? DEFAULT_MAX_WORK_MS} ms); the request was stopped`));
        return sendJson(res, errorReply(500, 'internal', `${e.message}; the service replaced it`));
      }
      // A worker logged its own error (redacted) already.
      if (e instanceof WorkerFailed) return sendJson(res, errorReply(500, 'internal', 'internal error; the service logged it'));
      // The log line is redacted too: an exception's message can quote request values.
      process.stderr.write(redactSecrets(`ctxlens serve: internal error on ${req.method} ${url.slice(0, 200)}: ${(e as Error).stack ?? String(e)}`) + '\n');
      if (!res.headersSent) sendJson(res, errorReply(500, 'internal', 'internal error; the service logged it'));
      else res.destroy();
    };
    if (draining) res.shouldKeepAlive = false;
    try {
      const guard = checkHostAndOrigin({ host: req.headers.host, origin: req.headers.origin }, policy);
      if (!guard.ok) {
        req.resume();
        return sendJson(res, errorReply(guard.status, guard.code, guard.message), { connection: 'close' });
      }
      if (token && url !== '/healthz' && !token.matches(req.headers.authorization)) {
        req.resume();
        return sendJson(res, errorReply(401, 'unauthorized', 'this service requires Authorization: Bearer <token>'), { 'www-authenticate': 'Bearer realm="ctxlens"' });
      }
      const method = ROUTES[url];
      if (!method) return sendJson(res, errorReply(404, 'not_found', `no route ${url}; routes: POST /v1/context, POST /v1/validate, GET /healthz, GET /metrics`));
      if (req.method !== method && !(method === 'GET' && req.method === 'HEAD')) return sendJson(res, errorReply(405, 'method_not_allowed', `${url} takes ${method}`), { allow: method });
      if (url === '/healthz') {
        // Always 200 while the process serves: a shared store that is down degrades lookups by id
        // only, so the replica stays in its load balancer's rotation (and is not restarted).
        if (store.kind === 'memory') return send(res, 200, JSON.stringify({ status: 'ok', version: VERSION }), 'application/json; charset=utf-8');
        // /healthz needs no token: the reason (an address, an error) stays in the log.
        const h = store.health();
        return send(res, 200, JSON.stringify({ status: h.status === 'up' ? 'ok' : 'degraded', version: VERSION, store: { kind: h.kind, status: h.status } }), 'application/json; charset=utf-8');
      }
      if (url === '/metrics') return send(res, 200, metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
      const type = req.headers['content-type'];
      if (type !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
        req.resume();
        return sendJson(res, errorReply(415, 'unsupported_media_type', `send the body as application/json (got ${type})`));
      }
      readBody(req, maxBody, Math.max(8 * 1024 * 1024, 4 * maxBody))
        .then((buf) => answer(url as AnswerRoute, buf))
        .then(({ a, unrecorded }) => {
          // Only a lookup in a store that is down answers 503 from a worker (answer.ts).
          if (a.status === 503) errorKind = 'store_unavailable';
          send(res, a.status, a.payload, 'application/json; charset=utf-8', a.status === 503 ? { 'retry-after': '1' } : unrecorded ? { 'ctxlens-context-stored': 'false' } : {});
        })
        .catch(fail);
    } catch (e) {
      fail(e);
    }
  };

  // Slow clients are bounded at every stage: the headers (slowloris), the whole request (a body
  // trickled byte by byte), an idle keep-alive connection, and a socket where nothing moves (a client
  // that stops reading its answer). Behind a proxy, raise the keep-alive timeout above the proxy's
  // idle timeout, so the proxy never sends a request on a socket the server is closing.
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout);
  const server = http.createServer(
    {
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout,
      requestTimeout,
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
    },
  );
  // The caps are kept here rather than by server.maxConnections, which closes every new
  // connection at the cap: idle and slow sockets would then starve new clients.
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const perClientCap = options.maxConnectionsPerClient ?? Math.min(DEFAULT_MAX_CONNECTIONS_PER_CLIENT, maxConnections);
  // Open sockets and whether a request is under way on each (for the caps and the drain); the
  // sockets without one, in the order they became idle (a Map keeps insertion order).
  const sockets = new Map<Socket, { busy: boolean; client: string; first?: NodeJS.Timeout }>();
  const idle = new Set<Socket>();
  const perClient = new Map<string, number>();
  const connectionStats = { evicted: 0, refused: 0 };
  metrics.connections = () => ({ open: sockets.size, idle: idle.size, ...connectionStats });
  const forget = (socket: Socket) => {
    const state = sockets.get(socket);
    if (!state) return;
    clearTimeout(state.first);
    sockets.delete(socket);
    idle.delete(socket);
    const n = (perClient.get(state.client) ?? 1) - 1;
    if (n > 0) perClient.set(state.client, n);
    else perClient.delete(state.client);
  };
  /** Closes the socket idle the longest among those `which` accepts (never `except`); false when there is none. */
  const evictIdle = (except: Socket, which?: string): boolean => {
    for (const s of idle) {
      if (s === except || (which !== undefined && sockets.get(s)?.client !== which)) continue;
      forget(s);
      s.destroy();
      connectionStats.evicted++;
      return true;
    }
    return false;
  };
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    const state: { busy: boolean; client: string; first?: NodeJS.Timeout } = { busy: false, client };
    sockets.set(socket, state);
    idle.add(socket);
    perClient.set(client, (perClient.get(client) ?? 0) + 1);
    socket.on('close', () => forget(socket));
    if ((perClient.get(client)! > perClientCap && !evictIdle(socket, client)) || (sockets.size > maxConnections && !evictIdle(socket))) {
      // Every other connection has a request under way: this one is refused.
      forget(socket);
      connectionStats.refused++;
      socket.destroy();
      return;
    }
    // A connection that never sends a request holds a slot of the cap: Node's headers timeout
    // starts with the first byte, so a silent connection is closed here.
    state.first = setTimeout(() => socket.destroy(), headersTimeout);
    state.first.unref?.();
    socket.setTimeout(requestTimeout + headersTimeout, () => socket.destroy());
    if (draining) socket.end();
  });
  const track = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    const state = sockets.get(socket);
    if (!state) return;
    clearTimeout(state.first);
    state.busy = true;
    idle.delete(socket);
    res.on('finish', () => {
      state.busy = false;
      // Idle again, the newest: the last to be closed at the cap.
      if (!socket.destroyed && sockets.has(socket)) idle.add(socket);
      // An idle socket of a draining server is closed once its answer is handed over; end()
      // (unlike destroy) sends what is still buffered first.
      if (draining) setImmediate(() => socket.end());
    });
  };
  // The socket is marked busy before the request is handled, so what a handler reports (metrics) counts it.
  server.on('request', track);
  server.on('request', handle);
  // `Expect: 100-continue`: a body announced over the limit is refused without asking for it.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    track(req, res);
    const declared = Number(req.headers['content-length']);
    if (!(Number.isFinite(declared) && declared > maxBody)) res.writeContinue();
    handle(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // Malformed requests and timeouts: answer when the socket can still carry one, never echo the request.
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });
  let drained: Promise<void> | undefined;
  const drain = (deadlineMs = DEFAULT_DRAIN_MS): Promise<void> =>
    (drained ??= new Promise<void>((resolve) => {
      draining = true;
      // net.Server's close stops accepting without http.Server's closing of "idle" connections,
      // which destroys sockets whose last answer is still in their write buffer.
      let listening = true;
      const finished = () => {
        if (listening || sockets.size) return;
        clearTimeout(timer);
        void (pool?.close() ?? Promise.resolve()).then(() => store.close()).then(() => resolve());
      };
      net.Server.prototype.close.call(server, () => {
        listening = false;
        finished();
      });
      for (const [socket, state] of sockets) {
        socket.once('close', finished);
        if (!state.busy) socket.end();
      }
      const timer = setTimeout(() => {
        for (const socket of sockets.keys()) socket.destroy();
      }, deadlineMs);
      timer.unref?.();
      finished();
    }));
  return {
    server,
    metrics,
    handle,
    drain,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? DEFAULT_PORT, host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const shown = a.family === 'IPv6' || a.address.includes(':') ? `[${a.address}]` : a.address;
          resolve({ host: a.address, port: a.port, url: `http://${shown}:${a.port}` });
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => void (pool?.close() ?? Promise.resolve()).then(() => store.close()).then(() => resolve()));
        server.closeIdleConnections?.();
      }),
  };
}
